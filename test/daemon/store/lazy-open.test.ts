import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { cp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { wfxJsonStore } from '../../../src/daemon/engine/executions-at-rest.js';
import { execution } from '../../../src/daemon/state/executions.js';
import { ExecutionTable } from '../../../src/daemon/state/execution-table.js';
import type { WfxRecord } from '../../../src/daemon/state/records.js';
import type { Execution, WfxState } from '../../../src/daemon/state/state.js';
import { IMAGE_NAME } from '../../../src/daemon/at-rest/segments/directory-image.js';
import { Store } from '../../../src/daemon/store/store.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { eventually } from '../../helpers/eventually.js';
import { lazyOpens } from '../../helpers/lazy-opens.js';

// The lazy open (StoreOptions.lazy, decision 068 step 6b): the executions a checkpoint wrote are
// left unread, their summaries in `evictable.unread`; those the journal after it changes are
// read back just before the replay applies the change; each unread one reads back as it was.

const FLOW = `processId: AUTO
name: Two messages
nodes:
  start: { type: startEvent, next: a }
  a: { type: intermediateCatchEvent, eventType: message, messageRef: first, next: b }
  b: { type: intermediateCatchEvent, eventType: message, messageRef: second, next: done }
  done: { type: endEvent }
`;

t.test('a lazy open reads only what the journal changes; the rest reads back as it was', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: false });
  const pid = await h.publish(FLOW);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await h.start(pid, {}, { correlationKey: `k-${i}` })).processInstanceId);
  await h.store.checkpoint();
  // After the checkpoint: one execution moves on, one more starts (journal only).
  const moved = await h.engine.publishEvent({
    organization: 'default',
    eventType: 'first',
    correlationKey: 'k-0',
    data: {},
  });
  t.equal(moved.status, 'resumed');
  const late = (await h.start(pid, {}, { correlationKey: 'k-late' })).processInstanceId;
  const expected = new Map<string, Execution>();
  for (const id of [...ids, late]) expected.set(id, structuredClone(execution(h.store.state, id)!));
  await h.engine.close();
  await h.store.close({ checkpoint: false });

  const store = await Store.open<WfxState, WfxRecord>({ dir: h.dir, ...wfxJsonStore(), lazy: true });
  t.teardown(() => store.close({ checkpoint: false }));
  const evictable = store.evictable!;
  const unread = evictable.unread!;
  t.equal(unread.size, 5, 'the five executions the journal did not change are left unread');
  t.same(
    ExecutionTable.of(store.state)
      .ids()
      .filter((id) => execution(store.state, id) !== undefined)
      .sort(),
    [ids[0]!, late].sort(),
    'resident: the one the journal changed (read back for the replay) and the one it started',
  );
  t.same(execution(store.state, ids[0]!), expected.get(ids[0]!), 'the changed one has the change applied');
  t.equal(unread.get(ids[1]!)?.summary.waits[0]?.kind, 'event', 'an unread one is summarized');
  for (const id of ids.slice(1)) {
    t.ok(evictable.clean(id), `${id} is clean (a checkpoint wrote it, nothing changed it)`);
    t.same(await evictable.read(id), expected.get(id), `${id} reads back as it was`);
  }
  t.notOk(evictable.clean(ids[0]!), 'the changed one is not clean before the next checkpoint');
  t.notOk(evictable.clean(late), 'nor the new one');
});

t.test('a close leaves an image of every segment: the next open restores it and answers as the indexes', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: false });
  const pid = await h.publish(FLOW);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) ids.push((await h.start(pid, {}, { correlationKey: `k-${i}` })).processInstanceId);
  await h.store.checkpoint();
  for (const key of ['k-0', 'k-1'])
    await h.engine.publishEvent({ organization: 'default', eventType: 'first', correlationKey: key, data: {} });
  ids.push((await h.start(pid, {}, { correlationKey: 'k-late' })).processInstanceId);
  await h.engine.close();
  await h.store.close({ checkpoint: false });
  const image = join(h.dir, 'executions', IMAGE_NAME);

  // Opened as the daemon opens (lazy, the journal's executions resident) and closed.
  const lazy = lazyOpens();
  const opens = lazy.opens;
  const open = () => lazy.open(h.dir);
  const first = await open();
  t.ok(ExecutionTable.of(first.state).size > 0, 'some executions resident at the close');
  await first.close();
  t.ok((await stat(image)).size > 0, 'the close left an image');

  const restored = await open();
  t.teardown(() => restored.close({ checkpoint: false }));
  t.match(opens.at(-1), { image: 'used', loaded: 0 }, 'the next open restores it, no index loaded');
  await rm(image);
  const indexed = await open();
  t.teardown(() => indexed.close({ checkpoint: false }));
  t.match(opens.at(-1), { image: 'none' }, 'one from the indexes to compare with');
  const a = restored.evictable!.unread!;
  const b = indexed.evictable!.unread!;
  t.equal(a.size, ids.length, 'every execution in the directory, the resident ones too');
  t.equal(a.size, b.size);
  for (const id of ids) t.same(a.get(id), b.get(id), `${id}: the same summary and location`);
  for (const key of ['k-0', 'k-2', 'k-late'])
    for (const ref of ['first', 'second'])
      t.same(a.subscribers('default', ref, key), b.subscribers('default', ref, key), `subscribers ${ref} ${key}`);
  t.same(a.list({ limit: 100 }), b.list({ limit: 100 }), 'listed alike');
});

