import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { open as openFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SnapshotCopy, type SnapshotPiece } from '../../../src/daemon/store/snapshot-copy.js';
import { Store } from '../../../src/daemon/store/store.js';
import type { StoreOptions } from '../../../src/daemon/store/store-options.js';
import { snapshotPauseMs } from '../../../src/daemon/store/snapshot-write.js';
import { adoptAsIs } from '../../helpers/data-dir.js';

interface Item {
  v: number;
  list: number[];
  text?: string;
}
interface S {
  before: { count: number };
  items: Record<string, Item>;
  after: string[];
}
type R =
  | { op: 'set'; k: string; v: number }
  | { op: 'push'; k: string; x: number }
  | { op: 'del'; k: string }
  /** Changes two entries: `k` and its `parent` (as a child execution's start changes its parent). */
  | { op: 'child'; k: string; parent: string }
  | { op: 'note'; text: string }
  /** Sets `k` to an entry of `text`, for entries of a given size. */
  | { op: 'fill'; k: string; text: string }
  | { op: 'boom' };

function open(dir: string, sliceEntries = 7) {
  return Store.open<S, R>(optionsOf(dir, sliceEntries));
}

function optionsOf(dir: string, sliceEntries = 7): StoreOptions<S, R> {
  return {
    dir,
    initialState: () => ({ before: { count: 0 }, items: {}, after: [] }),
    apply: (s, r) => {
      if (r.op === 'boom') throw new Error('bad record');
      s.before.count++;
      if (r.op === 'set') s.items[r.k] = { v: r.v, list: s.items[r.k]?.list ?? [] };
      else if (r.op === 'push')
        s.items[r.k]?.list.push(r.x); // in place: only a copy made before it keeps the old list
      else if (r.op === 'del') delete s.items[r.k];
      else if (r.op === 'fill') s.items[r.k] = { v: 0, list: [], text: r.text };
      else if (r.op === 'child') {
        s.items[r.k] = { v: -1, list: [] };
        s.items[r.parent]?.list.push(-1);
      } else s.after.push(r.text);
    },
    snapshotCollection: {
      key: 'items',
      touched: (r, visit) => {
        if (r.op === 'child') visit(r.parent);
        else if ('k' in r) visit(r.k);
      },
      sliceEntries,
    },
    logger: { info() {}, warn() {}, error() {} },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Checks a snapshot's layout against its bytes: each entry's `"key":value` where the layout
 * says, in order, one comma apart, and the collection closing after the last. Gives the text
 * without the layout, which must be what JSON.stringify({...meta, state}) gives.
 */
function withoutLayout(t: Test, snapshot: Buffer | string, key: string): string {
  const bytes = Buffer.from(snapshot);
  const text = bytes.toString('utf8');
  const { layout, state } = JSON.parse(text) as {
    layout: { collection: string; at: number; lengths: number[] };
    state: Record<string, Record<string, unknown>>;
  };
  t.equal(layout.collection, key, 'the layout names its collection');
  const entries = Object.entries(state[key]!);
  t.equal(layout.lengths.length, entries.length, 'a length for each entry');
  let at = layout.at;
  const misplaced: string[] = [];
  if (bytes[at - 1] !== 0x7b) misplaced.push('the first entry does not follow "{"');
  entries.forEach(([k, v], i) => {
    const length = layout.lengths[i]!;
    if (bytes.subarray(at, at + length).toString() !== `${JSON.stringify(k)}:${JSON.stringify(v)}`) misplaced.push(k);
    if (i > 0 && bytes[at - 1] !== 0x2c) misplaced.push(`no comma before ${k}`);
    at += length + 1;
  });
  if (bytes[entries.length > 0 ? at - 1 : at] !== 0x7d)
    misplaced.push('the collection does not close after the last entry');
  t.same(misplaced, [], 'every entry where the layout says');
  return `${text.slice(0, text.lastIndexOf(',"layout":'))}}`;
}

/** The text of drained pieces; ranges read from `previous` (the previous snapshot's bytes). */
function textOf(pieces: readonly SnapshotPiece[], previous: Buffer | null = null): string {
  return Buffer.concat(
    pieces.map((p) => (Buffer.isBuffer(p) ? p : previous!.subarray(p.offset, p.offset + p.length))),
  ).toString('utf8');
}

t.test('a checkpoint copied a slice at a time is exactly the state when it began', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  for (let i = 0; i < 200; i++) await store.commit({ op: 'set', k: `k${i}`, v: i }, { op: 'push', k: `k${i}`, x: i });
  await store.commit({ op: 'note', text: 'before' });
  const expected = structuredClone(store.state);
  const seq = store.lastSeq;

  const cp = store.checkpoint();
  let slices = 0;
  let done = false;
  void cp.then(() => (done = true));
  // Between slices: change entries not copied yet (the last ones), copied already (the first),
  // remove some, create new ones, a two-entry record, and the rest of the state.
  const commits: Array<Promise<void>> = [];
  for (let round = 0; !done && round < 200; round++) {
    const i = 199 - round;
    commits.push(
      store.commit({ op: 'push', k: `k${i}`, x: 1000 + round }),
      store.commit({ op: 'set', k: `k${round}`, v: -round }),
      store.commit({ op: 'del', k: `k${(round * 7) % 200}` }),
      store.commit({ op: 'set', k: `new${round}`, v: round }),
      store.commit({ op: 'child', k: `child${round}`, parent: `k${(round * 13) % 200}` }),
      store.commit({ op: 'note', text: `during ${round}` }),
    );
    slices++;
    await tick();
  }
  await cp;
  await Promise.all(commits);
  t.ok(slices > 5, `commits landed between ${slices} slices of the copy`);

  const snap = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'));
  t.equal(snap.format, 1);
  t.equal(snap.seq, seq, 'the snapshot names the last entry it holds');
  t.same(snap.state, expected, 'every entry as it was when the checkpoint began');
  t.same(Object.keys(snap.state.items), Object.keys(expected.items), 'entries in their order');
  t.same(Object.keys(snap.state), ['before', 'items', 'after'], 'the state keys in their order');

  const live = structuredClone(store.state);
  await store.close({ checkpoint: false });
  const again = await open(dir);
  t.same(again.state, live, 'snapshot + the journal after it = the live state');
  t.equal(again.recovery.snapshotSeq, seq);
  await again.close();
  t.notOk(
    (await readdir(dir)).some((f) => f.endsWith('.tmp')),
    'no temporary file left',
  );
});

t.test('a checkpoint at close, with nothing else going on, writes the whole state', async (t) => {
  const dir = t.testdir();
  const store = await open(dir, 1);
  for (let i = 0; i < 50; i++) await store.commit({ op: 'set', k: `k${i}`, v: i });
  const expected = structuredClone(store.state);
  await store.close();
  const again = await open(dir);
  t.same(again.state, expected);
  t.equal(again.recovery.replayed, 0, 'nothing to replay after a clean close');
  await again.close();
});

t.test('a store that fails while a snapshot is copied writes no snapshot and leaves no temporary file', async (t) => {
  const dir = t.testdir();
  const store = await open(dir, 1);
  for (let i = 0; i < 50; i++) await store.commit({ op: 'set', k: `k${i}`, v: i });
  await store.checkpoint();
  const before = await readFile(join(dir, 'snapshot.json'), 'utf8');
  await store.commit({ op: 'set', k: 'k0', v: -1 });
  const checkpoint = store.checkpoint();
  await tick(); // a slice or two copied
  await t.rejects(store.commit({ op: 'boom' }), { code: 'STORE_FAILED' });
  await t.rejects(checkpoint, { code: 'STORE_FAILED' }, 'the checkpoint under way gives up');
  await store.close();
  t.equal(await readFile(join(dir, 'snapshot.json'), 'utf8'), before, 'the last good snapshot stays');
  t.notOk(
    (await readdir(dir)).some((f) => f.endsWith('.tmp')),
    'no temporary file left',
  );
  const again = await open(dir);
  t.equal(again.state.items.k0?.v, -1, 'what was acknowledged before the failure replays');
  await again.close();
});

t.test('SnapshotCopy writes what JSON.stringify would, for any state', async (t) => {
  const state = {
    a: 1,
    big: { x: { n: 1 }, gone: undefined as unknown, y: [1, 2], 'quote"d': 'v' },
    z: undefined as unknown,
    tail: 'end',
  };
  const copy = new SnapshotCopy({ format: 1, seq: 3 }, state, 'big');
  let text = '';
  let drains = 0;
  for (let done = false; !done; drains++) {
    done = copy.step(0, 1);
    text += textOf(copy.drain());
  }
  t.equal(
    withoutLayout(t, text, 'big'),
    JSON.stringify({ format: 1, seq: 3, state }),
    'drained one entry at a time, the same text',
  );
  t.equal(JSON.parse(text).layout.lengths.length, 3, 'the layout has the three entries JSON holds');
  t.ok(drains >= 4, `drained in ${drains} parts`);
  t.same(copy.drain(), [], 'nothing more once the tail is out');
  t.equal(copy.bytes, Buffer.byteLength(text), 'its size in bytes');

  // An entry touched before the copy reaches it is held until the text before it is out.
  const ordered = new SnapshotCopy({}, { big: { a: 1, b: 2, c: 3 } }, 'big');
  ordered.touch('c');
  t.equal(textOf(ordered.drain()), '{"state":{"big":{', 'only the head: "a" and "b" come before "c"');
  t.equal(ordered.step(0, 1), false);
  t.equal(textOf(ordered.drain()), '"a":1');
  while (!ordered.step(0, 1));
  t.match(
    textOf(ordered.drain()),
    /^,"b":2,"c":3\}\},"layout":\{"collection":"big","at":17,"lengths":\[5,5,5\]\}\}$/,
    'then the rest and the layout',
  );

  const empty = new SnapshotCopy({ format: 1 }, { big: {} }, 'big');
  t.equal(empty.step(2), true, 'nothing to copy');
  t.equal(withoutLayout(t, textOf(empty.drain()), 'big'), JSON.stringify({ format: 1, state: { big: {} } }));

  t.throws(() => new SnapshotCopy({}, { big: [] }, 'big'), /not an object of entries/);
});

