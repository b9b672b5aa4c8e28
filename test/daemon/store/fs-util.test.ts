import { open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { AtomicFileWriter, freeGradually, removeGradually, SYNC_EVERY_BYTES, writeFileAtomic } from '../../../src/daemon/store/fs-util.js';

t.test('a file written in parts is synced a mebibyte at a time, and its content is whole', async (t) => {
  const dir = t.testdir({ 'snap.json': 'old' });
  const path = join(dir, 'snap.json');
  const file = await AtomicFileWriter.open(path);
  // Parts of odd sizes, strings and buffers, one of them larger than the sync interval.
  const parts: Array<string | Buffer> = [
    'a'.repeat(300_000),
    Buffer.alloc(900_000, 'b'),
    'c'.repeat(2 * SYNC_EVERY_BYTES + 12_345),
    Buffer.alloc(10, 'd'),
    'é'.repeat(100_000), // two bytes each: the interval counts bytes, not characters
  ];
  for (const part of parts) await file.write(part);
  const written = parts.reduce((n, p) => n + (typeof p === 'string' ? Buffer.byteLength(p) : p.length), 0);
  t.equal(file.syncs, Math.floor(written / SYNC_EVERY_BYTES), 'one fdatasync per whole mebibyte written');
  t.equal(await readFile(path, 'utf8'), 'old', 'the file keeps its old content until commit');
  await file.commit();
  const text = await readFile(path, 'utf8');
  t.equal(text, parts.map((p) => (typeof p === 'string' ? p : p.toString())).join(''), 'every part, in order, nothing twice');
  t.equal((await stat(path)).mode & 0o777, 0o600);
  t.same(await readdir(dir), ['snap.json'], 'no temporary file left');
});

t.test('a small file is written without a sync before its commit', async (t) => {
  const dir = t.testdir();
  const file = await AtomicFileWriter.open(join(dir, 'small.json'));
  await file.write('{"a":1}');
  await file.write(Buffer.from(',{"b":2}'));
  t.equal(file.syncs, 0);
  await file.commit();
  t.equal(await readFile(join(dir, 'small.json'), 'utf8'), '{"a":1},{"b":2}');
});

t.test('an aborted file leaves the old content and no temporary file', async (t) => {
  const dir = t.testdir({ 'snap.json': 'old' });
  const file = await AtomicFileWriter.open(join(dir, 'snap.json'));
  await file.write('x'.repeat(SYNC_EVERY_BYTES + 1));
  t.equal(file.syncs, 1, 'the first mebibyte was synced');
  await file.abort();
  t.equal(await readFile(join(dir, 'snap.json'), 'utf8'), 'old');
  t.same(await readdir(dir), ['snap.json']);
});

t.test('writeFileAtomic replaces a file whole, large content included', async (t) => {
  const dir = t.testdir({ 'f.json': 'old' });
  const content = 'z'.repeat(3 * SYNC_EVERY_BYTES + 7);
  await writeFileAtomic(join(dir, 'f.json'), content);
  t.equal(await readFile(join(dir, 'f.json'), 'utf8'), content);
  t.same(await readdir(dir), ['f.json']);
});

const MiB = 1 << 20;

t.test('a large file is freed a chunk at a time from its end, then closed', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'old.wal');
  await writeFile(path, Buffer.alloc(5 * MiB + 100, 'x'));
  const watcher = await open(path, 'r'); // the same file, to see its size once its name is gone
  t.teardown(() => watcher.close());
  const freeing = await removeGradually(path, { chunkBytes: MiB, pauseMs: 1 });
  t.ok(freeing, 'a file was removed');
  t.same(await readdir(dir), [], 'its name is gone at once');
  await freeing!.done;
  // 5 MiB + 100 -> 4 MiB + 100 -> ... -> 100 bytes left for the close to free.
  t.equal((await watcher.stat()).size, 100, 'truncated a chunk at a time (a plain unlink leaves it whole)');
  t.equal(await removeGradually(path), null, 'nothing to remove: null');
});

t.test('finish() frees the rest of a file at once', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'snapshot.old');
  await writeFile(path, Buffer.alloc(3 * MiB, 'x'));
  const watcher = await open(path, 'r');
  t.teardown(() => watcher.close());
  const fh = await open(path, 'r+');
  const freeing = freeGradually(fh, { chunkBytes: MiB, pauseMs: 3_600_000 }); // an hour between chunks
  // Wait (a bounded number of turns, no timer) for the first chunk, then finish.
  for (let i = 0; i < 10_000 && (await watcher.stat()).size === 3 * MiB; i++) await new Promise((resolve) => setImmediate(resolve));
  t.equal((await watcher.stat()).size, 2 * MiB, 'the first chunk is freed');
  freeing.finish();
  await freeing.done; // does not wait out the hour
  t.equal((await watcher.stat()).size, 2 * MiB, 'no more chunks: the close frees the rest');
  await t.rejects(fh.stat(), 'its handle is closed');
});

t.test('commitKeepingReplaced hands back the content it replaced, still readable', async (t) => {
  const dir = t.testdir({ 'snapshot.json': 'old content' });
  const path = join(dir, 'snapshot.json');
  const file = await AtomicFileWriter.open(path);
  await file.write('new content');
  const replaced = await file.commitKeepingReplaced();
  t.ok(replaced);
  t.equal(await readFile(path, 'utf8'), 'new content');
  t.equal((await replaced!.readFile()).toString(), 'old content', 'the old content, held open past the rename');
  await replaced!.close();
  t.same((await readdir(dir)).sort(), ['snapshot.json'], 'no other file left');

  const fresh = await AtomicFileWriter.open(join(dir, 'new.json'));
  await fresh.write('{}');
  t.equal(await fresh.commitKeepingReplaced(), null, 'nothing replaced: null');
});
