import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { readFileBytes } from '../../../src/daemon/store/snapshot-file.js';
import { Store } from '../../../src/daemon/store/store.js';
import { appliedAtCommit } from '../../helpers/store-suite.js';

interface S {
  n: number;
  log: string[];
}
type R = { op: 'add'; by: number } | { op: 'note'; text: string } | { op: 'boom' };

function applyR(s: S, r: R): void {
  if (r.op === 'boom') throw new Error('bad record');
  if (r.op === 'add') s.n += r.by;
  else s.log.push(r.text);
}

function open(
  dir: string,
  extra: { checkpointEvery?: number; warnings?: object[]; snapshotBytes?: Promise<Buffer | null> } = {},
) {
  return Store.open<S, R>({
    dir,
    snapshotBytes: extra.snapshotBytes,
    initialState: () => ({ n: 0, log: [] }),
    apply: applyR,
    checkpointEvery: extra.checkpointEvery,
    logger: { info() {}, error() {}, warn: (obj) => extra.warnings?.push(obj) },
  });
}

t.test('commits apply at once and survive reopen', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  const p = store.commit({ op: 'add', by: 2 }, { op: 'note', text: 'x' });
  t.equal(store.state.n, 2, 'visible to the next decision before it is durable');
  await p;
  await store.commit({ op: 'add', by: 3 });
  await store.close({ checkpoint: false });
  const again = await open(dir);
  t.same(again.state, { n: 5, log: ['x'] });
  t.equal(again.recovery.replayed, 2, 'two journal entries: one per commit');
  await again.close();
});

t.test('the records of one commit are one entry: all or none after a crash', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 1 });
  await store.commit({ op: 'add', by: 10 }, { op: 'note', text: 'pair' });
  await store.close({ checkpoint: false });
  const seg = join(dir, 'journal', (await readdir(join(dir, 'journal')))[0]!);
  const buf = await readFile(seg);
  await writeFile(seg, buf.subarray(0, buf.length - 3)); // tear the two-record entry
  const warnings: object[] = [];
  const again = await open(dir, { warnings });
  t.same(again.state, { n: 1, log: [] }, 'neither record of the torn entry was applied');
  t.equal(warnings.length, 1, 'the cut is logged as a WARN');
  await again.close();
});

t.test('checkpoint writes an atomic snapshot and retires the journal', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  for (let i = 0; i < 10; i++) await store.commit({ op: 'add', by: 1 });
  await store.checkpoint();
  const snap = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'));
  t.equal(snap.seq, 10);
  t.same(snap.state, { n: 10, log: [] });
  t.equal((await stat(join(dir, 'snapshot.json'))).mode & 0o777, 0o600);
  t.same(
    await readdir(join(dir, 'journal')),
    ['00000000000000000011.wal'],
    'the covered segment is gone; the next one exists, empty, listed in the manifest',
  );
  t.notOk(
    (await readdir(dir)).some((f) => f.endsWith('.tmp')),
    'no temporary file left',
  );
  await store.commit({ op: 'add', by: 5 });
  await store.close({ checkpoint: false });
  const again = await open(dir);
  t.equal(again.state.n, 15);
  t.equal(again.recovery.snapshotSeq, 10);
  t.equal(again.recovery.replayed, 1, 'restart replays only what came after the snapshot');
  await again.close();
});

t.test('the snapshot is the state at the checkpoint even while commits continue', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 1 });
  const cp = store.checkpoint();
  const later = store.commit({ op: 'add', by: 100 }); // mutates state while the snapshot is written
  await Promise.all([cp, later]);
  const snap = JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'));
  t.same([snap.seq, snap.state.n], [1, 1]);
  await store.close({ checkpoint: false });
  t.equal((await open(dir)).state.n, 101);
});

t.test('automatic checkpoints keep restart work bounded', async (t) => {
  const dir = t.testdir();
  const store = await open(dir, { checkpointEvery: 100 });
  for (let i = 0; i < 1000; i++) await store.commit({ op: 'add', by: 1 });
  await store.close({ checkpoint: false });
  const again = await open(dir);
  t.equal(again.state.n, 1000);
  t.ok(again.recovery.replayed <= 100, `replayed ${again.recovery.replayed} entries, not 1000`);
  t.ok((await readdir(join(dir, 'journal'))).length <= 2, 'old segments were retired');
  await again.close();
});

