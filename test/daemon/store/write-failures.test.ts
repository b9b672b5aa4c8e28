import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
/**
 * Write errors in the middle of a file's life: injected by wrapping fs's callback writes (the
 * ones AppendFile makes: a write is passed on as a writev of its bytes), in this test process
 * only. A disk that fails cannot be had on demand.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import t from 'tap';
import { executionsTouched, WFX_STORE } from '../../../src/daemon/state/records.js';
import { startedInstance } from '../../../src/daemon/state/records/execution.js';
import { AppendFile } from '../../../src/daemon/store/append-file.js';
import { AtomicFileWriter } from '../../../src/daemon/disk/durable-files.js';
import { History } from '../../../src/daemon/store/history.js';
import { Journal } from '../../../src/daemon/store/journal.js';
import { Store } from '../../../src/daemon/store/store.js';

type WritevCallback = (err: NodeJS.ErrnoException | null, written: number) => void;
/** Decides, for each writev, whether it fails and with which code (null: it goes through). */
let failWith: (fd: number, buffers: readonly Buffer[]) => string | null = () => null;
const zeroFds = new Set<number>();
const dataFds = new Set<number>();

const realWritev = fs.writev;
const wrapped = (fd: number, buffers: readonly NodeJS.ArrayBufferView[], ...rest: unknown[]): void => {
  const cb = rest.pop() as WritevCallback;
  const bufs = buffers as readonly Buffer[];
  const zeros = bufs.every((b) => b.every((x) => x === 0));
  (zeros ? zeroFds : dataFds).add(fd);
  const code = failWith(fd, bufs);
  // The bytes go to the file either way, as an O_DSYNC write whose sync failed leaves them in the page cache.
  (realWritev as (...args: unknown[]) => void)(fd, buffers, ...rest, (err: NodeJS.ErrnoException | null, n: number) =>
    cb(err ?? (code === null ? null : Object.assign(new Error(`${code}: injected`), { code })), n),
  );
};
const realWrite = fs.write;
const wrappedWrite = (
  fd: number,
  buffer: Buffer,
  offset: number,
  length: number,
  position: number | null,
  cb: WritevCallback,
): void => wrapped(fd, [buffer.subarray(offset, offset + length)], position, cb);
fs.writev = wrapped as typeof fs.writev;
fs.write = wrappedWrite as unknown as typeof fs.write;
syncBuiltinESMExports();
t.teardown(() => {
  fs.writev = realWritev;
  fs.write = realWrite;
  syncBuiltinESMExports();
});

const isZeros = (bufs: readonly Buffer[]) => bufs.every((b) => b.every((x) => x === 0));
const line = Buffer.from(`${'x'.repeat(1023)}\n`);

t.test('the zeros written ahead go out through a descriptor of their own', async (t) => {
  failWith = () => null;
  zeroFds.clear();
  dataFds.clear();
  const file = new AppendFile(join(t.testdir(), 'seg.wal'), 0, { preallocate: true });
  for (let i = 0; i < 40; i++) await file.append(line).durable; // past half of the first 64 KiB: an extension
  await file.close();
  t.ok(zeroFds.size > 0 && dataFds.size > 0, 'both kinds of write were made');
  t.same(
    [...zeroFds].filter((fd) => dataFds.has(fd)),
    [],
    'no descriptor wrote both: a writeback error of the data is reported to the data',
  );
});

t.test('an I/O error on the zeros written ahead fails the file for good', async (t) => {
  failWith = (_fd, bufs) => (isZeros(bufs) ? 'EIO' : null);
  t.teardown(() => (failWith = () => null));
  const file = new AppendFile(join(t.testdir(), 'seg.wal'), 0, { preallocate: true });
  // Appends go on until the extension's error is in: none is told it is durable after that.
  let failure: unknown = null;
  for (let i = 0; i < 200 && failure === null; i++) {
    try {
      await file.append(line).durable;
    } catch (err) {
      failure = err;
    }
  }
  t.match(failure, { code: 'EIO' }, 'appends fail with the error');
  t.ok(file.broken, 'the file is failed');
  t.throws(() => file.append(line), { code: 'EIO' }, 'and takes no more appends');
  await file.close().catch(() => undefined);
});

