import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { backupDataDir } from '../../src/daemon/backup.js';
import { checkDataDir } from '../../src/daemon/check.js';
import { History } from '../../src/daemon/store/history.js';
import { Store } from '../../src/daemon/store/store.js';
import { isWfxError } from '../../src/shared/errors.js';

type S = { n: number };
type R = { by: number };

async function source(t: { teardown(fn: () => unknown): void }, dataDir: string) {
  const store = await Store.open<S, R>({
    dir: dataDir,
    initialState: () => ({ n: 0 }),
    apply: (s, r) => void (s.n += r.by),
  });
  const history = await History.open(join(dataDir, 'history'));
  t.teardown(async () => {
    await history.close();
    await store.close({ checkpoint: false });
  });
  return { dataDir, store, history };
}

t.test('the snapshot is hard-linked on the same file system; history is copied up to its durable end', async (t) => {
  const root = t.testdir();
  const src = await source(t, join(root, 'data'));
  for (let i = 0; i < 5; i++) await src.store.commit({ by: i });
  await src.history.put('2026-01-02', 'exec-1', { done: true });
  const report = await backupDataDir(src, join(root, 'copy'));
  t.match(report, { directory: join(root, 'copy'), snapshotSeq: 5, lastSeq: 5 });
  t.equal(
    (await stat(join(root, 'copy', 'snapshot.json'))).ino,
    (await stat(join(root, 'data', 'snapshot.json'))).ino,
    'one file, two names',
  );
  t.same(await checkDataDir(join(root, 'copy')), []);
  const copied = await History.open(join(root, 'copy', 'history'));
  t.same(await copied.get('2026-01-02', 'exec-1'), { done: true });
  await copied.close();
});

t.test("the file store's blobs come along, linked; work in progress does not", async (t) => {
  const root = t.testdir();
  const src = await source(t, join(root, 'data'));
  await src.store.commit({ by: 1 });
  const blob = 'ab'.padEnd(64, 'c');
  await mkdir(join(root, 'data', 'files', 'ab'), { recursive: true });
  await mkdir(join(root, 'data', 'files', 'tmp'), { recursive: true });
  await writeFile(join(root, 'data', 'files', 'ab', blob), 'content');
  await writeFile(join(root, 'data', 'files', 'tmp', 'x.part'), 'half');
  await backupDataDir(src, join(root, 'copy'));
  t.equal(await readFile(join(root, 'copy', 'files', 'ab', blob), 'utf8'), 'content');
  t.equal(
    (await stat(join(root, 'copy', 'files', 'ab', blob))).ino,
    (await stat(join(root, 'data', 'files', 'ab', blob))).ino,
    'a hard link: blobs never change',
  );
  t.same(await readdir(join(root, 'copy', 'files')), ['ab'], 'no tmp');
});

t.test('a read that fails during the copy: BACKUP_FAILED, the target removed, checkpoints run again', async (t) => {
  const root = t.testdir();
  const src = await source(t, join(root, 'data'));
  await src.store.commit({ by: 1 });
  // A directory where a history file should be: its read fails (EISDIR), as a bad disk's would.
  await mkdir(join(root, 'data', 'history', '2026-01-01.jsonl'));
  const target = join(root, 'copy');
  let code: string | null = null;
  try {
    await backupDataDir(src, target);
  } catch (err) {
    if (!isWfxError(err)) throw err;
    code = err.code;
  }
  t.equal(code, 'BACKUP_FAILED');
  t.notOk((await readdir(root)).includes('copy'), 'nothing partial left');
  await src.store.commit({ by: 1 });
  await src.store.checkpoint(); // would wait for ever if the hold had not been released
  t.pass('the hold was released');
});

/** /dev/shm when it is another file system than the test directories' (a tmpfs, as on most Linux hosts). */
const secondFs = await stat('/dev/shm')
  .then(async (shm) => (shm.dev !== (await stat(process.cwd())).dev ? '/dev/shm' : null))
  .catch(() => null);

t.test(
  'on another file system the snapshot is copied, not linked, and the copy is sound',
  {
    skip:
      secondFs === null
        ? 'no second file system here: /dev/shm is missing or on the same device as the test directory'
        : false,
  },
  async (t) => {
    const root = t.testdir();
    const elsewhere = await mkdtemp(join(secondFs!, 'wfx-backup-'));
    t.teardown(() => rm(elsewhere, { recursive: true, force: true }));
    const src = await source(t, join(root, 'data'));
    for (let i = 0; i < 3; i++) await src.store.commit({ by: i });
    const report = await backupDataDir(src, join(elsewhere, 'copy'));
    t.match(report, { snapshotSeq: 3, lastSeq: 3 });
    const copy = await stat(join(elsewhere, 'copy', 'snapshot.json'));
    const live = await stat(join(root, 'data', 'snapshot.json'));
    t.not(copy.dev, live.dev, 'the copy lies on the other file system');
    t.equal(copy.size, live.size, 'the whole snapshot copied');
    t.same(await checkDataDir(join(elsewhere, 'copy')), []);
  },
);