t.test('a close under the image minimum, or over an image still current, writes none', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: false });
  const pid = await h.publish(FLOW);
  for (let i = 0; i < 3; i++) await h.start(pid, {}, { correlationKey: `k-${i}` });
  await h.engine.close();
  await h.store.close();
  const image = join(h.dir, 'executions', IMAGE_NAME);
  await t.rejects(stat(image), { code: 'ENOENT' }, 'three executions: under the default minimum');
  const open = () => Store.open<WfxState, WfxRecord>({ dir: h.dir, ...wfxJsonStore(), lazy: true, imageMin: 1 });
  await (await open()).close();
  const written = (await stat(image)).ino;
  await (await open()).close(); // nothing changed: the image still covers every segment
  t.equal((await stat(image)).ino, written, 'the same file: not written again');
});

t.test(
  'the image a close leaves has the executions the cache took out of memory where their segments have them',
  async (t) => {
    const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false, imageMin: 1 });
    const pid = await h.publish(FLOW);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await h.start(pid, {}, { correlationKey: `k-${i}` })).processInstanceId);
    const cold = () => [...h.engine.executions.coldIds()].length;
    await eventually('every execution out of memory', () => cold() === ids.length);
    // One read back (a step), written by the next checkpoint and taken out of memory again.
    await h.engine.publishEvent({ organization: 'default', eventType: 'first', correlationKey: 'k-0', data: {} });
    await eventually('out of memory again', () => cold() === ids.length);
    await h.engine.close();
    await h.store.close();
    const image = join(h.dir, 'executions', IMAGE_NAME);
    t.ok((await stat(image)).size > 0, 'the close left an image');

    const open = () => Store.open<WfxState, WfxRecord>({ dir: h.dir, ...wfxJsonStore(), lazy: true, imageMin: 1 });
    const restored = await open();
    t.teardown(() => restored.close({ checkpoint: false }));
    await rm(image);
    const indexed = await open();
    t.teardown(() => indexed.close({ checkpoint: false }));
    const a = restored.evictable!.unread!;
    const b = indexed.evictable!.unread!;
    for (const id of ids) {
      t.same(a.get(id), b.get(id), `${id}: the same summary and location as the indexes give`);
      t.same(await restored.evictable!.read(id), await indexed.evictable!.read(id), `${id} reads back`);
    }
  },
);

t.test('a close leaves no image while a cold timer taken is not read back', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false, imageMin: 1 });
  const pid = await h.publish(FLOW);
  for (let i = 0; i < 3; i++) await h.start(pid, {}, { correlationKey: `k-${i}` });
  const unread = h.store.evictable!.unread!;
  await eventually('every execution out of memory', () => unread.size === 3);
  // As the engine's cold timer does before it reads them back: the due time is then nowhere else.
  const [id] = [...unread.list({ limit: 1 })];
  unread.put({ ...unread.get(id!)!.summary, dueMs: 1 }, unread.locationOf(id!)!);
  t.same(unread.takeDue(2), [id], 'a timer taken');
  t.equal(unread.untimed, 1);
  await h.start(pid, {}, { correlationKey: 'k-late' }); // the close's checkpoint writes a segment
  await h.engine.close();
  await h.store.close();
  const image = join(h.dir, 'executions', IMAGE_NAME);
  await t.rejects(stat(image), { code: 'ENOENT' }, 'no image: the next open loads the indexes, which keep the timer');
});

