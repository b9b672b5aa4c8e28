import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { STATE } from '../../../src/daemon/state/state.js';
import { crashImage, engineHarness } from '../../helpers/engine.js';

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
  const h = await engineHarness(t);
  const pid = await h.publish(OPS);
  let last;
  for (let item = 1; item <= 5; item++) {
    last = await h.start(pid, { k: 'c1', v: { name: 'Ada', visits: item }, item });
    t.equal(last.stateCd, STATE.COMPLETED, `execution ${item} completed`);
  }
  const v = last!.variables;
  t.same(v.got, { name: 'Ada', visits: 5 }, 'retrieve: the stored value, with its type');
  t.same(v.last2, [{ n: 4 }, { n: 5 }], 'retrieve with window: the last two items');
  t.same(v.missed, { fallback: 'c1' }, 'a missing key gives the default, resolved');
  t.equal(v.nothing, null, 'a missing key without default gives null');
  t.match(v.add, { length: 3, updatedAt: String, expiresAt: null });
  t.same(v.put, { updatedAt: h.clock.now().toISOString(), expiresAt: null });
  t.match(v.keys, [{ key: 'c1', updatedAt: String, expiresAt: null }]);
  t.same(
    (h.store.state.memory.default!.lists!.c1!.value as unknown[]).map((x) => (x as { n: number }).n),
    [3, 4, 5],
    'append kept the last maxItems items',
  );
  await h.start(pid, { k: 'a0', v: 1, item: 1 });
  const listed = await h.start(pid, { k: 'b5', v: 2, item: 1 });
  t.same(
    (listed.variables.keys as Array<{ key: string }>).map((k) => k.key),
    ['a0', 'b5', 'c1'],
    'list: the keys by name',
  );
});

t.test('memory writes are journaled in the same entry as the node completion', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(ONE('store', 'key: k, value: 1,'));
  await h.start(pid);
  await h.store.flush();
  const journal = join(h.dir, 'journal');
  const frames = readdirSync(journal).flatMap((f) => readFileSync(join(journal, f), 'utf8').split('\n'));
  const frame = frames.find((l) => l.includes('"memory.written"'));
  t.ok(frame, 'the write is in the journal (a step with memory is never diverted to history alone)');
  t.match(frame, /"nodes?\.ran"/, 'with the completion of its node, in one frame');
  t.ok(
    frame!.indexOf('"memory.written"') < frame!.indexOf('"nodeId":"m"'),
    'right before the completion record of its node',
  );
});

t.test('delete: removes the entry; a missing one is fine', async (t) => {
  const h = await engineHarness(t);
  const put = await h.publish(ONE('store', 'key: k, value: 1,'));
  const del = await h.publish(ONE('delete', 'key: k,'));
  await h.start(put);
  const first = await h.start(del);
  t.same(first.variables.m, { deleted: true });
  t.same(h.store.state.memory, {}, 'the entry and its empty containers are gone');
  const again = await h.start(del);
  t.equal(again.stateCd, STATE.COMPLETED);
  t.same(again.variables.m, { deleted: false });
});

t.test('ttl: an entry expires at once for reads, and the sweep removes it durably', async (t) => {
  const h = await engineHarness(t);
  const put = await h.publish(ONE('store', 'key: k, value: kept, ttl: 1h,'));
  const add = await h.publish(ONE('append', 'key: l, value: x, ttl: 1h,'));
  const addNoTtl = await h.publish(ONE('append', 'key: l, value: y,'));
  const get = await h.publish(ONE('retrieve', 'key: k, default: gone,'));
  const stored = await h.start(put);
  const expiresAt = new Date(h.clock.ms + 3_600_000).toISOString();
  t.match(stored.variables.m, { updatedAt: String, expiresAt });
  await h.start(add);
  h.clock.advance(60_000);
  const appended = await h.start(addNoTtl);
  t.match(appended.variables.m, { length: 2, updatedAt: String, expiresAt }, 'an append without ttl keeps the expiry');
  t.equal((await h.start(get)).variables.m, 'kept');
  h.clock.advance(3_600_000 - 60_000 - 1);
  t.equal((await h.start(get)).variables.m, 'kept', 'alive until its instant');
  h.clock.advance(1);
  t.equal((await h.start(get)).variables.m, 'gone', 'expired: reads as missing, before any sweep');
  t.ok(h.store.state.memory.default?.ns?.k, 'still held until the sweep');
  await h.engine.sweepExpired();
  t.same(h.store.state.memory, {}, 'the sweep removed both expired entries');
  const after = await engineHarness(t, await crashImage(t, h), h.clock);
  t.same(after.store.state.memory, {}, 'the removal was journaled');
});

