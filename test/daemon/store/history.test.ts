import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { appendFile, mkdir, open, readdir, readFile, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { History } from '../../../src/daemon/store/history.js';
import type { HistoryLogger } from '../../../src/daemon/store/history-damage.js';
import { frameBytes } from '../../../src/daemon/store/frame.js';

t.test('documents are read back by id from their bucket', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  await Promise.all([
    h.put('2026-11-20', 'a', { v: 1 }),
    h.put('2026-11-20', 'b', { v: 2 }),
    h.put('2026-11-21', 'c', { v: 3 }),
  ]);
  t.same(await h.get('2026-11-20', 'b'), { v: 2 });
  t.same(await h.get('2026-11-21', 'c'), { v: 3 });
  t.equal(await h.get('2026-11-21', 'a'), null, 'an id is only in its own bucket');
  t.equal(await h.get('2026-01-01', 'a'), null, 'a bucket that does not exist');
  await h.put('2026-11-20', 'a', { v: 10 });
  t.same(await h.get('2026-11-20', 'a'), { v: 10 }, 'a later copy wins');
  await h.close();
  const reopened = await History.open(dir);
  t.same(await reopened.get('2026-11-20', 'a'), { v: 10 }, 'the index is rebuilt from the file');
  t.equal((await stat(join(dir, '2026-11-20.jsonl'))).mode & 0o777, 0o600);
  await reopened.close();
});

t.test('a torn last line is cut before the next append, and damage is skipped on read', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  await h.put('2026-11-20', 'a', { v: 1 });
  await h.close();
  await appendFile(join(dir, '2026-11-20.jsonl'), '0badc0de 0 x {"v":'); // crash mid-append
  const again = await History.open(dir);
  await again.put('2026-11-20', 'b', { v: 2 });
  t.same(await again.get('2026-11-20', 'a'), { v: 1 });
  t.same(await again.get('2026-11-20', 'b'), { v: 2 });
  await again.close();
  await appendFile(join(dir, '2026-11-20.jsonl'), 'garbage line\n');
  const third = await History.open(dir);
  await third.put('2026-11-20', 'c', { v: 3 });
  t.same(await third.get('2026-11-20', 'c'), { v: 3 }, 'a frame after a damaged line is still found');
  await third.close();
});

t.test('prune deletes buckets written before the cut-off and gives the space back', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  await h.put('2026-11-01', 'old', { pad: 'x'.repeat(10_000) });
  await h.put('2026-11-21', 'new', { v: 1 });
  const old = join(dir, '2026-11-01.jsonl');
  const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
  await utimes(old, tenDaysAgo, tenDaysAgo);
  const report = await h.prune(new Date(Date.now() - 7 * 86_400_000));
  t.equal(report.buckets, 1);
  t.ok(report.bytes > 10_000);
  t.same(await readdir(dir), ['2026-11-21.jsonl', '2026-11-21.open'], 'the pruned bucket and its open marker are gone');
  t.equal(await h.get('2026-11-01', 'old'), null);
  t.same(await h.get('2026-11-21', 'new'), { v: 1 });
  await h.put('2026-11-01', 'late', { v: 2 });
  t.same(await h.get('2026-11-01', 'late'), { v: 2 }, 'a pruned bucket can be written again');
  await h.close();
});

t.test(
  'large pruned buckets are freed a mebibyte at a time, one after the other, after their names are gone',
  async (t) => {
    const dir = t.testdir();
    const h = await History.open(dir);
    const pad = 'x'.repeat(100_000);
    for (let i = 0; i < 30; i++) await h.put('2026-11-01', `a${i}`, { pad });
    for (let i = 0; i < 30; i++) await h.put('2026-11-02', `b${i}`, { pad });
    await h.close();
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
    const paths = ['2026-11-01.jsonl', '2026-11-02.jsonl'].map((name) => join(dir, name));
    // The same files, to see their sizes once their names are gone.
    const watchers = await Promise.all(paths.map((p) => open(p, 'r')));
    t.teardown(() => Promise.all(watchers.map((w) => w.close())));
    for (const p of paths) await utimes(p, tenDaysAgo, tenDaysAgo);
    const again = await History.open(dir);
    const report = await again.prune(new Date(Date.now() - 7 * 86_400_000));
    t.equal(report.buckets, 2);
    t.same(await readdir(dir), [], 'both names are gone when prune returns');
    await again.freed();
    for (const w of watchers)
      t.ok((await w.stat()).size <= 1 << 20, 'each file was cut down to its last mebibyte, then closed');
    await again.close();
  },
);

