import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { AppendFile } from '../../../src/daemon/store/append-file.js';
import { writeAll, type ChunkWriter } from '../../../src/daemon/store/fd-writes.js';

t.test('appends in one tick share one write and one fdatasync', async (t) => {
  const path = join(t.testdir(), 'a.log');
  const file = new AppendFile(path);
  const acks = Array.from({ length: 1000 }, (_, i) => file.append(Buffer.from(`line ${i}\n`)).durable);
  t.equal(file.syncs, 0, 'nothing is synced before the flush runs');
  await Promise.all(acks);
  t.equal(file.syncs, 1, 'one fdatasync for 1000 appends');
  const text = await readFile(path, 'utf8');
  t.equal(text.split('\n').length - 1, 1000);
  t.equal(text.slice(0, 14), 'line 0\nline 1\n', 'in append order');
  await file.close();
});

t.test('an append resolves only after an fdatasync that covers it', async (t) => {
  const file = new AppendFile(join(t.testdir(), 'a.log'));
  const first = file.append(Buffer.from('one\n')).durable;
  let secondSettled = false;
  const second = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    const p = file.append(Buffer.from('two\n')).durable;
    void p.then(() => (secondSettled = true));
    return p;
  });
  await first;
  const syncsAfterFirst = file.syncs;
  t.ok(syncsAfterFirst >= 1);
  await second;
  t.ok(secondSettled);
  t.ok(file.syncs >= syncsAfterFirst, 'the second append waited for a sync of its own or a later one');
  await file.close();
});

t.test('offsets and size account for every append', async (t) => {
  const path = join(t.testdir(), 'a.log');
  const file = new AppendFile(path);
  const a = file.append(Buffer.from('héllo\n'));
  const b = file.append(Buffer.from('x\n'));
  t.equal(a.offset, 0);
  t.equal(b.offset, Buffer.byteLength('héllo\n'));
  await file.close();
  t.equal((await stat(path)).size, file.size);
  t.equal((await stat(path)).mode & 0o777, 0o600, 'created 0600');
  t.throws(() => file.append(Buffer.from('late\n')), /closed/, 'append after close throws');
});

t.test('a write error fails the batch and every later append', async (t) => {
  const dir = t.testdir();
  // A directory cannot be opened for appending: the first flush fails.
  const file = new AppendFile(dir);
  await t.rejects(file.append(Buffer.from('x\n')).durable, { code: 'EISDIR' });
  t.throws(() => file.append(Buffer.from('y\n')), { code: 'EISDIR' }, 'failed for good');
});

t.test('the gate holds the first write back until it settles', async (t) => {
  const path = join(t.testdir(), 'b.log');
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const file = new AppendFile(path, 0, { gate });
  const ack = file.append(Buffer.from('b\n')).durable;
  await new Promise((resolve) => setImmediate(resolve));
  await t.rejects(stat(path), { code: 'ENOENT' }, 'nothing written while the gate is shut');
  open();
  await ack;
  t.equal(await readFile(path, 'utf8'), 'b\n');
  await file.close();
});

/** A writer that takes at most `step` bytes per call, as a short write would: what it got, in order. */
function shortWriter(step: number) {
  const got: Buffer[] = [];
  let calls = 0;
  const take = (buf: Buffer) => {
    const part = buf.subarray(0, Math.min(step, buf.length));
    got.push(Buffer.from(part));
    calls++;
    return part.length;
  };
  return {
    got: () => Buffer.concat(got).toString(),
    calls: () => calls,
    out: {
      writev: async (chunks: Buffer[]) => take(Buffer.concat(chunks)),
      write: async (buf: Buffer, offset: number, length: number) => take(buf.subarray(offset, offset + length)),
    } satisfies ChunkWriter,
  };
}

