import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { appendFile, copyFile, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { decodeFrames, encodeFrame } from '../../../src/daemon/store/frame.js';
import { Journal } from '../../../src/daemon/store/journal.js';
import { segmentName } from '../../../src/daemon/store/journal-scan.js';

async function openCollect(dir: string, afterSeq = 0) {
  const seen: Array<[number, unknown]> = [];
  const opened = await Journal.open<unknown>({ dir, afterSeq, replay: (seq, e) => seen.push([seq, e]) });
  return { ...opened, seen };
}

async function writeEntries(dir: string, n: number): Promise<void> {
  const { journal } = await openCollect(dir);
  await Promise.all(Array.from({ length: n }, (_, i) => journal.append({ i }).durable));
  await journal.close();
}

t.test('entries replay in order after reopen', async (t) => {
  const dir = t.testdir();
  await writeEntries(dir, 5);
  const { seen, report, journal } = await openCollect(dir);
  t.same(
    seen,
    [1, 2, 3, 4, 5].map((seq) => [seq, { i: seq - 1 }]),
  );
  t.equal(report.replayed, 5);
  t.equal(journal.lastSeq, 5);
  t.equal(journal.append({ i: 5 }).seq, 6, 'numbering continues');
  await journal.close();
});

t.test('entries covered by the snapshot are skipped', async (t) => {
  const dir = t.testdir();
  await writeEntries(dir, 5);
  const { seen } = await openCollect(dir, 3);
  t.same(
    seen.map(([s]) => s),
    [4, 5],
  );
});

t.test('a torn last entry is cut off and appends continue cleanly', async (t) => {
  const dir = t.testdir();
  await writeEntries(dir, 3);
  const seg = join(dir, segmentName(1));
  const goodSize = (await stat(seg)).size;
  await appendFile(seg, encodeFrame(4, { i: 3 }).slice(0, 20)); // a crash mid-append
  const { seen, report, journal } = await openCollect(dir);
  t.equal(seen.length, 3);
  t.same(report.truncated, { file: seg, offset: goodSize, bytes: 20 });
  t.equal((await stat(seg)).size, goodSize, 'the torn bytes are gone from disk');
  await journal.append({ i: 'after' }).durable;
  await journal.close();
  const again = await openCollect(dir);
  t.same(again.seen.at(-1), [4, { i: 'after' }]);
  t.equal(again.report.truncated, null);
});

t.test('damage before the end refuses to open, naming file and offset', async (t) => {
  const dir = t.testdir();
  // The four go out in one write: a flipped bit is no sector that never landed over zeros, so
  // the frames of that write after it do not make it a torn write.
  await writeEntries(dir, 4);
  const seg = join(dir, segmentName(1));
  const buf = await readFile(seg);
  const second = buf.indexOf('\n') + 1;
  buf[second + 15]! ^= 0x04;
  await writeFile(seg, buf);
  await t.rejects(openCollect(dir), { code: 'JOURNAL_CORRUPT', details: { file: seg, offset: second } });
  t.same(await readFile(seg), buf, 'nothing was cut');
});

t.test('a missing entry (gap in sequence numbers) refuses to open', async (t) => {
  const dir = t.testdir();
  await writeFile(join(dir, segmentName(1)), encodeFrame(1, 'a') + encodeFrame(2, 'b') + encodeFrame(4, 'd'), {
    mode: 0o600,
  });
  await t.rejects(openCollect(dir), { code: 'JOURNAL_CORRUPT', details: { expectedSeq: 3, foundSeq: 4 } });
});

t.test('a missing segment refuses to open', async (t) => {
  const dir = t.testdir();
  const { journal } = await openCollect(dir);
  await journal.append('a').durable;
  journal.roll();
  await journal.append('b').durable;
  journal.roll();
  await journal.append('c').durable;
  await journal.close();
  await unlink(join(dir, segmentName(2)));
  await t.rejects(openCollect(dir), { code: 'JOURNAL_CORRUPT', details: { expectedSeq: 2, foundSeq: 3 } });
});

t.test('damage in an older segment is never taken for a torn tail', async (t) => {
  const dir = t.testdir();
  const { journal } = await openCollect(dir);
  await journal.append('a').durable;
  await journal.append('b').durable;
  journal.roll();
  await journal.append('c').durable;
  await journal.close();
  const first = join(dir, segmentName(1));
  const buf = await readFile(first);
  await writeFile(first, buf.subarray(0, buf.length - 4));
  await t.rejects(openCollect(dir), { code: 'JOURNAL_CORRUPT' });
});

t.test('roll starts a new segment; retire deletes only covered ones', async (t) => {
  const dir = t.testdir();
  const { journal } = await openCollect(dir);
  await journal.append('a').durable;
  const { lastSeq, closed } = journal.roll();
  t.equal(lastSeq, 1);
  await closed;
  await journal.append('b').durable;
  t.same((await readdir(dir)).sort(), [segmentName(1), segmentName(2)]);
  t.equal(await journal.retire(0), 0, 'segment 1 is not covered by a snapshot at 0');
  t.equal(await journal.retire(1), 1);
  t.same(await readdir(dir), [segmentName(2)]);
  t.equal(await journal.retire(99), 0, 'the segment being written is never deleted');
  await journal.close();
  const { seen } = await openCollect(dir, 1);
  t.same(seen, [[2, 'b']]);
});

t.test('a roll with nothing written since the last keeps the segment being written', async (t) => {
  // What a restart after a crash just past a roll finds: the newest segment empty.
  const dir = t.testdir();
  // Listed by a manifest (onSegment), a new segment is created as it is rolled to.
  const { journal } = await Journal.open<unknown>({
    dir,
    afterSeq: 0,
    replay: () => undefined,
    onSegment: async () => undefined,
  });
  await journal.append('a').durable;
  await journal.roll().closed;
  t.same(journal.segmentList, [1, 2]);
  const again = journal.roll();
  t.equal(again.lastSeq, 1);
  await again.closed;
  t.same(journal.segmentList, [1, 2], 'no second segment of the same name');
  t.equal(await journal.retire(1), 1, 'the one before it is retired');
  t.same(await readdir(dir), [segmentName(2)], 'the one being written is still there');
  await journal.append('b').durable;
  await journal.close();
  const { seen } = await openCollect(dir, 1);
  t.same(seen, [[2, 'b']]);
});

t.test('the journal directory is 0700 and segments 0600', async (t) => {
  const dir = join(t.testdir(), 'journal');
  await writeEntries(dir, 1);
  t.equal((await stat(dir)).mode & 0o777, 0o700);
  t.equal((await stat(join(dir, segmentName(1)))).mode & 0o777, 0o600);
});

/** Frames as the journal writes them: `writes` lists each durable write's entries (their values). */
function segmentOf(firstSeq: number, writes: unknown[][]): { bytes: Buffer; offsets: number[] } {
  const lines: string[] = [];
  let seq = firstSeq;
  for (const write of writes) {
    const key = String(seq);
    for (const value of write) lines.push(encodeFrame(seq++, value, key));
  }
  const offsets: number[] = [];
  let at = 0;
  for (const line of lines) {
    offsets.push(at);
    at += Buffer.byteLength(line);
  }
  return { bytes: Buffer.from(lines.join('')), offsets };
}

t.test("each frame names the durable write it went out in, by that write's first entry", async (t) => {
  const dir = t.testdir();
  const { journal } = await openCollect(dir);
  await Promise.all(['a', 'b', 'c'].map((v) => journal.append(v).durable));
  await journal.append('d').durable;
  // Appended once the write of 'e' has been taken (its flush starts on a microtask): they share
  // the next one.
  const inFlight = journal.append('e').durable;
  await new Promise((resolve) => setImmediate(resolve));
  const next = [journal.append('f').durable, journal.append('g').durable];
  await Promise.all([inFlight, ...next]);
  await journal.close();
  const { frames } = decodeFrames(await readFile(join(dir, segmentName(1))));
  t.same(
    frames.map((f) => [f.seq, f.key]),
    [
      [1, '1'],
      [2, '1'],
      [3, '1'],
      [4, '4'],
      [5, '5'],
      [6, '6'],
      [7, '6'],
    ],
  );
});

t.test('while open, a segment ends in zeros written ahead; after a crash they are cut quietly', async (t) => {
  const dir = t.testdir();
  const copy = t.testdir();
  const { journal } = await openCollect(dir);
  for (let i = 0; i < 3; i++) await journal.append({ i }).durable;
  const seg = join(dir, segmentName(1));
  const onDisk = await readFile(seg);
  const { frames, badOffset } = decodeFrames(onDisk);
  t.equal(frames.length, 3);
  t.ok(
    badOffset !== null && onDisk.length > badOffset && onDisk.subarray(badOffset).every((b) => b === 0),
    'zeros after the data',
  );
  // A crash now leaves the file as it is: a copy of it is what the next start finds.
  await copyFile(seg, join(copy, segmentName(1)));
  await journal.close();
  const again = await openCollect(copy);
  t.same(
    again.seen.map(([seq]) => seq),
    [1, 2, 3],
  );
  t.equal(again.report.truncated, null, 'zeros alone are not a torn write');
  t.equal((await stat(join(copy, segmentName(1)))).size, badOffset, 'cut at the end of the data');
  await again.journal.append('after').durable;
  await again.journal.close();
  t.same((await openCollect(copy)).seen.at(-1), [4, 'after']);
});

t.test(
  'a write torn over zeros: its frames after the damage are cut with it, and appends go on from there',
  async (t) => {
    const dir = t.testdir();
    const seg = join(dir, segmentName(1));
    const { bytes, offsets } = segmentOf(1, [
      ['a', 'b', 'c'],
      ['d', 'e', 'f', 'g'],
    ]);
    // The last write's sectors landed out of order: frame 5 lost some bytes (zeros), 6 and 7 came.
    const torn = Buffer.concat([bytes, Buffer.alloc(4096)]);
    torn.fill(0, offsets[4]! + 12, offsets[4]! + 20);
    await writeFile(seg, torn, { mode: 0o600 });
    const { seen, report, journal } = await openCollect(dir);
    t.same(
      seen.map(([, v]) => v),
      ['a', 'b', 'c', 'd'],
      'the frames before the damage are replayed',
    );
    t.same(report.truncated, { file: seg, offset: offsets[4], bytes: torn.length - offsets[4]! });
    t.equal((await stat(seg)).size, offsets[4]);
    t.equal(journal.append('after').seq, 5);
    await journal.close();
    t.same(
      (await openCollect(dir)).seen.map(([, v]) => v),
      ['a', 'b', 'c', 'd', 'after'],
    );
  },
);

t.test("a torn write may be the last good frame's own, or the first of its segment", async (t) => {
  const within = t.testdir();
  const a = segmentOf(1, [['a'], ['b', 'c', 'd']]);
  const tornWithin = Buffer.concat([a.bytes, Buffer.alloc(512)]).fill(0, a.offsets[2]! + 3, a.offsets[2]! + 9);
  await writeFile(join(within, segmentName(1)), tornWithin, { mode: 0o600 });
  const one = await openCollect(within);
  t.same(
    one.seen.map(([, v]) => v),
    ['a', 'b'],
    'frame 3 damaged, 4 of the same write as 2: cut',
  );
  t.equal(one.report.truncated?.offset, a.offsets[2]);

  const first = t.testdir();
  const b = segmentOf(7, [['x', 'y']]);
  const tornFirst = Buffer.from(b.bytes).fill(0, 2, 6);
  await writeFile(join(first, segmentName(7)), tornFirst, { mode: 0o600 });
  const two = await openCollect(first, 6);
  t.same(two.seen, [], "the segment's only write, torn at its first frame");
  t.equal(two.report.truncated?.offset, 0);
});

t.test('after damage, a frame of another write is corruption, zeros or not', async (t) => {
  const dir = t.testdir();
  const seg = join(dir, segmentName(1));
  const { bytes, offsets } = segmentOf(1, [['a', 'b'], ['c'], ['d']]);
  // Frame 2 holds zeros (as a sector that never landed would), but writes 3 and 4 came after its
  // write was acknowledged: acknowledged data was lost.
  const damaged = Buffer.from(bytes).fill(0, offsets[1]! + 12, offsets[1]! + 16);
  await writeFile(seg, damaged, { mode: 0o600 });
  await t.rejects(openCollect(dir), { code: 'JOURNAL_CORRUPT', details: { file: seg, offset: offsets[1] } });
  t.same(await readFile(seg), damaged, 'nothing was cut');
});

t.test('frames written before the journal named their writes never pass for a torn write', async (t) => {
  const dir = t.testdir();
  const seg = join(dir, segmentName(1));
  const frames = ['a', 'b', 'c'].map((v, i) => encodeFrame(i + 1, v));
  const damaged = Buffer.from(frames.join('')).fill(0, frames[0]!.length + 12, frames[0]!.length + 16);
  await writeFile(seg, damaged, { mode: 0o600 });
  await t.rejects(openCollect(dir), { code: 'JOURNAL_CORRUPT', details: { offset: frames[0]!.length } });
});

t.test(
  'zeros left after the data of an older segment (a crash before its cut was on disk) are cut quietly',
  async (t) => {
    const dir = t.testdir();
    const older = segmentOf(1, [['a', 'b']]);
    await writeFile(join(dir, segmentName(1)), Buffer.concat([older.bytes, Buffer.alloc(8192)]), { mode: 0o600 });
    await writeFile(join(dir, segmentName(3)), segmentOf(3, [['c']]).bytes, { mode: 0o600 });
    const { seen, report, journal } = await openCollect(dir);
    await journal.close();
    t.same(
      seen.map(([, v]) => v),
      ['a', 'b', 'c'],
    );
    t.equal(report.truncated, null);
    t.equal((await stat(join(dir, segmentName(1)))).size, older.bytes.length);
  },
);