t.test('SnapshotCopy: each entry as it was at the instant, whatever touches it and in what order', async (t) => {
  const big: Record<string, { v: number } | undefined> = {
    a: { v: 1 },
    b: { v: 2 },
    gone: undefined,
    c: { v: 3 },
    d: { v: 4 },
  };
  const copy = new SnapshotCopy({}, { big }, 'big');
  const apply = (k: string, change: () => void) => {
    copy.touch(k); // before the change, as the store does
    change();
  };
  t.equal(copy.step(0, 1), false);
  const head = textOf(copy.drain());
  t.equal(head, '{"state":{"big":{"a":{"v":1}', 'the head and "a"');
  apply('a', () => (big.a = { v: 10 })); // reached already
  apply('c', () => (big.c = { v: 30 })); // not reached yet: copied now
  apply('c', () => (big.c = { v: 300 })); // a second touch keeps the first copy
  apply('d', () => delete big.d); // removed, then created again under the same key
  apply('d', () => (big.d = { v: 40 }));
  apply('gone', () => (big.gone = { v: 5 })); // an entry whose value JSON leaves out
  apply('e', () => (big.e = { v: 6 })); // created after the instant...
  apply('e', () => (big.e = { v: 60 })); // ...and changed: in no snapshot of that instant
  while (!copy.step(0, 1));
  t.equal(
    withoutLayout(t, head + textOf(copy.drain()), 'big'),
    '{"state":{"big":{"a":{"v":1},"b":{"v":2},"c":{"v":3},"d":{"v":4}}}}',
    'b as it is, c and d as they were, gone and e left out',
  );
  const ranges = copy.unchangedRanges();
  t.same(
    ['a', 'b', 'c', 'd', 'e'].filter((k) => ranges.get(k) !== undefined),
    ['b'],
    'only the untouched entry keeps its range',
  );
});

