import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import t from 'tap';
import { backupDataDir } from '../../../src/daemon/ops/backup.js';
import { checkDataDir } from '../../../src/daemon/ops/check.js';
import { History } from '../../../src/daemon/store/history.js';
import { readManifest } from '../../../src/daemon/store/manifest.js';
import { IMAGE_NAME } from '../../../src/daemon/at-rest/segments/directory-image.js';
import { Store } from '../../../src/daemon/store/store.js';
import { isWfxError } from '../../../src/shared/errors.js';
import { engineHarness } from '../../helpers/engine.js';
import { lazyOpens } from '../../helpers/lazy-opens.js';
import { segmentStoreOptions, type ItemRecord, type ItemState } from '../../helpers/segment-store.js';

type S = { n: number };
type R = { by: number };

async function source(t: { teardown(fn: () => unknown): void }, dataDir: string) {
  const store = await Store.open<S, R>({
    dir: dataDir,
    initialState: () => ({ n: 0 }),
    apply: (s, r) => void (s.n += r.by),
  });
  const history = await History.open(join(dataDir, 'history'));
  const audit = await History.open(join(dataDir, 'audit'));
  t.teardown(async () => {
    await history.close();
    await audit.close();
    await store.close({ checkpoint: false });
  });
  return { dataDir, store, history, audit };
}