t.test(
  'a compaction by dead share leaves a new image behind it, written in the background: a start after a crash restores it',
  async (t) => {
    const h = await engineHarness(t, undefined, undefined, { executionCache: 0, cold: false, imageMin: 1 });
    const pid = await h.publish(FLOW);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await h.start(pid, {}, { correlationKey: `k-${i}` })).processInstanceId);
    const dir = join(h.dir, 'executions');
    const image = join(dir, IMAGE_NAME);
    const segments = async () => (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
    await h.store.checkpoint();
    const before = await segments();
    t.ok(before.length > 0, 'the executions are in segments');

    // Two thirds finish: their removals leave most of the segments' bytes dead, and a checkpoint
    // copies the older segments into a new one (one under way when asked may not have the last removals).
    for (let i = 0; i < 8; i++) {
      for (const eventType of ['first', 'second'])
        await h.engine.publishEvent({ organization: 'default', eventType, correlationKey: `k-${i}`, data: {} });
      await h.archived(ids[i]!);
    }
    for (let i = 0; i < 5 && (await segments()).some((n) => before.includes(n)); i++) await h.store.checkpoint();
    const after = await segments();
    t.same(
      after.filter((n) => before.includes(n)),
      [],
      'compacted: none of the segments before is left',
    );
    await h.store.imageRefreshed();
    const header = JSON.parse((await readFile(image, 'utf8')).split('\n')[0]!) as {
      covered: Array<{ segment: number }>;
    };
    t.same(
      header.covered.map((c) => `${String(c.segment).padStart(6, '0')}.jsonl`).sort(),
      after,
      'the new image covers the segments listed after the compaction',
    );

    // A kill -9 now leaves the files as they are: two copies of them, one without the image.
    const crashed = join(t.testdir(), 'crashed');
    const indexes = join(t.testdir(), 'indexes');
    await cp(h.dir, crashed, { recursive: true });
    await cp(h.dir, indexes, { recursive: true });
    await rm(join(indexes, 'executions', IMAGE_NAME));
    const { opens, open } = lazyOpens();
    const restored = await open(crashed);
    t.teardown(() => restored.close({ checkpoint: false }));
    t.match(
      opens.at(-1),
      { image: 'used', loaded: 0 },
      'the start after the crash restores the new image, no index loaded',
    );
    const indexed = await open(indexes);
    t.teardown(() => indexed.close({ checkpoint: false }));
    t.match(opens.at(-1), { image: 'none' }, 'one from the indexes to compare with');
    const a = restored.evictable!.unread!;
    const b = indexed.evictable!.unread!;
    t.equal(a.size, b.size, 'as many executions in both directories');
    for (const id of ids.slice(8)) {
      t.same(a.get(id), b.get(id), `${id}: the same summary and location as the indexes give`);
      t.same(await restored.evictable!.read(id), await indexed.evictable!.read(id), `${id} reads back`);
    }
    for (const id of ids.slice(0, 8)) t.equal(a.get(id), null, `${id} (archived) is not in it`);
  },
);

t.test(
  'merges spare the segments an image covers up to twice the most listed; past it, a new image follows',
  async (t) => {
    const options = { executionCache: 0, cold: false, imageMin: 1 } as const;
    const first = await engineHarness(t, undefined, undefined, options);
    const pid = await first.publish(FLOW);
    const dir = join(first.dir, 'executions');
    const listed = async () =>
      (JSON.parse(await readFile(join(first.dir, 'snapshot.json'), 'utf8')) as { executions: { segments: number[] } })
        .executions.segments;
    const covered = async () =>
      (
        JSON.parse((await readFile(join(dir, IMAGE_NAME), 'utf8')).split('\n')[0]!) as {
          covered: Array<{ segment: number }>;
        }
      ).covered.map((c) => c.segment);
    let started = 0;
    /** One execution more and a checkpoint: a segment more. */
    const segmentMore = async (h: EngineHarness) => {
      await h.start(pid, {}, { correlationKey: `k-${started++}` });
      await h.store.checkpoint();
    };
    for (let i = 0; i < 4; i++) await segmentMore(first);
    await first.close();
    const imaged = await covered();
    t.equal(imaged.length, 4, 'the close left an image of four segments');
    t.same(imaged, await listed(), 'all of those listed');

    // At most 3 listed, 4 of them imaged: each segment more merges only with those after the image.
    const second = await engineHarness(t, first.dir, undefined, { ...options, maxListedSegments: 3 });
    const counts: number[] = [];
    for (let i = 0; i < 6; i++) {
      await segmentMore(second);
      const now = await listed();
      counts.push(now.length);
      t.same(now.slice(0, imaged.length), imaged, `checkpoint ${i + 1}: the image's segments are still listed`);
    }
    t.same(await covered(), imaged, 'the image is as the close left it');
    t.ok(Math.max(...counts) <= 6, `never more than twice the most listed: ${counts.join(',')}`);
    t.ok(counts.at(-1)! < imaged.length + 6, `the segments after the image were merged: ${counts.join(',')}`);
    const { opens, open } = lazyOpens();
    const crashed = join(t.testdir(), 'crashed');
    await cp(first.dir, crashed, { recursive: true });
    const copy = await open(crashed, null);
    t.teardown(() => copy.close({ checkpoint: false }));
    t.match(opens.at(-1), { image: 'used' }, 'a start after a crash now restores the image');
    t.equal(copy.evictable!.unread!.size, started, 'with every execution');
    await second.close();

    // Past twice the most listed (2 now, 5 imaged), a merge reaches into the image's segments,
    // and a new image of what it left is written behind it.
    const before = await listed();
    t.same(await covered(), before, 'the close left an image of every segment listed');
    const third = await engineHarness(t, first.dir, undefined, { ...options, maxListedSegments: 2 });
    await segmentMore(third);
    const merged = await listed();
    t.notSame(merged.slice(0, before.length), before, 'the merge reached into the image');
    t.ok(merged.length <= before.length, `the count fell: ${before.length} + 1 to ${merged.length}`);
    await third.store.imageRefreshed();
    t.same(await covered(), merged, 'a new image covers the segments listed after the merge');
  },
);