t.test('an automatic checkpoint also waits until the journal since the last is as big as that snapshot', async (t) => {
  const dir = t.testdir();
  const big = 'x'.repeat(100_000);
  const snapshotSeq = async () =>
    (JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')) as { seq: number }).seq;
  const store = await open(dir, { checkpointEvery: 10 });
  await store.commit({ op: 'note', text: big });
  await store.checkpoint(); // a snapshot of ~100 KB
  // Each small commit journals ~60 bytes: 100 of them are far more than 10 entries but much
  // less than the snapshot. (close waits for a checkpoint under way, and adds none here.)
  for (let i = 0; i < 100; i++) await store.commit({ op: 'add', by: 1 });
  await store.close({ checkpoint: false });
  t.equal(await snapshotSeq(), 1, 'no checkpoint: 100 entries since, ~6 KB against a 100 KB snapshot');

  // Reopened, the segments read count as journaled since the snapshot, whose size is the file's.
  const again = await open(dir, { checkpointEvery: 10 });
  await again.commit({ op: 'note', text: big }); // now the journal since is the bigger
  await again.close({ checkpoint: false });
  t.equal(await snapshotSeq(), 102, 'checkpointed at the commit that made the journal since outgrow the snapshot');
  const last = await open(dir);
  t.equal(last.state.n, 100);
  t.equal(last.state.log.length, 2);
  await last.close();
});

t.test('a record that cannot be applied fails the store for good', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  let told: unknown = null;
  store.onFailure((err) => (told = err));
  await store.commit({ op: 'add', by: 1 });
  await t.rejects(store.commit({ op: 'boom' }), { code: 'STORE_FAILED' });
  t.match(told, { code: 'STORE_FAILED' }, 'the owner is told');
  await t.rejects(store.commit({ op: 'add', by: 1 }), { code: 'STORE_FAILED' }, 'no write after a failure');
  await store.close();
  t.equal((await open(dir)).state.n, 1, 'the failed record was never journaled');
});

t.test('a damaged snapshot refuses to open', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 1 });
  await store.close();
  await writeFile(join(dir, 'snapshot.json'), '{"format":1,"seq":1,"sta');
  await t.rejects(open(dir), { code: 'SNAPSHOT_CORRUPT' });
});

t.test('a temporary snapshot left by a crash mid-checkpoint is ignored and replaced', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 7 });
  await store.close();
  await writeFile(join(dir, '.snapshot.json.tmp'), '{"format":1,"seq":99,"state":{"n":-1'); // torn, never renamed
  const again = await open(dir);
  t.equal(again.state.n, 7, 'the renamed snapshot is the truth');
  await again.commit({ op: 'add', by: 1 });
  await again.close();
  t.equal((await open(dir)).state.n, 8);
  t.notOk((await readdir(dir)).includes('.snapshot.json.tmp'), 'the next checkpoint replaced it');
});

t.test('commits after close are refused', async (t) => {
  const store = await open(t.testdir());
  await store.close();
  await t.rejects(store.commit({ op: 'add', by: 1 }), { code: 'STORE_CLOSED' });
});

t.test('divert: records kept out of the journal are durable elsewhere, and settle undoes their effect', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  await store.commit({ op: 'add', by: 1 });
  let release!: () => void;
  const written = new Promise<void>((resolve) => (release = resolve));
  const offered: Array<{ records: readonly R[]; serialized: readonly string[] }> = [];
  // Takes a transaction that only adds, and settles it by adding the opposite.
  const divert = (records: readonly R[], serialized: readonly string[]) => {
    offered.push({ records, serialized });
    const by = records.reduce((sum, r) => sum + (r.op === 'add' ? r.by : Number.NaN), 0);
    return Number.isNaN(by) ? null : { durable: written, settle: [{ op: 'add', by: -by } as const] };
  };
  const tx = store.transact(
    appliedAtCommit(store, applyR, (emit) => {
      emit({ op: 'add', by: 5 });
      emit({ op: 'add', by: 2 });
    }),
    divert,
  );
  t.same(
    offered[0],
    {
      records: [
        { op: 'add', by: 5 },
        { op: 'add', by: 2 },
      ],
      serialized: ['{"op":"add","by":5}', '{"op":"add","by":2}'],
    },
    'offered as they would be journaled',
  );
  t.equal(store.state.n, 8, 'applied at once, as any transaction');
  t.equal(store.lastSeq, 1, 'not journaled');
  let durable = false;
  void tx.durable.then(() => (durable = true));
  let flushed = false;
  const flush = store.flush().then(() => (flushed = true));
  await store.commit({ op: 'note', text: 'later' }); // a journal write after it completes meanwhile
  t.notOk(durable || flushed, 'neither durable nor flushed before the write elsewhere is');
  release();
  await tx.durable;
  await flush;
  t.ok(tx.settle, 'a diverted transaction can be settled');
  tx.settle!();
  tx.settle!();
  t.equal(store.state.n, 1, 'settled once: its effect undone');
  const journaled = store.transact(
    appliedAtCommit(store, applyR, (emit) => emit({ op: 'note', text: 'kept' })),
    divert,
  );
  t.equal(journaled.settle, null, 'a transaction divert declined is journaled as usual');
  await journaled.durable;
  t.equal(store.lastSeq, 3);
  const threw = store.transact(
    appliedAtCommit(store, applyR, (emit) => emit({ op: 'note', text: 'despite' })),
    () => {
      throw new Error('a bug in divert');
    },
  );
  await threw.durable;
  t.equal(store.lastSeq, 4, 'a divert that throws leaves the transaction to the journal');
  t.equal(store.failed, null);
  await store.close();
  const again = await open(dir);
  t.same(
    again.state,
    { n: 1, log: ['later', 'kept', 'despite'] },
    'recovery needs neither the diverted records nor their settle',
  );
  await again.close();
});

