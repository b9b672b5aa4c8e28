import t from 'tap';
import { applyRecord, startedInstance } from '../../../src/daemon/state/records.js';
import { initialState, liveInstances, youngCopy } from '../../../src/daemon/state/state.js';

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

t.test('an archived execution leaves a tombstone; the dictionary is rebuilt once they outnumber the live ones', async (t) => {
  const state = initialState();
  const at = '2026-11-21T10:00:00.000Z';
  const start = (id: string) =>
    applyRecord(state, { type: 'instance.started', instance: startedInstance({ processId: 'p', processName: 'P', processVersion: '1', organization: 'default', environment: 'PRODUCTION', correlationKey: null, parentInstanceId: null, variables: {} }, id, at) });
  for (let i = 0; i < 3; i++) start(`keep${i}`);
  for (let i = 0; i < 10_000; i++) start(`e${i}`);
  const first = state.instances;
  for (let i = 0; i < 9_999; i++) applyRecord(state, { type: 'instance.archived', instanceId: `e${i}` });
  t.equal(state.instances, first, 'not rebuilt yet: 9,999 tombstones');
  t.ok('e0' in state.instances && state.instances.e0 === undefined, 'an archived execution is a tombstone');
  t.same(liveInstances(state).map((i) => i.processInstanceId), ['keep0', 'keep1', 'keep2', 'e9999'], 'listing skips tombstones, in order');
  t.notOk(JSON.stringify(state).includes('"e0"'), 'JSON leaves them out');
  applyRecord(state, { type: 'instance.archived', instanceId: 'e0' }); // archived again (recovery may): no double count
  t.equal(state.instances, first);

  applyRecord(state, { type: 'instance.archived', instanceId: 'e9999' });
  // The rebuild starts at 10,000 tombstones, more than the live ones, and visits a few keys per
  // archived execution (instance-index.test.ts): the archives that follow finish it.
  for (let i = 0; state.instances === first && i < 1_000; i++) {
    start(`more${i}`);
    applyRecord(state, { type: 'instance.archived', instanceId: `more${i}` });
  }
  t.not(state.instances, first, 'rebuilt');
  t.same(
    Object.keys(state.instances).filter((k) => state.instances[k] !== undefined),
    ['keep0', 'keep1', 'keep2'],
    'the live ones, in order',
  );
  t.notOk('e0' in state.instances, 'without the tombstones it started with');

  start('later'); // counts go on in the new dictionary
  applyRecord(state, { type: 'instance.archived', instanceId: 'later' });
  t.ok('later' in state.instances, 'a tombstone again, far from the next rebuild');
});
