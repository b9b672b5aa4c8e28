import '../../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { MAX_LISTED_SEGMENTS } from '../../../../src/daemon/at-rest/segments/execution-segments.js';
import { mergeRun } from '../../../../src/daemon/at-rest/segments/compact.js';
import { readIndex } from '../../../../src/daemon/at-rest/segments/load.js';
import { Store } from '../../../../src/daemon/store/store.js';
import { segmentStoreOptions, type ItemRecord, type ItemState } from '../../../helpers/segment-store.js';

const WORKER = fileURLToPath(new URL('../../../fixtures/segment-store-worker.js', import.meta.url));

function open(dir: string, extra: Parameters<typeof segmentStoreOptions>[1] = {}) {
  return Store.open<ItemState, ItemRecord>(segmentStoreOptions(dir, extra));
}

async function snapshotOf(
  dir: string,
): Promise<{ format: number; executions?: { segments: number[]; live?: number }; state: object }> {
  return JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'));
}

async function fill(store: Store<ItemState, ItemRecord>, n: number, v = 'v0'): Promise<void> {
  const records: ItemRecord[] = [];
  for (let i = 0; i < n; i++) records.push({ k: `item-${i}`, v: `${v}-${i}` });
  await store.commit(...records);
}

t.test('a checkpoint after changing k of n entries writes a segment of those k, and the ids removed', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await fill(store, 40);
  await store.checkpoint();
  let snap = await snapshotOf(dir);
  t.equal(snap.format, 2);
  t.same(snap.executions, { segments: [1], live: 40 }, 'the segments, and how many entries they hold live');
  t.notOk('items' in snap.state, 'the snapshot holds no entry');
  t.equal((await readIndex(join(dir, 'executions'), 1)).ids.length, 40, 'the first segment holds all 40');

  await store.commit(
    ...[
      { k: 'item-3', v: 'new' },
      { k: 'item-7', v: 'new' },
      { k: 'item-9', v: 'new' },
      { k: 'item-11', v: null },
      { k: 'fresh', v: 'new' },
      { k: 'gone-again', v: 'x' },
      { k: 'gone-again', v: null },
    ],
  );
  await store.checkpoint();
  snap = await snapshotOf(dir);
  t.same(snap.executions, { segments: [1, 2], live: 40 }, 'one removed, one added');
  const second = await readIndex(join(dir, 'executions'), 2);
  t.same([...second.ids].sort(), ['fresh', 'item-3', 'item-7', 'item-9'], 'only the changed entries');
  t.same(second.removed, ['item-11'], 'the one removed that a segment held');
  const live = structuredClone(store.state);
  await store.close();

  const again = await open(dir);
  t.same(again.state, live, 'reopened: every entry back, the rest of the state too');
  t.same(Object.keys(again.state.items), Object.keys(live.items), 'in the same order');
  await again.close();
});

t.test('a checkpoint with no entry changed writes no segment', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await fill(store, 5);
  await store.checkpoint();
  await store.commit({ k: 'item-1', v: 'a' });
  await store.commit({ k: 'item-1', v: 'b' });
  await store.checkpoint();
  await store.close(); // nothing committed since: no checkpoint
  t.same((await snapshotOf(dir)).executions, { segments: [1, 2], live: 5 });
  t.same((await readdir(join(dir, 'executions'))).sort(), [
    '000001.index.json',
    '000001.jsonl',
    '000002.index.json',
    '000002.jsonl',
  ]);
});

t.test("with churn, compaction keeps the executions' files bounded", async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  const n = 200;
  await fill(store, n);
  await store.checkpoint();
  const first = (await stat(join(dir, 'executions', '000001.jsonl'))).size;
  let most = 0;
  for (let round = 1; round <= 60; round++) {
    // A quarter of the entries changed each round.
    const records: ItemRecord[] = [];
    for (let i = 0; i < n / 4; i++) records.push({ k: `item-${(round * 53 + i * 4) % n}`, v: `r${round}-${i}` });
    await store.commit(...records);
    await store.checkpoint();
    let bytes = 0;
    for (const name of await readdir(join(dir, 'executions')))
      if (name.endsWith('.jsonl')) bytes += (await stat(join(dir, 'executions', name))).size;
    most = Math.max(most, bytes);
  }
  const listed = (await snapshotOf(dir)).executions!.segments;
  t.ok(listed.length <= 4, `few segments listed: ${listed.join(',')}`);
  // Without compaction they would hold every version written: 16 times the live frames.
  t.ok(most < first * 4, `the segments never grew past ${most} bytes (the live frames: ${first})`);
  const live = structuredClone(store.state);
  await store.close();
  const again = await open(dir);
  t.same(again.state, live, 'reopened after compactions: every entry as it was');
  await again.close();
});

t.test('entries changed while a checkpoint writes its segment are there as of its instant', async (t) => {
  const dir = t.testdir();
  const store = await open(dir, { sliceEntries: 3 });
  await fill(store, 30);
  const checkpoint = store.checkpoint();
  const later = store.commit(
    ...[
      { k: 'item-29', v: 'after' },
      { k: 'item-0', v: null },
    ],
  );
  await Promise.all([checkpoint, later]);
  const doc = await readIndex(join(dir, 'executions'), 1);
  t.equal(doc.ids.length, 30, 'all 30, as they were');
  const text = await readFile(join(dir, 'executions', '000001.jsonl'), 'utf8');
  t.match(text, /v0-29/, 'item-29 as it was at the checkpoint');
  t.notMatch(text, /"after"/, 'not its later value');
  const live = structuredClone(store.state);
  await store.close({ checkpoint: false });
  const again = await open(dir);
  t.same(again.state, live, 'the segment and the journal after it give the live state back');
  await again.close();
});

