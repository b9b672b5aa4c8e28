import t from 'tap';
import { STATE } from '../../../src/daemon/state/state.js';
import { execution } from '../../../src/daemon/state/executions.js';
import { WAITS_FLOW as FLOW } from '../../helpers/cold.js';
import { engineHarness } from '../../helpers/engine.js';

// Trees at rest taken off the resident state (test/helpers/cold.ts) are read back whole when
// a step or a read names them: an answer, a message, a timer, a child's parent; the engine
// behaves as if they had never left (decision 068, steps 3 and 7).

t.test('an execution evicted at each rest is read back for an answer, a message, a timer and its child', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: true });
  const cold = h.cold!;
  const pid = await h.publish(FLOW);
  const id = (await h.start(pid, {}, { correlationKey: 'o-1' })).processInstanceId;
  const gone = () => execution(h.store.state, id) === undefined;

  await h.rest();
  t.ok(gone(), 'at rest: evicted');
  await h.engine.submitTask({
    organization: null,
    processInstanceId: id,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'x' },
  });
  t.equal((await h.get(id)).variables.inputValue, 'x', 'the answer reached it');

  await h.rest();
  t.ok(gone(), 'evicted again');
  const res = await h.engine.publishEvent({
    organization: 'default',
    eventType: 'paid',
    correlationKey: 'o-1',
    data: {},
  });
  t.equal(res.status, 'resumed', 'the message found it through the subscription index');
  await h.rest();
  t.ok(gone(), 'waiting on its timer, evicted');
  h.advance(60 * 60 * 1000 + 1);
  const child = await h.waitFor((e) => e.type === 'PROCESS_STARTED' && e.processInstanceId !== id);
  const childId = child.processInstanceId;
  await h.rest();
  t.ok(gone() && execution(h.store.state, childId) === undefined, 'parent and child evicted together');
  await h.engine.submitTask({
    organization: null,
    processInstanceId: childId,
    nodeId: 'wait',
    action: 'COMPLETE',
    data: { inputValue: 'y' },
  });
  const parent = await h.get(id);
  t.equal(parent.stateCd, STATE.COMPLETED, "the child's end completed the parent, read back with it");
  t.ok(cold.evictions >= 5 && cold.loads >= 5, `evicted ${cold.evictions}, read back ${cold.loads}`);
});
