import t from 'tap';
import { applyRecord } from '../../../src/daemon/state/records.js';
import { applyStart } from '../../helpers/state.js';
import { executionCopy, shareParsedStrings } from '../../../src/daemon/state/object-shapes.js';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import { initialState, type Execution, type WfxState } from '../../../src/daemon/state/state.js';

/** A copy of `inst` put in its place, as a committed step's draft puts one. */
function putCopy(state: WfxState, inst: Execution): Execution {
  const copy = executionCopy(inst);
  ExecutionTable.of(state).put(copy);
  return copy;
}

t.test('a copy put in its place is the same execution, in new objects, in its place', async (t) => {
  const state = initialState();
  const at = '2026-11-21T10:00:00.000Z';
  applyStart(state, 'e1', at, { variables: { a: { deep: 1 } } });
  applyRecord(state, { type: 'node.entered', instanceId: 'e1', nodeInstanceId: 'n1', nodeId: 'sub', at });
  applyStart(state, 'c1', at, { parentInstanceId: 'e1', parentNodeInstanceId: 'n1' });
  const before = state.instances.e1!;
  const json = JSON.stringify(state);

  const copy = putCopy(state, before);
  t.equal(state.instances.e1, copy, 'the copy is the live execution now');
  t.equal(JSON.stringify(state), json, 'the state is the same, value for value, keys in their order');
  t.not(copy, before);
  for (const key of ['nodes', 'logs', 'variables', 'joins'] as const) t.not(copy[key], before[key], `its own ${key}`);
  t.not(copy.nodes.n1, before.nodes.n1, 'its own node instances');
  t.not(copy.nodes.n1!.children, before.nodes.n1!.children, "its own list of a node's children");
  t.equal(copy.variables.a, before.variables.a, 'what they hold is shared: it is never changed in place');

  // Records applied now change the copy only: the objects it replaced stay as they were.
  applyRecord(state, { type: 'node.completed', instanceId: 'e1', nodeInstanceId: 'n1', at, variables: { b: 2 } });
  t.equal(copy.nodes.n1!.statusCd, 2);
  t.same(copy.variables, { a: { deep: 1 }, b: 2 });
  t.equal(before.nodes.n1!.statusCd, 0, 'the replaced node instance is untouched');
  t.same(before.variables, { a: { deep: 1 } }, 'the replaced variables too');
  t.equal(before.logs.length + 1, copy.logs.length, 'the log line went to the copy');
});

/** Executions of two flows whose names, versions, times and logs agree in places and differ in others. */
function stateWithExecutions(): WfxState {
  const state = initialState();
  const start = (id: string, processId: string, processName: string, processVersion: string, at: string) =>
    applyStart(state, id, at, { processId, processName, processVersion });
  const node = (id: string, n: string, nodeId: string, at: string, completedAt: string | null) => {
    applyRecord(state, { type: 'node.entered', instanceId: id, nodeInstanceId: n, nodeId, at });
    if (completedAt !== null)
      applyRecord(state, { type: 'node.completed', instanceId: id, nodeInstanceId: n, at: completedAt });
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
  applyRecord(state, {
    type: 'instance.logged',
    instanceId: 'e3',
    entry: {
      nodeId: 'begin',
      nodeName: 'begin',
      nodeType: 'startEvent',
      level: 'WARN',
      message: 'a line of its own',
      timestamp: t1,
    },
  });
  start('e4', 'flow-a', 'Approve an order', '2', t0);
  return state;
}

t.test(
  'shareParsedStrings changes no value of a parsed state, whatever agrees or differs between executions',
  async (t) => {
    // As a daemon loads it: parsed from JSON, every string its own copy.
    const json = JSON.stringify(stateWithExecutions());
    const state = JSON.parse(json) as WfxState;
    let prev: Execution | null = null;
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
  },
);
