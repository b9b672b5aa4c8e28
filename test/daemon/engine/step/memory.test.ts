// memoryAction, decided by the step in memory: what each action reads and writes, its failures,
// memory per organization. What the engine makes durable of memory (the journal, reopening, the
// sweep's batches) is in ../memory.test.ts.
import t from 'tap';
import { STATE } from '../../../../src/daemon/state/state.js';
import { FlowStep } from '../../../helpers/step-flows.js';

const OPS = `processId: AUTO
name: Memory ops
nodes:
  start: { type: startEvent, next: put }
  put: { type: memoryAction, action: store, namespace: values, key: "{k}", value: "{v}", next: add }
  add:
    type: memoryAction
    action: append
    namespace: lists
    key: "{k}"
    value: { n: "{item}" }
    maxItems: 3
    next: get
  get: { type: memoryAction, action: retrieve, namespace: values, key: "{k}", resultVariable: got, next: win }
  win: { type: memoryAction, action: retrieve, namespace: lists, key: "{k}", window: 2, resultVariable: last2, next: miss }
  miss:
    type: memoryAction
    action: retrieve
    namespace: values
    key: nothing-here
    default: { fallback: "{k}" }
    resultVariable: missed
    next: none
  none: { type: memoryAction, action: retrieve, namespace: values, key: none-either, resultVariable: nothing, next: keys }
  keys: { type: memoryAction, action: list, namespace: values, resultVariable: keys, next: done }
  done: { type: endEvent }
`;

const ONE = (action: string, extra = '') => `processId: AUTO
name: One memory action
nodes:
  start: { type: startEvent, next: m }
  m: { type: memoryAction, action: ${action}, namespace: ns, ${extra} next: done }
  done: { type: endEvent }
`;

t.test('store, append (trimmed), retrieve, window, default, list', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(OPS);
  let last;
  for (let item = 1; item <= 5; item++) {
    last = m.started(pid, { k: 'c1', v: { name: 'Ada', visits: item }, item });
    t.equal(last.stateCd, STATE.COMPLETED, `execution ${item} completed`);
  }
  const v = last!.variables;
  t.same(v.got, { name: 'Ada', visits: 5 }, 'retrieve: the stored value, with its type');
  t.same(v.last2, [{ n: 4 }, { n: 5 }], 'retrieve with window: the last two items');
  t.same(v.missed, { fallback: 'c1' }, 'a missing key gives the default, resolved');
  t.equal(v.nothing, null, 'a missing key without default gives null');
  t.match(v.add, { length: 3, updatedAt: String, expiresAt: null });
  t.same(v.put, { updatedAt: m.now.toISOString(), expiresAt: null });
  t.match(v.keys, [{ key: 'c1', updatedAt: String, expiresAt: null }]);
  t.same(
    (m.state.memory.default!.lists!.c1!.value as unknown[]).map((x) => (x as { n: number }).n),
    [3, 4, 5],
    'append kept the last maxItems items',
  );
  m.started(pid, { k: 'a0', v: 1, item: 1 });
  const listed = m.started(pid, { k: 'b5', v: 2, item: 1 });
  t.same(
    (listed.variables.keys as Array<{ key: string }>).map((k) => k.key),
    ['a0', 'b5', 'c1'],
    'list: the keys by name',
  );
});

t.test('delete: removes the entry; a missing one is fine', async (t) => {
  const m = new FlowStep();
  const put = await m.publish(ONE('store', 'key: k, value: 1,'));
  const del = await m.publish(ONE('delete', 'key: k,'));
  m.started(put);
  const first = m.started(del);
  t.same(first.variables.m, { deleted: true });
  t.same(m.state.memory, {}, 'the entry and its empty containers are gone');
  const again = m.started(del);
  t.equal(again.stateCd, STATE.COMPLETED);
  t.same(again.variables.m, { deleted: false });
});

