import t from 'tap';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import { STATUS } from '../../../src/daemon/state/state.js';
import { engineHarness } from '../../helpers/engine.js';

const WAITS = `processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('a log stream counts no line of an execution whose first step is not durable yet', async (t) => {
  const h = await engineHarness(t);
  const processId = await h.publish(WAITS);
  const before = new Set(ExecutionTable.of(h.store.state).ids());
  // The step is applied at once and journaled after: look at it before the write is durable.
  const durable = h.engine.start({ processId, organization: 'default', data: {}, correlationKey: null });
  const id = ExecutionTable.of(h.store.state)
    .ids()
    .find((x) => !before.has(x))!;
  const pending = h.store.state.instances[id]!;
  t.ok(
    Object.values(pending.nodes).some((n) => n.statusCd === STATUS.WAITING),
    'the step is applied in memory',
  );
  t.ok(pending.logs.length > 0);
  t.equal(h.engine.streamedLogCount(pending), 0, 'none of its lines is durable yet');
  await durable;
  const inst = h.store.state.instances[id]!;
  t.equal(h.engine.streamedLogCount(inst), inst.logs.length, 'every line once the step is durable');
});