t.test('a put to a bucket being pruned waits for the prune, and neither waits for the other for ever', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  const old = '2026-01-01';
  await h.put(old, 'a', { v: 1 }); // its appender stays open
  const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
  await utimes(join(dir, `${old}.jsonl`), tenDaysAgo, tenDaysAgo);
  // Four more buckets: the fifth appender evicts the old bucket's, whose close is then under way.
  const puts = ['2026-02-01', '2026-02-02', '2026-02-03', '2026-02-04'].map((b) => h.put(b, 'x', { b }));
  const closing = (h as unknown as { closing: Map<string, Promise<void>> }).closing;
  const evicted = closing.get(old);
  t.ok(evicted, "the old bucket's appender is being closed");
  const pruned = h.prune(new Date(Date.now() - 7 * 86_400_000));
  // Once the prune has taken the bucket (it waits for that close), an old execution is archived into it.
  for (let i = 0; i < 10_000 && closing.get(old) === evicted; i++)
    await new Promise((resolve) => setImmediate(resolve));
  t.not(closing.get(old), evicted, 'the prune has taken the bucket');
  const late = h.put(old, 'late', { v: 2 });
  await Promise.all(puts);
  const report = await pruned;
  await late;
  t.equal(report.buckets, 0, 'a bucket put to meanwhile is kept');
  t.same(await h.get(old, 'a'), { v: 1 });
  t.same(await h.get(old, 'late'), { v: 2 }, 'the late put is there');
  await h.close();
});

t.test('many buckets: writers and indexes stay bounded and correct', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  const days = Array.from({ length: 12 }, (_, i) => `2026-10-${String(i + 1).padStart(2, '0')}`);
  await Promise.all(days.flatMap((d) => [h.put(d, `${d}-a`, { d }), h.put(d, `${d}-b`, { d })]));
  for (const d of days) t.same(await h.get(d, `${d}-b`), { d });
  await h.close();
});

t.test('a search through more buckets than are cached reads each file once, then none again', async (t) => {
  const dir = t.testdir();
  const days = Array.from({ length: 5 }, (_, i) => `2026-10-0${i + 1}`);
  const first = await History.open(dir);
  for (const d of days) for (const x of ['a', 'b', 'c']) await first.put(d, `${d}-${x}`, { d }, ['flow', x]);
  await first.close();
  const read = new Map<string, number>();
  const h = await History.open(dir, {
    readAt: async (fh, buf, position) => {
      const { bytesRead } = await fh.read(buf, 0, buf.length, position);
      if (bytesRead > 0) {
        const name = days.find((d) => buf.toString('latin1', 0, bytesRead).includes(`${d}-`))!;
        read.set(name, (read.get(name) ?? 0) + 1);
      }
      return bytesRead;
    },
  });
  // As a list of executions searches: the newest bucket first, the others passing, a part at a time.
  const search = async () => {
    const newestFirst = [...days].reverse();
    for (const [i, d] of newestFirst.entries()) {
      t.same(
        (await h.list(d, { limit: 2, passing: i > 0 })).map((e) => e.id),
        [`${d}-c`, `${d}-b`],
      );
      t.same(await h.list(d, { below: `${d}-b`, limit: 2, passing: i > 0 }), [{ id: `${d}-a`, tags: ['flow', 'a'] }]);
      t.same(await h.get(d, `${d}-a`), { d }, 'a document found there is read');
    }
  };
  await search();
  t.same([...read.values()], [1, 1, 1, 1, 1], 'each bucket read once');
  await search();
  await search();
  t.same([...read.values()], [1, 1, 1, 1, 1], 'the searches after it read no file again');
  await h.close();
});

t.test('bad bucket names are refused', async (t) => {
  const h = await History.open(t.testdir());
  await t.rejects(h.put('../etc', 'x', {}), TypeError);
  await t.rejects(h.get('2026-1-1', 'x'), TypeError);
});