/** A format-1 directory of `n` entries: a store that keeps them inside its snapshot, checkpointed. */
async function formatOne(dir: string, n: number): Promise<void> {
  const old = await open(dir, { segments: false });
  await fill(old, n);
  await old.close();
}

t.test('a format-1 directory opens as it is, and its first checkpoint writes every entry to a segment', async (t) => {
  const dir = t.testdir();
  await formatOne(dir, 25);
  t.equal((await snapshotOf(dir)).format, 1);
  const store = await open(dir);
  t.equal(Object.keys(store.state.items).length, 25);
  await store.commit({ k: 'item-0', v: 'x' });
  await store.checkpoint();
  const snap = await snapshotOf(dir);
  t.equal(snap.format, 2);
  t.equal((await readIndex(join(dir, 'executions'), 1)).ids.length, 25, 'all 25 in the first segment');
  const live = structuredClone(store.state);
  await store.close();
  const again = await open(dir);
  t.same(again.state, live);
  await again.close();
});

for (const point of [
  'segment:written',
  'segment:indexed',
  'segment:synced',
  'checkpoint:synced',
  'checkpoint:pending',
  'checkpoint:renamed',
  'checkpoint:named',
]) {
  t.test(`a format-1 directory converted, SIGKILLed at ${point}: every entry there`, async (t) => {
    const dir = t.testdir();
    await formatOne(dir, 300);
    const child = spawn(process.execPath, [WORKER, dir, '10'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, WFX_TEST_CRASH_POINT: point },
    });
    const exited = once(child, 'exit');
    let stopped = false;
    for await (const line of createInterface({ input: child.stdout! })) {
      if (line === `crash-point ${point}`) stopped = true;
      break;
    }
    child.kill('SIGKILL');
    await exited;
    t.ok(stopped, `the worker stopped at ${point}`);
    const store = await open(dir);
    const items = store.state.items;
    t.equal(Object.keys(items).length, 300, 'all 300 entries');
    t.equal(
      Object.keys(items).filter((k) => items[k]!.v === 'changed').length,
      10,
      'and the 10 changes acknowledged before the checkpoint',
    );
    await store.checkpoint();
    await store.close();
    const again = await open(dir);
    t.same(again.state.items, items, 'and after a checkpoint of its own');
    t.equal((await snapshotOf(dir)).format, 2);
    await again.close();
  });
}

t.test('mergeRun picks the newest segments of similar size, only past the most listed', async (t) => {
  t.equal(mergeRun([5, 1, 1], 3), -1, 'no more than the most: nothing');
  t.equal(mergeRun([100, 1, 1, 1], 3), 1, 'the small new ones, not the large old one');
  t.equal(mergeRun([100, 6, 1, 1, 1], 4), 1, 'a segment up to twice the newer ones joins them');
  t.equal(mergeRun([100, 7, 1, 1, 1], 4), 2, 'one over twice stays');
  t.equal(mergeRun([1000, 100, 10, 1], 3), 2, 'sizes far apart: the two newest, so the count still falls');
  t.equal(mergeRun([1, 1, 1, 1], 3), 0, 'all alike: all of them');
  t.equal(mergeRun([0, 0, 0], 2), 0, 'segments with nothing live go too');
  t.equal(mergeRun([100, 1, 1, 1], 3, 2), 2, 'not into those an image covers, while two come after them');
  t.equal(mergeRun([1, 1, 1, 1], 3, 3), -1, 'one after them: none, waiting for a second');
  t.equal(mergeRun([1, 1, 1, 1, 1, 1], 3, 5), -1, 'still none at twice the most listed');
  t.equal(mergeRun([1, 1, 1, 1, 1, 1, 1], 3, 6), 0, 'past twice the most: into them, so the count stays bounded');
  t.equal(mergeRun([100, 100, 1, 1, 1, 1, 1], 3, 6), 2, 'and then by size as without an image');
});

t.test('checkpoints of new entries alone keep the segments listed bounded', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await fill(store, 1000, 'first');
  await store.checkpoint();
  const counts: number[] = [];
  const rounds = 3 * MAX_LISTED_SEGMENTS;
  for (let round = 1; round <= rounds; round++) {
    const records: ItemRecord[] = [];
    for (let i = 0; i < 5; i++) records.push({ k: `new-${round}-${i}`, v: `r${round}` });
    await store.commit(...records);
    await store.checkpoint();
    counts.push((await snapshotOf(dir)).executions!.segments.length);
  }
  t.ok(
    Math.max(...counts) <= MAX_LISTED_SEGMENTS,
    `never more than ${MAX_LISTED_SEGMENTS} listed: ${counts.join(',')}`,
  );
  t.ok(Math.max(...counts) === MAX_LISTED_SEGMENTS, 'the bound was reached (merges were needed)');
  const listed = (await snapshotOf(dir)).executions!.segments;
  t.equal(listed[0], 1, 'the large first segment was never copied again');
  const names = (await readdir(join(dir, 'executions'))).filter((f) => f.endsWith('.jsonl'));
  t.equal(names.length, listed.length, 'the merged segments were removed');
  const live = structuredClone(store.state);
  t.equal(Object.keys(live.items).length, 1000 + 5 * rounds);
  await store.close();
  const again = await open(dir);
  t.same(again.state, live, 'reopened after merges: every entry as it was');
  await again.close();
});