t.test('a file that cannot grow goes on without zeros ahead', async (t) => {
  failWith = (_fd, bufs) => (isZeros(bufs) ? 'ENOSPC' : null);
  t.teardown(() => (failWith = () => null));
  const path = join(t.testdir(), 'seg.wal');
  const file = new AppendFile(path, 0, { preallocate: true });
  for (let i = 0; i < 200; i++) await file.append(line).durable;
  t.notOk(file.broken, 'not failed');
  await file.close();
  const text = fs.readFileSync(path, 'latin1');
  t.equal(text.length, 200 * line.length, 'every line is there, and nothing after them');
  t.equal(text, line.toString('latin1').repeat(200));
});

t.test('after a failed history write, what was acknowledged is read back, and what failed is not', async (t) => {
  let failNext = false;
  failWith = (_fd, bufs) => {
    if (!failNext || isZeros(bufs)) return null;
    failNext = false;
    return 'EIO';
  };
  t.teardown(() => (failWith = () => null));
  const dir = t.testdir();
  const h = await History.open(dir);
  const day = '2026-11-22';
  await h.put(day, 'X', { v: 1 });
  failNext = true;
  const failed = await Promise.allSettled([
    h.put(day, 'A', { pad: 'a'.repeat(500) }),
    h.put(day, 'Y', { v: 'failed' }),
  ]);
  t.same(
    failed.map((r) => r.status),
    ['rejected', 'rejected'],
    'the write of A and Y failed',
  );
  t.same(
    (await h.list(day)).map((e) => e.id),
    ['X'],
    'a list while the appender is broken shows only what is durable',
  );
  await h.put(day, 'Y', { v: 'retried' });
  await h.put(day, 'Z', { pad: 'z'.repeat(600) });
  t.same(await h.get(day, 'Y'), { v: 'retried' }, 'the acknowledged copy of Y');
  t.same(await h.get(day, 'Z'), { pad: 'z'.repeat(600) }, 'Z, acknowledged after the failure');
  t.equal(await h.get(day, 'A'), null, 'A, never durable, is not there');
  t.same(
    (await h.list(day)).map((e) => e.id),
    ['Z', 'Y', 'X'],
  );
  await h.close();
});

t.test(
  'a checkpoint whose old journal segment fails to close has finished writing its snapshot when close() returns',
  async (t) => {
    failWith = () => null;
    const dir = t.testdir();
    const store = await Store.open({
      dir,
      ...WFX_STORE,
      snapshotCollection: executionsTouched,
      logger: { info() {}, warn() {}, error() {} },
    });
    for (let i = 0; i < 100; i++) {
      const id = `e${i}`;
      const instance = startedInstance(
        {
          processId: 'p',
          processName: 'P',
          processVersion: '1',
          organization: 'default',
          environment: 'PRODUCTION',
          correlationKey: null,
          parentInstanceId: null,
          variables: { id },
        },
        id,
        '2026-11-21T10:00:00.000Z',
      );
      void store.commit({ type: 'instance.started', instance });
    }
    await store.flush();
    // The old segment's close fails (an fsync's EIO, say), and the snapshot's rename comes later.
    const roll = Journal.prototype.roll;
    const commit = AtomicFileWriter.prototype.commitKeepingReplaced;
    t.teardown(() => {
      Journal.prototype.roll = roll;
      AtomicFileWriter.prototype.commitKeepingReplaced = commit;
    });
    Journal.prototype.roll = function (this: Journal<unknown>) {
      const rolled = roll.call(this);
      return {
        ...rolled,
        closed: rolled.closed.then(() => Promise.reject(Object.assign(new Error('EIO: injected'), { code: 'EIO' }))),
      };
    };
    let renamed = false;
    AtomicFileWriter.prototype.commitKeepingReplaced = async function (this: AtomicFileWriter) {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve)); // after the close's rejection
      const replaced = await commit.call(this);
      renamed = true;
      return replaced;
    };
    await t.rejects(store.checkpoint(), { code: 'STORE_FAILED' });
    await store.close();
    t.ok(
      renamed,
      'the snapshot was in place before close() returned (not renamed behind a later owner of the directory)',
    );
    t.equal(
      (store as unknown as { snapshots: { source: unknown } }).snapshots.source,
      null,
      'no reader of it left open on the closed store',
    );
  },
);