t.test('a put that lands while the bucket index is built from the file is not lost', async (t) => {
  const dir = t.testdir();
  const first = await History.open(dir);
  await first.put('2026-11-21', 'old', { v: 1 });
  await first.close();
  let h!: History;
  let putsDuringBuild: Promise<void[]> | null = null;
  // Assigned once, but not const: the reader below uses it and is made before it is assigned.
  // eslint-disable-next-line prefer-const
  h = await History.open(dir, {
    // Read the file, then let puts append before the index is built from what was read.
    readAt: async (fh, buf, position) => {
      const { bytesRead } = await fh.read(buf, 0, buf.length, position);
      putsDuringBuild ??= Promise.all(Array.from({ length: 20 }, (_, i) => h.put('2026-11-21', `new-${i}`, { i })));
      await putsDuringBuild;
      return bytesRead;
    },
  });
  t.same(await h.get('2026-11-21', 'old'), { v: 1 });
  t.ok(putsDuringBuild, 'the puts ran during the build');
  let missing = 0;
  for (let i = 0; i < 20; i++) if ((await h.get('2026-11-21', `new-${i}`)) === null) missing++;
  t.equal(missing, 0, 'every document put during the index build is readable');
  await h.close();
});

t.test(
  'the index follows the file: puts after a read, a later copy, and a bucket larger than one read chunk',
  async (t) => {
    const dir = t.testdir();
    const h = await History.open(dir);
    await h.put('2026-11-22', 'a', { v: 1 });
    t.same(await h.get('2026-11-22', 'a'), { v: 1 }, 'read once: the index is built and cached');
    // Puts do not touch a cached index: the next read takes in what was appended since.
    const big = 'x'.repeat(3 << 20); // three of these span the 8 MiB read chunk
    await Promise.all([
      h.put('2026-11-22', 'b', { big }),
      h.put('2026-11-22', 'c', { big }),
      h.put('2026-11-22', 'd', { big }),
      h.put('2026-11-22', 'a', { v: 2 }),
    ]);
    t.same(
      (await h.list('2026-11-22')).map((e) => e.id),
      ['d', 'c', 'b', 'a'],
      'every put since the last read is listed',
    );
    t.same(await h.get('2026-11-22', 'a'), { v: 2 }, 'the later copy wins');
    t.equal(
      ((await h.get('2026-11-22', 'd')) as { big: string }).big.length,
      big.length,
      'a document read whole across chunks',
    );
    await h.close();
    const again = await History.open(dir);
    t.same(await again.get('2026-11-22', 'c'), { big }, 'rebuilt from the file in chunks after a restart');
    t.same(await again.get('2026-11-22', 'a'), { v: 2 });
    await again.close();
  },
);

t.test(
  'an open bucket is written over zeros ahead; reads find its documents, and closing leaves no zeros',
  async (t) => {
    const dir = t.testdir();
    const h = await History.open(dir);
    const path = join(dir, '2026-11-22.jsonl');
    await Promise.all(Array.from({ length: 30 }, (_, i) => h.put('2026-11-22', `e${i}`, { i })));
    const onDisk = await readFile(path);
    const dataEnd = onDisk.lastIndexOf(0x0a) + 1;
    t.ok(dataEnd > 0 && onDisk.length > dataEnd, 'zeros on disk after the data while the bucket is open');
    t.ok(
      onDisk.subarray(dataEnd).every((b) => b === 0),
      'and only zeros',
    );
    t.equal((await h.list('2026-11-22')).length, 30, 'the index holds the data and nothing of the zeros');
    await h.put('2026-11-22', 'e30', { i: 30 });
    t.same(await h.get('2026-11-22', 'e30'), { i: 30 }, 'a put after the index was built is found');
    await h.close();
    const closed = await readFile(path);
    t.equal(closed[closed.length - 1], 0x0a, 'closed: the file ends with its last frame');
    t.notOk(closed.includes(0), 'and holds no zeros');
  },
);

