import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { link, open, readdir, readFile, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  AtomicFileWriter,
  freeGradually,
  Freeings,
  FREEINGS_MAX_WAITING,
  SYNC_EVERY_BYTES,
  unlinkKeepingOpen,
  writeFileAtomic,
} from '../../../src/daemon/disk/durable-files.js';

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
  t.equal(
    text,
    parts.map((p) => (typeof p === 'string' ? p : p.toString())).join(''),
    'every part, in order, nothing twice',
  );
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

/** Turns of the event loop (bounded, no timer) until `ready()`. */
async function turnsUntil(ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 10_000 && !(await ready()); i++) await new Promise((resolve) => setImmediate(resolve));
}

t.test('a large file is unlinked at once, then freed a chunk at a time from its end, then closed', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'old.wal');
  await writeFile(path, Buffer.alloc(5 * MiB + 100, 'x'));
  const watcher = await open(path, 'r'); // the same file, to see its size once its name is gone
  t.teardown(() => watcher.close());
  const fh = await unlinkKeepingOpen(path);
  t.ok(fh, 'a file was removed');
  t.same(await readdir(dir), [], 'its name is gone at once');
  t.equal(
    (await watcher.stat()).size,
    5 * MiB + 100,
    'nothing freed before the caller hands it over (after fsyncing the directory)',
  );
  const freeings = new Freeings({ chunkBytes: MiB, pauseMs: 1 });
  freeings.add(fh);
  await freeings.settled();
  // 5 MiB + 100 -> 4 MiB + 100 -> ... -> 100 bytes left for the close to free.
  t.equal((await watcher.stat()).size, 100, 'truncated a chunk at a time (a plain unlink leaves it whole)');
  await t.rejects(fh!.stat(), 'its handle is closed');
  t.equal(await unlinkKeepingOpen(path), null, 'nothing to remove: null');
});

t.test('a file with another name (a hard link) is closed, never cut', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'snapshot.json');
  const backup = join(dir, 'backup.json');
  await writeFile(path, Buffer.alloc(3 * MiB, 'x'));
  await link(path, backup); // as `cp -al` makes a backup
  const fh = await unlinkKeepingOpen(path);
  const freeings = new Freeings({ chunkBytes: MiB, pauseMs: 1 });
  freeings.add(fh);
  await freeings.settled();
  t.equal((await stat(backup)).size, 3 * MiB, "the other name's file is whole");
  await t.rejects(fh!.stat(), 'its handle is closed');
});

t.test(
  'files are freed one after the other; finish() frees the rest at once; later ones are closed at once',
  async (t) => {
    const dir = t.testdir({});
    const watchers: FileHandle[] = [];
    const handles: FileHandle[] = [];
    for (const name of ['a', 'b', 'c']) {
      const path = join(dir, name);
      await writeFile(path, Buffer.alloc(3 * MiB, 'x'));
      watchers.push(await open(path, 'r'));
      handles.push((await unlinkKeepingOpen(path))!);
    }
    t.teardown(() => Promise.all(watchers.map((w) => w.close())));
    const sizes = () => Promise.all(watchers.map(async (w) => (await w.stat()).size));
    const freeings = new Freeings({ chunkBytes: MiB, pauseMs: 3_600_000 }); // an hour between chunks
    for (const fh of handles) freeings.add(fh);
    await turnsUntil(async () => (await sizes())[0]! < 3 * MiB);
    // Give the others as many turns again: they wait for the first.
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    t.same(await sizes(), [2 * MiB, 3 * MiB, 3 * MiB], 'one file is being freed, the others wait their turn');
    await freeings.finish(); // does not wait out the hours
    t.same(await sizes(), [2 * MiB, 3 * MiB, 3 * MiB], 'no more chunks: the closes free the rest');
    for (const fh of handles) await t.rejects(fh.stat(), 'every handle is closed');

    const path = join(dir, 'd');
    await writeFile(path, Buffer.alloc(2 * MiB, 'x'));
    const late = (await unlinkKeepingOpen(path))!;
    freeings.add(late); // the owner has closed
    await freeings.settled();
    await turnsUntil(async () =>
      late.stat().then(
        () => false,
        () => true,
      ),
    );
    await t.rejects(late.stat(), 'a file given after finish() is closed at once');
  },
);

t.test('beyond the files waiting their turn, another is closed at once (descriptors stay bounded)', async (t) => {
  const dir = t.testdir({});
  const handles: FileHandle[] = [];
  for (let i = 0; i < FREEINGS_MAX_WAITING + 2; i++) {
    const path = join(dir, `f${i}`);
    await writeFile(path, Buffer.alloc(2 * MiB, 'x'));
    handles.push((await unlinkKeepingOpen(path))!);
  }
  const freeings = new Freeings({ chunkBytes: MiB, pauseMs: 3_600_000 });
  for (const fh of handles) freeings.add(fh); // one being freed, FREEINGS_MAX_WAITING waiting, one more
  const last = handles.at(-1)!;
  await turnsUntil(async () =>
    last.stat().then(
      () => false,
      () => true,
    ),
  );
  await t.rejects(last.stat(), 'the one over the limit is closed at once');
  await t.resolves(handles.at(-2)!.stat(), 'the last one waiting is still open');
  await freeings.finish();
  for (const fh of handles) await t.rejects(fh.stat(), 'finish() closed the others');
});

t.test('finish() frees the rest of a file at once', async (t) => {
  const dir = t.testdir({});
  const path = join(dir, 'snapshot.old');
  await writeFile(path, Buffer.alloc(3 * MiB, 'x'));
  const watcher = await open(path, 'r');
  t.teardown(() => watcher.close());
  const fh = (await unlinkKeepingOpen(path))!;
  const freeing = freeGradually(fh, { chunkBytes: MiB, pauseMs: 3_600_000 }); // an hour between chunks
  // Wait for the first chunk, then finish.
  await turnsUntil(async () => (await watcher.stat()).size < 3 * MiB);
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
