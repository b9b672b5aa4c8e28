import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { appendFile, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { checkDataDir, checkHistory } from '../../../src/daemon/ops/check.js';
import { History } from '../../../src/daemon/store/history.js';

/** A data directory whose only content is history: two records in one day file, closed cleanly. */
async function withHistory(dataDir: string): Promise<string> {
  const h = await History.open(join(dataDir, 'history'));
  await Promise.all([
    h.put('2026-11-20', 'a0', { text: 'x'.repeat(100) }),
    h.put('2026-11-20', 'a1', { text: 'y'.repeat(100) }),
  ]);
  await h.close();
  return join(dataDir, 'history', '2026-11-20.jsonl');
}

t.test('wfx daemon check reports a damaged history record with its file and offset', async (t) => {
  const dataDir = t.testdir();
  const file = await withHistory(dataDir);
  t.same(await checkHistory(dataDir), [], 'clean history: no finding');
  const second = (await readFile(file, 'utf8')).indexOf('\n') + 1;
  const fh = await open(file, 'r+');
  await fh.write(Buffer.from('ZZZZ'), 0, 4, second + 20);
  await fh.close();
  const findings = await checkDataDir(dataDir);
  t.match(findings, [{ file, offset: second, code: 'HISTORY_FRAME_DAMAGED' }]);
  t.equal(findings.filter((f) => f.code.startsWith('HISTORY_')).length, 1);
});

t.test('a torn history write left by a crash is not a finding of the check', async (t) => {
  const dataDir = t.testdir();
  const file = await withHistory(dataDir);
  // What a crash during the write in flight leaves of a bucket open at the time.
  await appendFile(join(dataDir, 'history', '2026-11-20.open'), '');
  await appendFile(file, Buffer.concat([Buffer.from('0badc0de 0 a2 {"i":'), Buffer.alloc(4096)]));
  t.same(await checkHistory(dataDir), []);
});