t.test('a batch is written whole and in order, across short writes', async (t) => {
  const chunks = ['alpha\n', 'beta\n', 'gamma\n', 'delta\n'].map((s) => Buffer.from(s));
  const whole = shortWriter(1000);
  await writeAll(whole.out, chunks);
  t.equal(whole.got(), 'alpha\nbeta\ngamma\ndelta\n');
  t.equal(whole.calls(), 1, 'one writev for the batch');
  const short = shortWriter(7);
  await writeAll(short.out, chunks);
  t.equal(short.got(), 'alpha\nbeta\ngamma\ndelta\n', 'the rest after a short writev, nothing lost or repeated');
  t.ok(short.calls() > 1);
  const many = Array.from({ length: 1500 }, (_, i) => Buffer.from(`${i}\n`));
  const joined = shortWriter(1 << 20);
  await writeAll(joined.out, many);
  t.equal(joined.got(), many.map(String).join(''), 'more buffers than one writev takes: joined, still whole');
});

t.test(
  'preallocate: data goes over zeros written ahead; close cuts them and keeps the time of the last write',
  async (t) => {
    const path = join(t.testdir(), 'p.log');
    const file = new AppendFile(path, 0, { preallocate: true });
    await file.append(Buffer.from('first\n')).durable;
    let st = await stat(path);
    t.ok(st.size > file.size, `zeros written ahead (${st.size} bytes on disk for ${file.size} of data)`);
    const onDisk = await readFile(path);
    t.equal(onDisk.subarray(0, file.size).toString(), 'first\n');
    t.ok(
      onDisk.subarray(file.size).every((b) => b === 0),
      'only zeros after the data',
    );
    const lastWrite = new Date('2026-01-02T03:04:05Z');
    await utimes(path, lastWrite, lastWrite);
    await file.close();
    st = await stat(path);
    t.equal(st.size, file.size, 'closing cut the zeros');
    t.equal(st.mtime.getTime(), lastWrite.getTime(), 'cutting them is not a write: the time of the last write is kept');
    t.equal(await readFile(path, 'utf8'), 'first\n');
  },
);

t.test('preallocate: many batches, some larger than the zeros ahead, land whole and in order', async (t) => {
  const path = join(t.testdir(), 'q.log');
  const file = new AppendFile(path, 0, { preallocate: true });
  const lines: string[] = [];
  for (let round = 0; round < 40; round++) {
    const batch: Array<Promise<void>> = [];
    // Rounds of small lines, and now and then one far larger than the first extension (64 KiB).
    const count = round % 10 === 9 ? 1 : 50;
    for (let i = 0; i < count; i++) {
      const line = `${round}.${i} ${'é'.repeat(count === 1 ? 100_000 : (round * 7 + i) % 300)}\n`;
      lines.push(line);
      batch.push(file.append(Buffer.from(line)).durable);
    }
    await Promise.all(batch);
    const onDisk = await readFile(path);
    if (!onDisk.subarray(0, file.size).equals(Buffer.from(lines.join(''))))
      return t.fail(`round ${round}: the data on disk differs`);
    if (!onDisk.subarray(file.size).every((b) => b === 0))
      return t.fail(`round ${round}: something but zeros after the data`);
  }
  const size = (await stat(path)).size;
  t.ok(size > file.size, 'zeros ahead of the data while it is open');
  await file.close();
  t.equal(await readFile(path, 'utf8'), lines.join(''), 'every line whole, in order, and nothing after them');
});

t.test('preallocate: an existing file is written after its data, at explicit positions', async (t) => {
  const path = join(t.testdir(), 'r.log');
  const plain = new AppendFile(path);
  await plain.append(Buffer.from('old\n')).durable;
  await plain.close();
  const file = await AppendFile.forFile(path, { preallocate: true });
  const { offset, durable } = file.append(Buffer.from('new\n'));
  t.equal(offset, 4);
  await durable;
  await file.close();
  t.equal(await readFile(path, 'utf8'), 'old\nnew\n');
});