t.test('the snapshot is hard-linked on the same file system; history and the audit trail are copied', async (t) => {
  const root = t.testdir();
  const src = await source(t, join(root, 'data'));
  for (let i = 0; i < 5; i++) await src.store.commit({ by: i });
  await src.history.put('2026-01-02', 'exec-1', { done: true });
  await src.audit.put('2026-01-02', 'record-1', { action: 'POST /admin/api-keys' });
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
  const trail = await History.open(join(root, 'copy', 'audit'));
  t.same(await trail.get('2026-01-02', 'record-1'), { action: 'POST /admin/api-keys' });
  await trail.close();
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
  t.same((await readdir(root)).sort(), ['data'], 'nothing partial left: no target, no partial copy');
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

/** The pid of a process that has exited (spawned, waited for). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

t.test(
  'the copy is assembled beside the target and renamed whole: the manifest last, the target never partial',
  async (t) => {
    const root = t.testdir();
    const src = await source(t, join(root, 'data'));
    await src.store.commit({ by: 1 });
    const target = join(root, 'copy');
    // What the parent holds once the store is held, as the copy begins.
    let seen: string[] = [];
    const store = {
      hold: async () => {
        const hold = await src.store.hold();
        seen = await readdir(root);
        return hold;
      },
    };
    const report = await backupDataDir({ ...src, store }, target);
    t.equal(report.lastSeq, 1);
    t.notOk(seen.includes('copy'), 'no target while the copy is made');
    t.match(
      seen.filter((n) => n !== 'data'),
      [/^copy\.partial-\d+-(\d+|x)-[0-9a-f]{8}$/],
      'a partial copy beside it, named as such',
    );
    t.same((await readdir(root)).sort(), ['copy', 'data'], 'renamed: nothing partial left');
    t.match(await readManifest(target), { lastSeq: 1, segments: [Number] }, 'the manifest says what the journal holds');
    t.equal((await stat(target)).mode & 0o777, 0o700);
  },
);

t.test(
  'an empty directory given is replaced whole; one filled meanwhile is refused, nothing partial left',
  async (t) => {
    const root = t.testdir({ empty: {}, filled: {} });
    const src = await source(t, join(root, 'data'));
    await src.store.commit({ by: 1 });
    await backupDataDir(src, join(root, 'empty'));
    t.same(await checkDataDir(join(root, 'empty')), [], 'the empty directory holds the copy');
    const store = {
      hold: async () => {
        const hold = await src.store.hold();
        await writeFile(join(root, 'filled', 'mine'), 'x'); // someone writes there during the copy
        return hold;
      },
    };
    await t.rejects(backupDataDir({ ...src, store }, join(root, 'filled')), { code: 'BACKUP_TARGET_NOT_EMPTY' });
    t.same(await readdir(join(root, 'filled')), ['mine'], 'what was written there is kept');
    t.same((await readdir(root)).sort(), ['data', 'empty', 'filled'], 'no partial copy left');
    await src.store.checkpoint(); // would wait for ever if the hold had not been released
  },
);

t.test(
  'a partial copy a dead process left is removed by the next backup to that target; one under way is kept',
  async (t) => {
    const root = t.testdir();
    const src = await source(t, join(root, 'data'));
    await src.store.commit({ by: 1 });
    const dead = join(root, `copy.partial-${await deadPid()}-x-0badc0de`);
    await mkdir(join(dead, 'journal'), { recursive: true });
    await writeFile(join(dead, 'journal', '00000000000000000001.wal'), 'a cut line');
    const live = join(root, `copy.partial-${process.pid}-x-0123abcd`); // this process: a backup under way
    await mkdir(live);
    const other = join(root, `copy-2.partial-${await deadPid()}-x-00000000`); // another target's
    await mkdir(other);
    const logged: object[] = [];
    const report = await backupDataDir({ ...src, logger: { info: (obj) => logged.push(obj) } }, join(root, 'copy'));
    t.same(report.removedPartials, [dead]);
    t.same(logged, [{ directory: dead }], 'and says so in the log');
    t.same(
      (await readdir(root)).sort(),
      ['copy', basename(other), basename(live), 'data'].sort(),
      "the live one and another target's are kept",
    );
    const second = await backupDataDir(src, join(root, 'copy-3'));
    t.equal(second.removedPartials, undefined, 'none: the field is absent');
  },
);

t.test('the execution segments the held snapshot lists come along; the check verifies them', async (t) => {
  const root = t.testdir();
  const dataDir = join(root, 'data');
  const store = await Store.open<ItemState, ItemRecord>(segmentStoreOptions(dataDir));
  const history = await History.open(join(dataDir, 'history'));
  const audit = await History.open(join(dataDir, 'audit'));
  t.teardown(async () => {
    await history.close();
    await audit.close();
    await store.close({ checkpoint: false });
  });
  await store.commit({ k: 'a', v: '1' }, { k: 'b', v: '1' });
  await store.checkpoint();
  await store.commit({ k: 'b', v: '2' }); // the backup's checkpoint writes segment 2
  await backupDataDir({ dataDir, store, history, audit }, join(root, 'copy'));
  t.same((await readdir(join(root, 'copy', 'executions'))).sort(), [
    '000001.index.json',
    '000001.jsonl',
    '000002.index.json',
    '000002.jsonl',
  ]);
  t.same(await checkDataDir(join(root, 'copy')), [], 'the copy checks clean');
  const copy = await Store.open<ItemState, ItemRecord>(segmentStoreOptions(join(root, 'copy')));
  t.same(copy.state.items, { a: { v: '1' }, b: { v: '2' } }, 'and opens with every entry');
  await copy.close({ checkpoint: false });
  // A listed segment damaged: the check names it.
  const damaged = join(root, 'copy', 'executions', '000001.jsonl');
  await rm(damaged); // a link to the source's file: another file in its place
  await writeFile(damaged, 'not a frame\n');
  const findings = await checkDataDir(join(root, 'copy'));
  t.ok(
    findings.some((f) => f.code === 'EXECUTION_SEGMENT_DAMAGED' && f.file.endsWith('000001.jsonl')),
    'the check reports the damaged segment',
  );
});

t.test('the directory image comes along: the copy opens from it, not from every index', async (t) => {
  const h = await engineHarness(t, undefined, undefined, { cold: false });
  const pid = await h.publish(`processId: AUTO
name: Waits for a message
nodes:
  start: { type: startEvent, next: wait }
  wait: { type: intermediateCatchEvent, eventType: message, messageRef: go, next: done }
  done: { type: endEvent }
`);
  for (let i = 0; i < 6; i++) await h.start(pid, {}, { correlationKey: `k-${i}` });
  await h.engine.close();
  await h.store.close();
  const { opens, open } = lazyOpens();
  await (await open(h.dir)).close(); // as a daemon's stop: it leaves the image
  const store = await open(h.dir);
  t.match(opens.at(-1), { image: 'used' }, 'the source opens from its image');
  const history = await History.open(join(h.dir, 'history'));
  const audit = await History.open(join(h.dir, 'audit'));
  t.teardown(async () => {
    await history.close();
    await audit.close();
    await store.close({ checkpoint: false });
  });
  const target = join(await mkdtemp(join(h.dir, '..', 'backup-')), 'copy');
  t.teardown(() => rm(join(target, '..'), { recursive: true, force: true }));
  await backupDataDir({ dataDir: h.dir, store, history, audit }, target);
  t.ok((await readdir(join(target, 'executions'))).includes(IMAGE_NAME), 'the copy has the image');
  t.same(await checkDataDir(target), [], 'the copy checks clean');
  const copy = await open(target);
  t.teardown(() => copy.close({ checkpoint: false }));
  t.match(opens.at(-1), { image: 'used', loaded: 0 }, 'the copy opens from the image, no index loaded');
  t.equal(copy.evictable!.unread!.size, store.evictable!.unread!.size, 'with every execution');
  t.equal(store.evictable!.unread!.subscribers('default', 'go', 'k-0').length, 1, 'one waits under k-0');
  for (const key of ['k-0', 'k-5'])
    t.same(
      copy.evictable!.unread!.subscribers('default', 'go', key),
      store.evictable!.unread!.subscribers('default', 'go', key),
      `the subscribers of ${key}`,
    );
});
