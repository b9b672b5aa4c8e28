// Memory where it needs the engine: the journal, reopening the store, the sweep's batches. What
// each memoryAction decides is in step/memory.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { crashImage, engineHarness } from '../../helpers/engine.js';

const ONE = (action: string, extra = '') => `processId: AUTO
name: One memory action
nodes:
  start: { type: startEvent, next: m }
  m: { type: memoryAction, action: ${action}, namespace: ns, ${extra} next: done }
  done: { type: endEvent }
`;

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
