import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { History } from '../../../src/daemon/store/history.js';
import type { HistoryLogger } from '../../../src/daemon/store/history-damage.js';
import { verifyHistory } from '../../../src/daemon/store/history-check.js';

const WRITER = fileURLToPath(new URL('../../fixtures/history-writer.js', import.meta.url));
const ROUNDS = 8;

/** Runs the writer until it has acknowledged `acksBeforeKill` puts, then SIGKILLs it; returns the acknowledged puts. */
async function putAndKill(dir: string, round: number, acksBeforeKill: number): Promise<Array<[string, string]>> {
  const child = spawn(process.execPath, [WRITER, dir, '8', String(round)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const acked: Array<[string, string]> = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    const [kind, bucket, id] = line.split(' ');
    if (kind !== 'ack') continue;
    acked.push([bucket!, id!]);
    if (acked.length >= acksBeforeKill) {
      child.kill('SIGKILL');
      break;
    }
  }
  await exited;
  return acked;
}

t.test('SIGKILL while puts are in flight: no damage is reported, and every acknowledged put is read', async (t) => {
  const dir = t.testdir();
  const errors: unknown[] = [];
  const logger: HistoryLogger = { warn: () => undefined, error: (obj) => errors.push(obj) };
  for (let round = 0; round < ROUNDS; round++) {
    const acked = await putAndKill(dir, round, 50 + round * 150);
    // What the kill left (zeros written ahead, open markers, a write cut short) is a crash's, not damage.
    const found = (await verifyHistory(dir)).filter((f) => f.code !== 'HISTORY_TORN_WRITE');
    t.same(found, [], `round ${round}: verifyHistory finds no damage`);
    const h = await History.open(dir, { logger });
    let missing = 0;
    for (const [bucket, id] of acked) if ((await h.get(bucket, id)) === null) missing++;
    t.equal(missing, 0, `round ${round}: every acknowledged put is read`);
    t.equal(h.damage().damagedRecords, 0, `round ${round}: no damage reported`);
    await h.close();
  }
  t.same(errors, [], 'no ERROR logged');
});