t.test('after a crash: the zeros written ahead (and a torn line before them) are cut when history opens', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  await h.put('2026-11-20', 'a', { v: 1 });
  await h.put('2026-11-21', 'b', { v: 2 });
  await h.close();
  const yesterday = join(dir, '2026-11-20.jsonl');
  const today = join(dir, '2026-11-21.jsonl');
  const cleanSize = (await stat(yesterday)).size;
  // As a crash leaves them: zeros ahead (more than one read of the tail), and a batch torn mid-line.
  await appendFile(yesterday, Buffer.alloc((1 << 20) + 4096));
  await appendFile(today, Buffer.concat([Buffer.from('0badc0de 0 c {"v":'), Buffer.alloc(70_000)]));
  const lastWrite = new Date('2026-11-20T12:00:00Z');
  await utimes(yesterday, lastWrite, lastWrite);
  const again = await History.open(dir);
  t.equal((await stat(yesterday)).size, cleanSize, 'a bucket nobody appends to is cut at open');
  t.equal(
    (await stat(yesterday)).mtime.getTime(),
    lastWrite.getTime(),
    'cutting keeps the time of its last write (retention goes by it)',
  );
  t.same(await again.get('2026-11-20', 'a'), { v: 1 });
  await again.put('2026-11-21', 'c', { v: 3 });
  t.same(await again.get('2026-11-21', 'b'), { v: 2 });
  t.same(
    await again.get('2026-11-21', 'c'),
    { v: 3 },
    'the torn line and the zeros were cut: the next put follows the data',
  );
  await again.close();
  const text = await readFile(today, 'utf8');
  t.equal(text.split('\n').length, 3, 'two frames, no damaged line between them');
});

t.test('after a crash: frames of a torn batch after a run of zeros are kept and read', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  await h.put('2026-11-21', 'a', { v: 1 });
  await h.close();
  const path = join(dir, '2026-11-21.jsonl');
  // A batch whose first sector never reached the disk while the next ones did (the end of a
  // frame, then a whole one), then the zeros ahead. Nobody was told it was durable.
  await appendFile(
    path,
    Buffer.concat([
      Buffer.alloc(512),
      Buffer.from('"x"}\n'),
      frameBytes(0, JSON.stringify({ v: 2 }), 'b'),
      Buffer.alloc(8192),
    ]),
  );
  const again = await History.open(dir);
  t.same(await again.get('2026-11-21', 'a'), { v: 1 });
  t.same(await again.get('2026-11-21', 'b'), { v: 2 }, 'the whole frame after the damaged line is found');
  await again.put('2026-11-21', 'c', { v: 3 });
  t.same(await again.get('2026-11-21', 'c'), { v: 3 });
  t.same(
    (await again.list('2026-11-21')).map((e) => e.id),
    ['c', 'b', 'a'],
  );
  await again.close();
});

t.test('a bucket that cannot be opened fails its put, and the next put tries again', async (t) => {
  const dir = t.testdir();
  const h = await History.open(dir);
  const path = join(dir, '2026-11-22.jsonl');
  await mkdir(path); // in the way: the bucket file cannot be opened
  await t.rejects(h.put('2026-11-22', 'a', { v: 1 }), { code: 'EISDIR' });
  await rmdir(path);
  await h.put('2026-11-22', 'b', { v: 2 });
  t.same(await h.get('2026-11-22', 'b'), { v: 2 }, 'not stuck on the failed opening');
  await h.close();
});

/** A logger that keeps what history logs, by level. */
function captureLog(): {
  lines: Array<{ level: 'warn' | 'error'; obj: Record<string, unknown>; msg: string }>;
  logger: HistoryLogger;
} {
  const lines: Array<{ level: 'warn' | 'error'; obj: Record<string, unknown>; msg: string }> = [];
  return {
    lines,
    logger: {
      warn: (obj, msg) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
      error: (obj, msg) => lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
    },
  };
}

/** Writes three documents a, b, c to one bucket and closes it; returns the file and where b's frame starts. */
async function threeDocs(dir: string): Promise<{ path: string; bAt: number; cAt: number }> {
  const h = await History.open(dir);
  for (const id of ['a', 'b', 'c']) await h.put('2026-11-21', id, { id, pad: 'abcdefghij'.repeat(10) });
  await h.close();
  const path = join(dir, '2026-11-21.jsonl');
  const text = await readFile(path, 'utf8');
  const bAt = text.indexOf('\n') + 1;
  return { path, bAt, cAt: text.indexOf('\n', bAt) + 1 };
}

/** Overwrites 4 bytes in the middle of the frame at `at` (never its LF): what a bad sector or a stray write does. */
async function flipFourBytes(path: string, at: number): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.write(Buffer.from('ZZZZ'), 0, 4, at + 60);
  } finally {
    await fh.close();
  }
}