t.test(
  'under a stream of commits a copy keeps to a quarter of the event loop, and to all of it when idle',
  async (t) => {
    t.equal(snapshotPauseMs(2, false), 0, 'no commits since the last slice: the next turn');
    t.equal(snapshotPauseMs(2, true), 6, 'commits: three times the slice, waited on a timer');
    t.equal(snapshotPauseMs(0.2, true), 0, "under a timer's resolution: the next turn");

    // Slices that run their full time while commits keep coming take the timer path: the copy is
    // still the state as the checkpoint began.
    const dir = t.testdir();
    const store = await open(dir, Infinity);
    const N = 20_000; // a copy of some ms: several slices
    for (let i = 0; i < N; i += 100)
      await store.commit(...Array.from({ length: 100 }, (_, j) => ({ op: 'set' as const, k: `k${i + j}`, v: i + j })));
    const expected = structuredClone(store.state);
    const cp = store.checkpoint();
    let done = false;
    void cp.then(() => (done = true));
    let during = 0;
    for (let round = 0; !done && round < 100_000; round++) {
      await store.commit({ op: 'push', k: `k${N - 1 - (round % N)}`, x: round }, { op: 'del', k: `k${round % N}` });
      during++;
    }
    await cp;
    t.ok(during > 0, `${during} commits acknowledged while the copy ran`);
    const snap = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'));
    t.same(snap.state, expected, 'every entry as it was when the checkpoint began');
    await store.close({ checkpoint: false });
  },
);

