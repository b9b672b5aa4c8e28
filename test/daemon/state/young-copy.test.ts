import t from 'tap';
import { applyRecord, startedInstance } from '../../../src/daemon/state/records.js';
import { initialState, youngCopy } from '../../../src/daemon/state/state.js';

t.test('youngCopy puts the same execution, in new objects, in its place', async (t) => {
  const state = initialState();
  const at = '2026-11-21T10:00:00.000Z';
  applyRecord(state, { type: 'instance.started', instance: startedInstance({ processId: 'p', processName: 'P', processVersion: '1', organization: 'default', environment: 'PRODUCTION', correlationKey: null, parentInstanceId: null, variables: { a: { deep: 1 } } }, 'e1', at) });
  applyRecord(state, { type: 'node.entered', instanceId: 'e1', nodeInstanceId: 'n1', nodeId: 'sub', at });
  applyRecord(state, { type: 'instance.started', instance: startedInstance({ processId: 'p', processName: 'P', processVersion: '1', organization: 'default', environment: 'PRODUCTION', correlationKey: null, parentInstanceId: 'e1', parentNodeInstanceId: 'n1', variables: {} }, 'c1', at) });
  const before = state.instances.e1!;
  const json = JSON.stringify(state);

  const copy = youngCopy(state, before);
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