t.test('divert: a failed write elsewhere fails the store, as a journal write would', async (t) => {
  const store = await open(t.testdir());
  let told: unknown = null;
  store.onFailure((err) => (told = err));
  const tx = store.transact(
    appliedAtCommit(store, applyR, (emit) => emit({ op: 'add', by: 1 })),
    () => ({ durable: Promise.reject(new Error('disk full')), settle: [] }),
  );
  await t.rejects(tx.durable, { code: 'STORE_FAILED', message: /kept out of the journal failed: disk full/ });
  t.match(told, { code: 'STORE_FAILED' }, 'the owner is told');
  await t.rejects(store.flush(), { code: 'STORE_FAILED' });
  await t.rejects(store.commit({ op: 'add', by: 1 }), { code: 'STORE_FAILED' }, 'no write after a failure');
  await store.close();
});

t.test('flush waits for a segment still closing after a checkpoint roll', async (t) => {
  const dir = t.testdir();
  const store = await open(dir);
  const first = store.commit({ op: 'add', by: 1 });
  const cp = store.checkpoint(); // rolls: the commit above is in the segment being closed
  let flushed = false;
  const f = store.flush().then(() => (flushed = true));
  let committed = false;
  void first.then(() => (committed = true));
  await f;
  t.ok(committed || flushed, 'flush resolved');
  t.ok(committed, 'flush resolved only after the earlier commit was durable');
  await cp;
  await store.close();
});

// Coalescing, transact and divert as every store has them: test/helpers/store-suite.ts.

t.test(
  'given the bytes of its snapshot read already (a daemon starting), the store parses those instead of reading the file',
  async (t) => {
    const dir = t.testdir();
    const store = await open(dir);
    await store.commit({ op: 'add', by: 7 });
    await store.close(); // checkpointed: the snapshot holds n = 7
    const bytes = await readFile(join(dir, 'snapshot.json'));
    await writeFile(join(dir, 'snapshot.json'), '{"not":"read"}');
    const again = await open(dir, { snapshotBytes: Promise.resolve(bytes) });
    t.same(again.state, { n: 7, log: [] });
    await again.close({ checkpoint: false });
    await t.rejects(open(dir, { snapshotBytes: Promise.resolve(Buffer.from('{"torn')) }), { code: 'SNAPSHOT_CORRUPT' });
    // A read that fails (here: a directory) fails the open, with the read's error.
    await t.rejects(open(dir, { snapshotBytes: readFileBytes(dir) }), { code: 'EISDIR' });
    t.equal(await readFileBytes(join(dir, 'none.json')), null, 'no such file: no snapshot');
  },
);

t.test('a snapshot is read whole, in as many pieces as it takes', async (t) => {
  const dir = t.testdir();
  const content = randomBytes((1 << 20) + 3);
  await writeFile(join(dir, 'snapshot.json'), content);
  for (const piece of [1 << 16, (1 << 16) + 1, 1 << 26]) {
    const bytes = await readFileBytes(join(dir, 'snapshot.json'), piece);
    t.ok(bytes?.equals(content), `pieces of ${piece} bytes`);
  }
  await writeFile(join(dir, 'empty.json'), '');
  t.equal((await readFileBytes(join(dir, 'empty.json')))?.length, 0, 'an empty file is zero bytes, not null');
});
