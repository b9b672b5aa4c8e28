import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { appendFile, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { History } from '../../../src/daemon/store/history.js';
import { verifyHistory } from '../../../src/daemon/store/history-check.js';

/** A history directory with two buckets of `n` documents each, closed cleanly. */
async function cleanHistory(dir: string, n = 10): Promise<void> {
  const h = await History.open(dir);
  for (let i = 0; i < n; i++)
    await Promise.all([h.put('2026-11-20', `a${i}`, { i }), h.put('2026-11-21', `b${i}`, { i })]);
  await h.close();
}

/** Every byte of every file in `dir`, to check that nothing changed. */
async function contents(dir: string, names: string[]): Promise<Buffer[]> {
  return Promise.all(names.map((n) => readFile(join(dir, n))));
}

t.test('a clean history has no findings; a missing directory neither', async (t) => {
  const dir = t.testdir();
  await cleanHistory(dir);
  t.same(await verifyHistory(dir), []);
  t.same(await verifyHistory(join(dir, 'nowhere')), []);
});

t.test('a record with 4 bytes changed and a bucket cut in half are found, read-only', async (t) => {
  const dir = t.testdir();
  await cleanHistory(dir);
  const yesterday = join(dir, '2026-11-20.jsonl');
  const today = join(dir, '2026-11-21.jsonl');
  const text = await readFile(yesterday, 'utf8');
  const a3 = text.split('\n').slice(0, 3).join('\n').length + 1; // the fourth record
  const fh = await open(yesterday, 'r+');
  await fh.write(Buffer.from('ZZZZ'), 0, 4, a3 + 20);
  await fh.close();
  const whole = await readFile(today);
  const half = Math.floor(whole.length / 2) + 3; // inside a record (a cut between two records leaves nothing to see)
  await writeFile(today, whole.subarray(0, half));
  const cutAt = whole.lastIndexOf(0x0a, half - 1) + 1;
  const before = await contents(dir, ['2026-11-20.jsonl', '2026-11-21.jsonl']);
  t.match(await verifyHistory(dir), [
    { file: '2026-11-20.jsonl', offset: a3, code: 'HISTORY_FRAME_DAMAGED', message: String, instanceId: 'a3' },
    { file: '2026-11-21.jsonl', offset: cutAt, code: 'HISTORY_TRUNCATED', message: String },
  ]);
  t.same(await contents(dir, ['2026-11-20.jsonl', '2026-11-21.jsonl']), before, 'nothing was changed');
});

t.test(
  'what a crash leaves: zeros after the data are no finding, a torn last line is HISTORY_TORN_WRITE',
  async (t) => {
    const dir = t.testdir();
    await cleanHistory(dir, 2);
    await appendFile(join(dir, '2026-11-20.jsonl'), Buffer.alloc(4096));
    const size = (await readFile(join(dir, '2026-11-21.jsonl'))).length;
    await appendFile(
      join(dir, '2026-11-21.jsonl'),
      Buffer.concat([Buffer.from('0badc0de 0 b9 {"i":'), Buffer.alloc(4096)]),
    );
    t.match(await verifyHistory(dir), [
      { file: '2026-11-21.jsonl', offset: size, code: 'HISTORY_TORN_WRITE', instanceId: 'b9' },
    ]);
    t.equal(await verifyHistory(dir).then((f) => f.length), 1, 'and again: it cut nothing');
  },
);