t.test(
  '4 bytes changed in one record: its read says HISTORY_DAMAGED, the others are read, the damage is logged and reported',
  async (t) => {
    const dir = t.testdir();
    const { path, bAt } = await threeDocs(dir);
    await flipFourBytes(path, bAt);
    const { lines, logger } = captureLog();
    const h = await History.open(dir, { logger });
    t.teardown(() => h.close());
    t.match(await h.get('2026-11-21', 'a'), { id: 'a' });
    t.match(await h.get('2026-11-21', 'c'), { id: 'c' }, 'the record after the damaged one is kept and read');
    await t.rejects(h.get('2026-11-21', 'b'), {
      code: 'HISTORY_DAMAGED',
      details: { file: '2026-11-21.jsonl', offset: bAt },
    });
    t.same(
      (await h.list('2026-11-21')).map((e) => e.id),
      ['c', 'a'],
      'listing leaves the damaged record out',
    );
    t.match(h.damage(), {
      damagedRecords: 1,
      findings: [{ file: '2026-11-21.jsonl', offset: bAt, code: 'HISTORY_FRAME_DAMAGED', instanceId: 'b' }],
    });
    const errors = lines.filter((l) => l.level === 'error');
    t.equal(errors.length, 1, 'one ERROR line, however often the bucket is read');
    t.match(errors[0]!.obj, { file: path, offset: bAt, code: 'HISTORY_FRAME_DAMAGED', instanceId: 'b' });
    await h.put('2026-11-21', 'b', { id: 'b', again: true });
    t.match(await h.get('2026-11-21', 'b'), { again: true }, 'a good copy written later wins over the damaged one');
  },
);

t.test(
  'a bucket cut in half is reported at open with its file and offset; the first half is read and appends go on',
  async (t) => {
    const dir = t.testdir();
    const h0 = await History.open(dir);
    for (let i = 0; i < 20; i++) await h0.put('2026-11-21', `e${i}`, { i });
    await h0.close();
    const path = join(dir, '2026-11-21.jsonl');
    const whole = await readFile(path);
    const half = Math.floor(whole.length / 2);
    await writeFile(path, whole.subarray(0, half));
    const cutAt = whole.lastIndexOf(0x0a, half - 1) + 1; // the record the cut went through
    const kept = whole.subarray(0, cutAt).toString('utf8').split('\n').length - 1;
    const { lines, logger } = captureLog();
    const h = await History.open(dir, { logger });
    t.teardown(() => h.close());
    t.match(h.damage(), {
      damagedRecords: 1,
      findings: [{ file: '2026-11-21.jsonl', offset: cutAt, code: 'HISTORY_TRUNCATED' }],
    });
    t.match(lines, [{ level: 'error', obj: { file: path, offset: cutAt, code: 'HISTORY_TRUNCATED' } }]);
    for (let i = 0; i < kept; i++) t.same(await h.get('2026-11-21', `e${i}`), { i }, `e${i} of the first half is read`);
    await h.put('2026-11-21', 'late', { v: 1 });
    t.same(await h.get('2026-11-21', 'late'), { v: 1 }, 'an append after the damage starts a line of its own');
    t.ok(
      (await readFile(path)).subarray(cutAt, half).equals(whole.subarray(cutAt, half)),
      'the damaged bytes are kept, not cut',
    );
    t.equal(h.damage().findings.length, 1, 'the kept line is not reported twice');
  },
);

t.test(
  'after a crash: the torn last line of a bucket that was being appended to is cut with a WARN, not reported as damage',
  async (t) => {
    const dir = t.testdir();
    const h0 = await History.open(dir);
    await h0.put('2026-11-21', 'a', { v: 1 });
    const path = join(dir, '2026-11-21.jsonl');
    const marker = join(dir, '2026-11-21.open');
    await stat(marker); // the appender is open: a crash now may tear its last write
    const data = (await readFile(path)).subarray(0, (await readFile(path)).lastIndexOf(0x0a) + 1);
    // As a crash leaves it: the batch in flight written in part, growing the file (no zeros ahead).
    await writeFile(path, Buffer.concat([data, Buffer.from('0badc0de 0 b {"v":')]));
    const { lines, logger } = captureLog();
    const h = await History.open(dir, { logger });
    t.teardown(() => Promise.all([h.close(), h0.close().catch(() => undefined)]));
    t.same(h.damage(), { damagedRecords: 0, findings: [] });
    t.match(
      lines,
      [{ level: 'warn', obj: { file: path, offset: data.length, instanceId: 'b' } }],
      'one WARN naming the file and offset',
    );
    t.equal((await stat(path)).size, data.length, 'the torn write is cut');
    await t.rejects(stat(marker), { code: 'ENOENT' }, 'the marker goes once the tail is recovered');
    t.same(await h.get('2026-11-21', 'a'), { v: 1 });
  },
);
