import t from 'tap';
import { applyRecord, startedInstance } from '../../../src/daemon/state/records.js';
import { initialState, shareParsedStrings, type Instance, type WfxState } from '../../../src/daemon/state/state.js';

/** Executions of two flows whose names, versions, times and logs agree in places and differ in others. */
function stateWithExecutions(): WfxState {
  const state = initialState();
  const start = (id: string, processId: string, processName: string, processVersion: string, at: string) =>
    applyRecord(state, {
      type: 'instance.started',
      instance: startedInstance({ processId, processName, processVersion, organization: 'default', environment: 'PRODUCTION', correlationKey: null, parentInstanceId: null, variables: {} }, id, at),
    });
  const node = (id: string, n: string, nodeId: string, at: string, completedAt: string | null) => {
    applyRecord(state, { type: 'node.entered', instanceId: id, nodeInstanceId: n, nodeId, at });
    if (completedAt !== null) applyRecord(state, { type: 'node.completed', instanceId: id, nodeInstanceId: n, at: completedAt });
  };
  const t0 = '2026-11-22T10:00:00.000Z';
  const t1 = '2026-11-22T10:00:01.500Z';
  start('e1', 'flow-a', 'Approve an order', '1', t0);
  node('e1', 'n1', 'start', t0, t0);
  node('e1', 'n2', 'ask', t0, null);
  start('e2', 'flow-a', 'Approve an order', '1', t0);
  node('e2', 'n1', 'start', t0, t1); // ends later: its next times differ from its first
  node('e2', 'n2', 'ask', t1, null);
  start('e3', 'flow-b', 'Another flow', '2', t1);
  node('e3', 'n1', 'begin', t1, t1);
  applyRecord(state, { type: 'instance.logged', instanceId: 'e3', entry: { nodeId: 'begin', nodeName: 'begin', nodeType: 'startEvent', level: 'WARN', message: 'a line of its own', timestamp: t1 } });
  start('e4', 'flow-a', 'Approve an order', '2', t0);
  return state;
}

t.test('shareParsedStrings changes no value of a parsed state, whatever agrees or differs between executions', async (t) => {
  // As a daemon loads it: parsed from JSON, every string its own copy.
  const json = JSON.stringify(stateWithExecutions());
  const state = JSON.parse(json) as WfxState;
  let prev: Instance | null = null;
  for (const id in state.instances) {
    const inst = state.instances[id]!;
    shareParsedStrings(inst, id, prev);
    prev = inst;
  }
  t.equal(JSON.stringify(state), json, 'the same state, value for value, keys in their order');
  t.same(
    Object.values(state.instances).map((i) => [i!.processId, i!.processName, i!.processVersion]),
    [
      ['flow-a', 'Approve an order', '1'],
      ['flow-a', 'Approve an order', '1'],
      ['flow-b', 'Another flow', '2'],
      ['flow-a', 'Approve an order', '2'],
    ],
  );
  t.same(
    Object.values(state.instances.e2!.nodes).map((n) => [n.startTime, n.endTime]),
    [
      ['2026-11-22T10:00:00.000Z', '2026-11-22T10:00:01.500Z'],
      ['2026-11-22T10:00:01.500Z', null],
    ],
  );
  for (const id in state.instances) t.equal(state.instances[id]!.processInstanceId, id);
});
