import { appendFile, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { encodeFrame } from '../../../src/daemon/store/frame.js';
import { Journal, segmentName } from '../../../src/daemon/store/journal.js';

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
  t.same(seen, [1, 2, 3, 4, 5].map((seq) => [seq, { i: seq - 1 }]));
  t.equal(report.replayed, 5);
  t.equal(journal.lastSeq, 5);
  t.equal(journal.append({ i: 5 }).seq, 6, 'numbering continues');
  await journal.close();
});

t.test('entries covered by the snapshot are skipped', async (t) => {
  const dir = t.testdir();
  await writeEntries(dir, 5);
  const { seen } = await openCollect(dir, 3);
  t.same(seen.map(([s]) => s), [4, 5]);
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
  await writeFile(join(dir, segmentName(1)), encodeFrame(1, 'a') + encodeFrame(2, 'b') + encodeFrame(4, 'd'), { mode: 0o600 });
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

t.test('the journal directory is 0700 and segments 0600', async (t) => {
  const dir = join(t.testdir(), 'journal');
  await writeEntries(dir, 1);
  t.equal((await stat(dir)).mode & 0o777, 0o700);
  t.equal((await stat(join(dir, segmentName(1)))).mode & 0o777, 0o600);
});