t.test("SnapshotCopy given the previous snapshot's ranges copies unchanged entries as bytes of it", async (t) => {
  const items: Record<string, unknown> = {};
  for (let i = 0; i < 20; i++) items[`k${i}`] = { v: i, text: i % 3 === 0 ? `é💡${i}` : `plain ${i}` }; // bytes are not characters
  const state = { head: { n: 1 }, items, tail: ['t'] };

  const first = new SnapshotCopy({ seq: 1 }, state, 'items');
  while (!first.step(0, 3));
  const firstBytes = Buffer.from(textOf(first.drain()));
  t.equal(withoutLayout(t, firstBytes, 'items'), JSON.stringify({ seq: 1, state }));
  t.equal(first.reusedBytes, 0, 'no previous snapshot: every entry serialized');
  const ranges = first.unchangedRanges();
  t.equal(ranges.size, 20);
  t.equal(
    firstBytes.subarray(ranges.get('k3')!.offset, ranges.get('k3')!.offset + ranges.get('k3')!.length).toString(),
    `"k3":${JSON.stringify(items.k3)}`,
    'a range is the entry\'s "key":value bytes',
  );

  // Changes since: k5 changed, k12 removed, k20 new; the store forgets their ranges.
  items.k5 = { v: -5, text: 'ü changed' };
  delete items.k12;
  items.k20 = { v: 20, text: 'new' };
  for (const k of ['k5', 'k12', 'k20']) ranges.delete(k);
  state.head.n = 2;

  const second = new SnapshotCopy({ seq: 2 }, state, 'items', ranges);
  second.touch('k8'); // a record about to change k8, during the copy: its bytes are still right for this snapshot
  while (!second.step(0, 4));
  const pieces = second.drain(); // in one drain: ranges join across slices
  const expected = JSON.stringify({ seq: 2, state });
  items.k8 = { v: -8, text: 'after the instant' };
  const secondBytes = Buffer.from(textOf(pieces, firstBytes));
  t.equal(withoutLayout(t, secondBytes, 'items'), expected, 'the same text as JSON.stringify at the instant');
  t.equal(second.bytes, secondBytes.length);
  const runs = pieces.filter((p) => !Buffer.isBuffer(p));
  t.equal(runs.length, 3, 'neighbours copied as one range: k0-k4, k6-k11, k13-k19');
  t.ok(
    second.reusedBytes > secondBytes.length / 2,
    `${second.reusedBytes} of ${secondBytes.length} bytes copied, not serialized`,
  );

  // The ranges it hands on describe the new file, without what changed during the copy.
  const next = second.unchangedRanges();
  t.equal(next.get('k8'), undefined, 'touched during the copy: no range');
  t.equal(next.size, 19, 'k0-k19 and k20, but for k12 (gone) and k8 (changed)');
  for (const k of ['k0', 'k5', 'k13', 'k20']) {
    const r = next.get(k)!;
    t.equal(
      secondBytes.subarray(r.offset, r.offset + r.length).toString(),
      `"${k}":${JSON.stringify(items[k])}`,
      `${k} where it lies in the new file`,
    );
  }

  // And a third copy from those: a chain of incremental snapshots stays exact.
  const third = new SnapshotCopy({ seq: 3 }, state, 'items', next);
  while (!third.step(0, 100));
  t.equal(withoutLayout(t, textOf(third.drain(), secondBytes), 'items'), JSON.stringify({ seq: 3, state }));
  t.throws(() => new SnapshotCopy({}, state, 'items').unchangedRanges(), /not drained whole/);
});

/** Closes `store` without a checkpoint and checks that `dir` opens again to the same state. */
async function reopensTheSame(t: Test, store: Store<S, R>, dir: string, message: string): Promise<void> {
  const live = structuredClone(store.state);
  await store.close({ checkpoint: false });
  const again = await open(dir);
  t.same(again.state, live, message);
  await again.close();
}

/**
 * A checkpoint of a store whose entries are k0-k299, with commits between its slices: to
 * entries it has not reached, entries it has, and ones it copies as bytes. Resolves once both are done.
 */
async function checkpointWhileCommitting(store: Store<S, R>): Promise<void> {
  const cp = store.checkpoint();
  let done = false;
  void cp.then(() => (done = true));
  const commits: Array<Promise<void>> = [];
  for (let round = 0; !done && round < 300; round++) {
    commits.push(
      store.commit(
        { op: 'push', k: `k${299 - round}`, x: 1000 + round },
        { op: 'set', k: `k${round}`, v: -round },
        { op: 'del', k: `k${(round * 7) % 300}` },
      ),
    );
    await tick();
  }
  await cp;
  await Promise.all(commits);
}