t.test('failures: not a list, too large, too deep, a key that resolves to nothing', async (t) => {
  const m = new FlowStep();
  const put = await m.publish(ONE('store', 'key: k, value: "{v}",'));
  const add = await m.publish(ONE('append', 'key: k, value: 1,'));
  const win = await m.publish(ONE('retrieve', 'key: k, window: 2,'));
  const bad = await m.publish(ONE('store', 'key: "{missing}", value: 1,'));
  const long = await m.publish(ONE('store', 'key: "{long}", value: 1,'));
  m.started(put, { v: 'text' });
  t.match(m.started(add).error, { code: 'MEMORY_NOT_A_LIST', nodeId: 'm' }, 'append on a value');
  t.match(m.started(win).error, { code: 'MEMORY_NOT_A_LIST' }, 'a window on a value');
  t.equal(m.state.memory.default!.ns!.k!.value, 'text', 'unchanged');
  const big = m.started(put, { v: 'x'.repeat(256 * 1024) });
  t.match(big.error, { code: 'MEMORY_TOO_LARGE', nodeId: 'm' });
  let deep: unknown = 1;
  for (let i = 0; i < 63; i++) deep = { d: deep };
  const tooDeep = await m.publish(ONE('store', 'key: k, value: { a: { b: "{deep}" } },'));
  t.match(m.started(tooDeep, { deep }).error, { code: 'DATA_TOO_DEEP' });
  t.equal(m.state.memory.default!.ns!.k!.value, 'text', 'nothing was written by the failed nodes');
  t.match(m.started(bad).error, { code: 'MEMORY_KEY_INVALID' }, 'a key with a missing reference');
  t.match(m.started(bad, { missing: '' }).error, { code: 'MEMORY_KEY_INVALID' }, 'a key that is empty text');
  t.match(m.started(long, { long: 'k'.repeat(513) }).error, { code: 'MEMORY_KEY_INVALID' }, 'too long');
});

t.test('{correlationKey} in a key reads the execution’s correlation key', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(ONE('append', 'key: "chat-{correlationKey}", value: "{said}",'));
  m.started(pid, { said: 'a' }, 'c-7');
  m.started(pid, { said: 'b' }, 'c-7');
  m.started(pid, { said: 'z' }, 'c-8');
  t.same(m.state.memory.default!.ns!['chat-c-7']!.value, ['a', 'b']);
  t.same(m.state.memory.default!.ns!['chat-c-8']!.value, ['z']);
  const none = m.started(pid, { said: 'q' });
  t.match(none.error, { code: 'MEMORY_KEY_INVALID' }, 'no correlation key: the reference is missing');
});

t.test('memory is per organization: another one neither sees nor changes it', async (t) => {
  const m = new FlowStep();
  const acmePut = await m.publish(ONE('store', 'key: k, value: secret,'), 'acme');
  const acmeGet = await m.publish(ONE('retrieve', 'key: k,'), 'acme');
  const otherGet = await m.publish(ONE('retrieve', 'key: k, default: none,'), 'globex');
  const otherList = await m.publish(ONE('list', ''), 'globex');
  const otherDel = await m.publish(ONE('delete', 'key: k,'), 'globex');
  m.startedIn('acme', acmePut);
  t.equal(m.startedIn('globex', otherGet).variables.m, 'none');
  t.same(m.startedIn('globex', otherList).variables.m, []);
  t.same(m.startedIn('globex', otherDel).variables.m, { deleted: false });
  t.equal(m.startedIn('acme', acmeGet).variables.m, 'secret', 'still there');
});

t.test('appends in one step see each other: parallel branches and a loop lose no item', async (t) => {
  const m = new FlowStep();
  const pid = await m.publish(`processId: AUTO
name: Many appends
nodes:
  start: { type: startEvent, next: [a, b] }
  a: { type: memoryAction, action: append, namespace: ns, key: k, value: a, next: j }
  b: { type: memoryAction, action: append, namespace: ns, key: k, value: b, next: j }
  j: { type: parallelGateway, next: each }
  each:
    type: loopNode
    collection: [1, 2, 3]
    nodes:
      s: { type: startEvent, next: add }
      add: { type: memoryAction, action: append, namespace: ns, key: k, value: "{item}", next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`);
  const inst = m.started(pid);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(m.state.memory.default!.ns!.k!.value, ['a', 'b', 1, 2, 3]);
});