t.test('failures: not a list, too large, too deep, a key that resolves to nothing', async (t) => {
  const h = await engineHarness(t);
  const put = await h.publish(ONE('store', 'key: k, value: "{v}",'));
  const add = await h.publish(ONE('append', 'key: k, value: 1,'));
  const win = await h.publish(ONE('retrieve', 'key: k, window: 2,'));
  const bad = await h.publish(ONE('store', 'key: "{missing}", value: 1,'));
  const long = await h.publish(ONE('store', 'key: "{long}", value: 1,'));
  await h.start(put, { v: 'text' });
  t.match((await h.start(add)).error, { code: 'MEMORY_NOT_A_LIST', nodeId: 'm' }, 'append on a value');
  t.match((await h.start(win)).error, { code: 'MEMORY_NOT_A_LIST' }, 'a window on a value');
  t.equal(h.store.state.memory.default!.ns!.k!.value, 'text', 'unchanged');
  const big = await h.start(put, { v: 'x'.repeat(256 * 1024) });
  t.match(big.error, { code: 'MEMORY_TOO_LARGE', nodeId: 'm' });
  let deep: unknown = 1;
  for (let i = 0; i < 63; i++) deep = { d: deep };
  const tooDeep = await h.publish(ONE('store', 'key: k, value: { a: { b: "{deep}" } },'));
  t.match((await h.start(tooDeep, { deep })).error, { code: 'DATA_TOO_DEEP' });
  t.equal(h.store.state.memory.default!.ns!.k!.value, 'text', 'nothing was written by the failed nodes');
  t.match((await h.start(bad)).error, { code: 'MEMORY_KEY_INVALID' }, 'a key with a missing reference');
  t.match((await h.start(bad, { missing: '' })).error, { code: 'MEMORY_KEY_INVALID' }, 'a key that is empty text');
  t.match((await h.start(long, { long: 'k'.repeat(513) })).error, { code: 'MEMORY_KEY_INVALID' }, 'too long');
});

t.test('{correlationKey} in a key reads the execution’s correlation key', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(ONE('append', 'key: "chat-{correlationKey}", value: "{said}",'));
  await h.start(pid, { said: 'a' }, { correlationKey: 'c-7' });
  await h.start(pid, { said: 'b' }, { correlationKey: 'c-7' });
  await h.start(pid, { said: 'z' }, { correlationKey: 'c-8' });
  t.same(h.store.state.memory.default!.ns!['chat-c-7']!.value, ['a', 'b']);
  t.same(h.store.state.memory.default!.ns!['chat-c-8']!.value, ['z']);
  const none = await h.start(pid, { said: 'q' });
  t.match(none.error, { code: 'MEMORY_KEY_INVALID' }, 'no correlation key: the reference is missing');
});

t.test('memory is per organization: another one neither sees nor changes it', async (t) => {
  const h = await engineHarness(t);
  const acmePut = await h.publish(ONE('store', 'key: k, value: secret,'), { organization: 'acme' });
  const acmeGet = await h.publish(ONE('retrieve', 'key: k,'), { organization: 'acme' });
  const otherGet = await h.publish(ONE('retrieve', 'key: k, default: none,'), { organization: 'globex' });
  const otherList = await h.publish(ONE('list', ''), { organization: 'globex' });
  const otherDel = await h.publish(ONE('delete', 'key: k,'), { organization: 'globex' });
  await h.start(acmePut, {}, { organization: 'acme' });
  t.equal((await h.start(otherGet, {}, { organization: 'globex' })).variables.m, 'none');
  t.same((await h.start(otherList, {}, { organization: 'globex' })).variables.m, []);
  t.same((await h.start(otherDel, {}, { organization: 'globex' })).variables.m, { deleted: false });
  t.equal((await h.start(acmeGet, {}, { organization: 'acme' })).variables.m, 'secret', 'still there');
});

t.test('memory survives reopening the store: from its journal and from a checkpoint', async (t) => {
  const h = await engineHarness(t);
  const add = await h.publish(ONE('append', 'key: k, value: "{i}",'));
  const get = await h.publish(ONE('retrieve', 'key: k,'));
  for (let i = 0; i < 3; i++) await h.start(add, { i });
  const fromJournal = await engineHarness(t, await crashImage(t, h), h.clock);
  t.same((await fromJournal.start(get)).variables.m, [0, 1, 2], 'replayed from the journal');
  await h.store.checkpoint();
  await h.start(add, { i: 3 });
  await h.store.checkpoint();
  const image = await crashImage(t, h);
  t.match(readFileSync(join(image, 'snapshot.json'), 'utf8'), /"memory":\{"default":\{"ns":\{"k":/);
  const fromCheckpoint = await engineHarness(t, image, h.clock);
  t.same((await fromCheckpoint.start(get)).variables.m, [0, 1, 2, 3], 'loaded from the snapshot');
  const restarted = await h.restart();
  t.same((await restarted.start(get)).variables.m, [0, 1, 2, 3], 'after a graceful restart');
});

t.test('a sweep removes at most 1000 expired entries; the next one the rest', async (t) => {
  const h = await engineHarness(t);
  const at = h.clock.now().toISOString();
  const expiresAt = new Date(h.clock.ms + 1000).toISOString();
  const records = Array.from({ length: 1500 }, (_, i) => ({
    type: 'memory.written' as const,
    organization: 'default',
    namespace: 'bulk',
    key: `k${i}`,
    entry: { value: i, updatedAt: at, expiresAt },
  }));
  await h.store.commit(...records, {
    type: 'memory.written',
    organization: 'default',
    namespace: 'bulk',
    key: 'forever',
    entry: { value: 'kept', updatedAt: at, expiresAt: null },
  });
  h.clock.advance(1000);
  await h.engine.sweepExpired();
  t.equal(Object.keys(h.store.state.memory.default!.bulk!).length, 501, 'one batch removed');
  await h.engine.sweepExpired();
  t.same(Object.keys(h.store.state.memory.default!.bulk!), ['forever'], 'the rest, and never a live entry');
});

t.test('appends in one step see each other: parallel branches and a loop lose no item', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(`processId: AUTO
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
  const inst = await h.start(pid);
  await h.waitFor((e) => e.processInstanceId === inst.processInstanceId && e.type === 'PROCESS_COMPLETED');
  t.same(h.store.state.memory.default!.ns!.k!.value, ['a', 'b', 1, 2, 3]);
});