t.test(
  'checkpoints after the first copy only what changed, and each snapshot is the state at its instant',
  async (t) => {
    const dir = t.testdir();
    const logged: Array<{ bytes: number; reusedBytes: number }> = [];
    const store = await Store.open<S, R>({
      ...optionsOf(dir),
      logger: { info: (o) => void ('reusedBytes' in o && logged.push(o as never)), warn() {}, error() {} },
    });
    for (let i = 0; i < 300; i++) await store.commit({ op: 'set', k: `k${i}`, v: i }, { op: 'push', k: `k${i}`, x: i });
    await store.checkpoint();
    t.equal(logged[0]!.reusedBytes, 0, 'the first checkpoint serializes every entry');

    // Between checkpoints: changes, removals, new entries, a record that changes two.
    await store.commit(
      { op: 'push', k: 'k10', x: -1 },
      { op: 'del', k: 'k20' },
      { op: 'set', k: 'new1', v: 1 },
      { op: 'child', k: 'c1', parent: 'k30' },
    );
    const expected = structuredClone(store.state);
    const seq = store.lastSeq;
    await checkpointWhileCommitting(store);
    const snap = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'));
    t.same(snap.state, expected, 'every entry as it was when the checkpoint began');
    t.equal(snap.seq, seq);
    t.ok(
      logged[1]!.reusedBytes > logged[1]!.bytes / 2,
      `copied ${logged[1]!.reusedBytes} of ${logged[1]!.bytes} bytes from the snapshot before`,
    );
    t.equal(logged[1]!.bytes, (await readFile(join(dir, 'snapshot.json'))).length, 'its size in bytes');

    // A third, from the second's ranges, after what changed during the second's copy.
    await store.commit({ op: 'set', k: 'k250', v: 250_250 });
    const third = structuredClone(store.state);
    await store.checkpoint();
    t.same(JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')).state, third, 'the third snapshot too');
    t.ok(logged[2]!.reusedBytes > 0);

    await reopensTheSame(t, store, dir, 'snapshot + the journal after it = the live state');
  },
);

t.test('the snapshot a checkpoint replaces and the segments it retires are freed a chunk at a time', async (t) => {
  const dir = t.testdir();
  const store = await open(dir, 1_000);
  const text = 'x'.repeat(1_000);
  for (let i = 0; i < 3_000; i += 100)
    await store.commit(...Array.from({ length: 100 }, (_, j) => ({ op: 'fill' as const, k: `k${i + j}`, text })));
  await store.checkpoint(); // the first snapshot, ~3 MB, and the segment of those commits retired
  await store.freed();
  // Handles on the files the next checkpoint replaces and retires: their sizes once freed.
  const snapshot = await openFile(join(dir, 'snapshot.json'), 'r');
  t.teardown(() => snapshot.close());
  for (let i = 0; i < 1_500; i += 100)
    await store.commit(
      ...Array.from({ length: 100 }, (_, j) => ({ op: 'fill' as const, k: `n${i + j}`, text: text + j })),
    );
  await store.commit({ op: 'fill', k: 'k1', text: 'changed' });
  const [segment] = (await readdir(join(dir, 'journal'))).filter((n) => n.endsWith('.wal'));
  const retired = await openFile(join(dir, 'journal', segment!), 'r');
  t.teardown(() => retired.close());
  const sizes = { snapshot: (await snapshot.stat()).size, segment: (await retired.stat()).size };
  t.ok(
    sizes.snapshot > 2 << 20 && sizes.segment > 1 << 20,
    `a snapshot of ${sizes.snapshot} bytes, a segment of ${sizes.segment}`,
  );
  await store.checkpoint();
  await store.freed();
  t.ok(
    (await snapshot.stat()).size <= 1 << 20,
    'the replaced snapshot was truncated a MiB at a time (an unlink or rename leaves it whole)',
  );
  t.ok((await retired.stat()).size <= 1 << 20, 'the retired segment too');
  t.notOk((await readdir(join(dir, 'journal'))).includes(segment!), 'its name gone');
  await reopensTheSame(t, store, dir, 'the new snapshot and journal hold the state');
});

type Line = { msg: string; level: string } & Record<string, unknown>;

/** A store on `dir` whose info and warn lines go to `lines` (what each says, and its fields). */
function openLogged(dir: string, lines: Line[], sliceEntries = 7) {
  return Store.open<S, R>({
    ...optionsOf(dir, sliceEntries),
    logger: {
      info: (o, msg) => void lines.push({ ...o, msg, level: 'info' }),
      warn: (o, msg) => void lines.push({ ...o, msg, level: 'warn' }),
      error() {},
    },
  });
}

/** The last checkpoint's log line. */
function lastCheckpoint(lines: readonly Line[]): { bytes: number; reusedBytes: number } {
  return lines.filter((l) => 'reusedBytes' in l).at(-1) as unknown as { bytes: number; reusedBytes: number };
}

/** Keys JSON writes with escapes, and in more bytes than characters. */
const ODD_KEYS = ['quote"d', 'back\\slash', 'tab\t', 'é💡'];

t.test('after a restart the first checkpoint copies the entries unchanged since the snapshot it loaded', async (t) => {
  const dir = t.testdir();
  const first = await open(dir);
  for (let i = 0; i < 300; i++) await first.commit({ op: 'set', k: `k${i}`, v: i }, { op: 'push', k: `k${i}`, x: i });
  for (const k of ODD_KEYS) await first.commit({ op: 'set', k, v: 1 });
  await first.checkpoint();
  // After the snapshot, in the journal only: changes, a removal, new entries, a record that changes two.
  await first.commit(
    { op: 'push', k: 'k10', x: -1 },
    { op: 'del', k: 'k20' },
    { op: 'set', k: 'new1', v: 1 },
    { op: 'child', k: 'c1', parent: 'k30' },
  );
  await first.close({ checkpoint: false }); // as after a crash: the journal replays at open

  const lines: Line[] = [];
  const store = await openLogged(dir, lines);
  t.equal(store.recovery.replayed, 1);
  await store.indexed();
  const indexed = lines.find((l) => l.msg.startsWith('store: indexed'));
  t.equal(indexed?.entries, 304 - 3, 'every entry of the file but those the journal changed (k10, k20, k30)');

  // A checkpoint with commits going on meanwhile, as in the daemon.
  await store.commit({ op: 'set', k: 'k40', v: -40 });
  const expected = structuredClone(store.state);
  await checkpointWhileCommitting(store);
  const written = lastCheckpoint(lines);
  t.ok(
    written.reusedBytes > written.bytes / 2,
    `copied ${written.reusedBytes} of ${written.bytes} bytes from the snapshot loaded at open`,
  );
  const bytes = await readFile(join(dir, 'snapshot.json'));
  t.equal(
    withoutLayout(t, bytes, 'items'),
    JSON.stringify(JSON.parse(bytes.toString()), (k, v: unknown) => (k === 'layout' ? undefined : v)),
    'its layout is right for the next start',
  );
  t.same(JSON.parse(bytes.toString()).state, expected, 'every entry as it was when the checkpoint began');

  await reopensTheSame(t, store, dir, 'snapshot + the journal after it = the live state');
});

t.test('commits made while the loaded snapshot is indexed keep their entries from being copied from it', async (t) => {
  const dir = t.testdir();
  const first = await open(dir);
  for (let i = 0; i < 200; i++) await first.commit({ op: 'set', k: `k${i}`, v: i });
  await first.close(); // a clean stop: nothing to replay

  const lines: Line[] = [];
  const store = await openLogged(dir, lines, 1); // one entry per slice
  let indexed = false;
  void store.indexed().then(() => (indexed = true));
  let rounds = 0;
  const commits: Array<Promise<void>> = [];
  for (; !indexed && rounds < 400; rounds++) {
    // Entries it has indexed already and entries still ahead of it; removals; one made again.
    // (About an entry a round: k0-k99 once indexed, k150-k199 before; k100-k149 left alone.)
    commits.push(
      store.commit(
        { op: 'push', k: `k${Math.floor(rounds / 2) % 100}`, x: -rounds },
        { op: 'push', k: `k${199 - (Math.floor(rounds / 4) % 50)}`, x: -rounds },
      ),
    );
    if (rounds % 10 === 0)
      commits.push(
        store.commit({ op: 'del', k: `k${(rounds * 3) % 100}` }, { op: 'set', k: `k${(rounds * 3) % 100}`, v: -1 }),
      );
    await tick();
  }
  await store.indexed();
  await Promise.all(commits);
  t.ok(rounds > 5, `commits between ${rounds} slices of the indexing`);
  const expected = structuredClone(store.state);
  await store.checkpoint();
  const written = lastCheckpoint(lines);
  t.ok(written.reusedBytes > 0, 'the entries nobody changed are copied');
  t.same(JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')).state, expected, 'the others as they are now');
  await store.close();
});

t.test('a checkpoint asked for while the loaded snapshot is indexed is the state when the indexing ends', async (t) => {
  const dir = t.testdir();
  const first = await open(dir);
  for (let i = 0; i < 200; i++) await first.commit({ op: 'set', k: `k${i}`, v: i });
  await first.close();

  const lines: Line[] = [];
  const store = await openLogged(dir, lines, 1); // one entry per slice
  let indexed = false;
  void store.indexed().then(() => (indexed = true));
  const commits: Array<Promise<void>> = [store.commit({ op: 'push', k: 'k0', x: -1 })];
  const checkpoint = store.checkpoint(); // while it indexes
  let rounds = 0;
  // Commits land in turns of the event loop; the checkpoint takes the state in the microtasks
  // right after the indexing ends, before the next turn: so it has every commit of this loop.
  for (; !indexed && rounds < 400; rounds++) {
    commits.push(
      store.commit({ op: 'push', k: `k${(rounds * 13) % 100}`, x: rounds }, { op: 'set', k: `n${rounds}`, v: rounds }),
    ); // k100-k199 left alone
    await tick();
  }
  t.ok(rounds > 5, `commits between ${rounds} slices of the indexing`);
  const expected = structuredClone(store.state);
  await checkpoint;
  await Promise.all(commits);
  t.same(
    JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')).state,
    expected,
    'the snapshot is the state as the indexing ended',
  );
  t.ok(lastCheckpoint(lines).reusedBytes > 0, 'the entries nobody changed are copied from the loaded snapshot');
  await reopensTheSame(t, store, dir, 'and the directory opens to the live state');
});

t.test('a store closed while its loaded snapshot is indexed closes cleanly and opens to the same state', async (t) => {
  const dir = t.testdir();
  const first = await open(dir);
  for (let i = 0; i < 200; i++) await first.commit({ op: 'set', k: `k${i}`, v: i });
  await first.close();
  const store = await open(dir, 1);
  let indexed = false;
  void store.indexed().then(() => (indexed = true));
  const pending = store.commit({ op: 'push', k: 'k5', x: 1 });
  t.notOk(indexed, 'still indexing');
  const live = structuredClone(store.state);
  await store.close();
  await pending;
  const again = await open(dir);
  t.same(again.state, live);
  await again.close();
});

/**
 * A store of k0-k19 and kAAA, closed, its snapshot's bytes edited, then opened again, indexed, k19
 * changed and checkpointed: checks the snapshot is the state and the store goes on. Gives the
 * store's info and warn lines, and the bytes that checkpoint copied.
 */
async function restartEdited(t: Test, edit: (bytes: Buffer) => Buffer): Promise<{ lines: Line[]; reused: number }> {
  const dir = t.testdir();
  const first = await open(dir);
  for (let i = 0; i < 20; i++) await first.commit({ op: 'set', k: `k${i}`, v: i });
  await first.commit({ op: 'set', k: 'kAAA', v: 99 });
  await first.close();
  const path = join(dir, 'snapshot.json');
  await writeFile(path, edit(await readFile(path)));
  // The manifest's checksum would refuse the edit: one vouching for it stands for a directory
  // written before manifests, adopted, which is what these tests look at (the layout's checks).
  await adoptAsIs(dir);
  const lines: Line[] = [];
  const store = await openLogged(dir, lines);
  await store.indexed();
  // k19 changed: the copy's run of unchanged entries after it starts at kAAA, where the copy
  // checks the key's bytes.
  await store.commit({ op: 'set', k: 'k19', v: -1 });
  const expected = structuredClone(store.state);
  await store.checkpoint();
  t.equal(store.failed, null, 'the store goes on');
  t.same(JSON.parse(await readFile(path, 'utf8')).state, expected, 'the snapshot is the state');
  await store.close();
  return { lines, reused: lastCheckpoint(lines).reusedBytes };
}

t.test(
  'a layout that does not match its snapshot is not used: the first checkpoint serializes every entry',
  async (t) => {
    type Damage = (snapshot: { layout?: { at: number; lengths: unknown[] } }) => void;
    const make = async (damage: Damage) => {
      const { lines, reused } = await restartEdited(t, (bytes) => {
        const snapshot = JSON.parse(bytes.toString('utf8'));
        damage(snapshot);
        return Buffer.from(JSON.stringify(snapshot)); // the same bytes as written, but the damage
      });
      return { reused, warned: lines.filter((l) => l.level === 'warn') };
    };
    const cases: Array<[string, Damage, RegExp]> = [
      [
        'a length one byte long',
        (s) => void (s.layout!.lengths[7] = (s.layout!.lengths[7] as number) + 1),
        /no "\{" or "," before entry 8/,
      ],
      [
        'the first entry one byte early',
        (s) => void (s.layout!.at -= 1),
        /entry 0 does not begin with its key|no "\{" or ","/,
      ],
      ['an entry missing', (s) => void s.layout!.lengths.pop(), /does not close/],
      ['an entry too many', (s) => void s.layout!.lengths.push(12), /past the end|no "\{" or ","/],
      ['a length that is not one', (s) => void (s.layout!.lengths[3] = 'x'), /not a length/],
    ];
    for (const [what, damage, reason] of cases) {
      const { reused, warned } = await make(damage);
      t.equal(reused, 0, `${what}: nothing copied`);
      t.match(warned, [{ mismatch: reason }], `${what}: a warning says why`);
    }
    // A snapshot from before layouts: nothing copied, nothing to warn of.
    const older = await make((s) => void delete s.layout);
    t.same(older, { reused: 0, warned: [] }, 'no layout: every entry serialized, no warning');
  },
);

t.test(
  'the index reads a big snapshot a MiB at a time: entries across its reads, and one bigger than a read',
  async (t) => {
    const dir = t.testdir();
    const first = await open(dir, 1000);
    // ~3 MiB of entries of ~1 KiB, keys of different lengths (some fall across the 1 MiB reads),
    // then one of 1.5 MiB, then more.
    const fill = (i: number) => ({
      op: 'fill' as const,
      k: `k${i}-${'x'.repeat(i % 40)}`,
      text: `${i} ${'t'.repeat(900 + (i % 250))}`,
    });
    for (let i = 0; i < 3000; i += 100) await first.commit(...Array.from({ length: 100 }, (_, j) => fill(i + j)));
    await first.commit({ op: 'fill', k: 'big', text: 'b'.repeat(1.5 * 2 ** 20) });
    await first.commit(...Array.from({ length: 100 }, (_, j) => fill(3000 + j)));
    await first.close();
    const size = (await readFile(join(dir, 'snapshot.json'))).length;
    t.ok(size > 4 * 2 ** 20, `a snapshot of ${(size / 2 ** 20).toFixed(1)} MiB`);

    const lines: Line[] = [];
    const store = await openLogged(dir, lines, 1000);
    await store.indexed();
    t.equal(lines.find((l) => l.msg.startsWith('store: indexed'))?.entries, 3101, 'every entry found');
    t.same(
      lines.filter((l) => l.level === 'warn'),
      [],
    );
    await store.commit({ op: 'fill', k: `k1500-${'x'.repeat(20)}`, text: 'changed' });
    const expected = structuredClone(store.state);
    await store.checkpoint();
    t.ok(lastCheckpoint(lines).reusedBytes > size * 0.9, 'nearly all of it copied');
    t.same(JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')).state, expected, 'the snapshot is the state');
    await store.close();
  },
);

t.test(
  'a key whose bytes are not what JSON.stringify writes is serialized again, and a key twice is a mismatch',
  async (t) => {
    // Edited in place: the same length, so the layout still fits.
    const edited = (edit: (bytes: Buffer) => void) =>
      restartEdited(t, (bytes) => {
        edit(bytes);
        return bytes;
      });
    // A key with bytes that are not UTF-8: it was parsed as U+FFFD, which JSON writes as other bytes.
    const invalid = await edited((bytes) => bytes.write('\xF0\x90\x80', bytes.indexOf('"kAAA":') + 2, 'latin1'));
    t.ok(invalid.reused > 0, 'the other entries are copied');
    t.same(
      invalid.lines.filter((l) => l.level === 'warn'),
      [],
      'nothing to warn of: that entry is serialized again',
    );
    // The same key twice in the file (JSON.parse keeps the last).
    const twice = await edited((bytes) => bytes.write('"k4":', bytes.indexOf('"k5":'), 'latin1'));
    t.equal(twice.reused, 0, 'a key twice: nothing copied');
    t.match(
      twice.lines.filter((l) => l.level === 'warn'),
      [{ mismatch: /key is an earlier entry's/ }],
    );
  },
);

t.test('a snapshot whose bytes are not where its ranges say fails the checkpoint, not the data', async (t) => {
  const dir = t.testdir();
  const store = await open(dir, 1000);
  for (let i = 0; i < 30; i++) await store.commit({ op: 'set', k: `k${i}`, v: i });
  await store.checkpoint();
  await store.commit({ op: 'set', k: 'k9', v: -9 }); // so a range starts at k10
  // Damage the last snapshot where k10 begins (the store keeps that file open to copy from).
  const path = join(dir, 'snapshot.json');
  const at = (await readFile(path)).indexOf('"k10":');
  const fh = await openFile(path, 'r+');
  await fh.write('"x10"', at);
  await fh.close();
  await t.rejects(store.checkpoint(), { code: 'STORE_FAILED', message: /does not hold entry k10/ });
  t.notOk(
    (await readdir(dir)).some((f) => f.endsWith('.tmp')),
    'no temporary file left',
  );
  await store.close();
});

t.test(
  'keys of the state that are derived are left out of snapshots and start as initialState gives them',
  async (t) => {
    const dir = t.testdir();
    const options = { ...optionsOf(dir), derived: ['before'] };
    const store = await Store.open<S, R>(options);
    for (let i = 0; i < 20; i++) await store.commit({ op: 'set', k: `k${i}`, v: i });
    await store.checkpoint(); // sliced (snapshotCollection)
    const snap = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'));
    t.same(Object.keys(snap.state), ['items', 'after'], 'no "before" in the snapshot');
    await store.commit({ op: 'set', k: 'k0', v: -1 });
    await store.close({ checkpoint: false });

    // An older snapshot that held it: what it held is not taken; the journal after it still applies.
    snap.state.before = { count: 1000 };
    await writeFile(join(dir, 'snapshot.json'), JSON.stringify(snap));
    await adoptAsIs(dir); // written by a version before manifests (and before `derived`), adopted
    const again = await Store.open<S, R>(options);
    t.same(again.state.before, { count: 1 }, "initialState's, then the one record after the snapshot");
    t.equal(again.state.items.k0?.v, -1);
    await again.close({ checkpoint: false });

    // The same with a snapshot written at once (no snapshotCollection).
    const plainDir = t.testdir();
    const { snapshotCollection: _sliced, ...plain } = { ...optionsOf(plainDir), derived: ['before'] };
    const whole = await Store.open<S, R>(plain);
    await whole.commit({ op: 'set', k: 'a', v: 1 });
    await whole.checkpoint();
    t.same(Object.keys(JSON.parse(await readFile(join(plainDir, 'snapshot.json'), 'utf8')).state), ['items', 'after']);
    t.same(whole.state.before, { count: 1 }, 'the live state keeps it');
    await whole.close({ checkpoint: false });
  },
);
