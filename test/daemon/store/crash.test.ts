import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Store } from '../../../src/daemon/store/store.js';
import type { StormRecord, StormState } from '../../fixtures/store-writer.js';

const WRITER = fileURLToPath(new URL('../../fixtures/store-writer.js', import.meta.url));
const ROUNDS = 30;
const WRITERS = 16;

/** Runs the writer until it has acknowledged `acksBeforeKill` commits, then SIGKILLs it. */
async function stormAndKill(
  dir: string,
  acksBeforeKill: number,
  checkpointEvery: number,
): Promise<Map<number, number>> {
  const child = spawn(process.execPath, [WRITER, dir, String(WRITERS), String(checkpointEvery)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acked = new Map<number, number>(); // writer -> highest acked index
  let count = 0;
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    const [kind, w, i] = line.split(' ');
    if (kind !== 'ack') continue;
    acked.set(Number(w), Math.max(acked.get(Number(w)) ?? -1, Number(i)));
    if (++count >= acksBeforeKill) {
      child.kill('SIGKILL');
      break;
    }
  }
  await exited;
  return acked;
}

async function reopen(dir: string) {
  return Store.open<StormState, StormRecord>({
    dir,
    initialState: () => ({ items: {} }),
    apply: (state, r) => {
      state.items[r.k] = r.v;
    },
  });
}

t.test('SIGKILL at random moments under a write storm loses no acknowledged commit', async (t) => {
  const dir = t.testdir();
  const everAcked = new Map<number, number>();
  let seed = 0x9e3779b9;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  let torn = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Small checkpoint intervals so that kills also land during checkpoints.
    const acked = await stormAndKill(dir, 20 + Math.floor(random() * 3000), 500 + Math.floor(random() * 1500));
    for (const [w, i] of acked) everAcked.set(w, Math.max(everAcked.get(w) ?? -1, i));

    const store = await reopen(dir);
    if (store.recovery.truncated) torn++;
    const items = store.state.items;
    for (const [w, highest] of everAcked) {
      for (let i = 0; i <= highest; i++) {
        if (items[`w${w}-${i}`] !== i) {
          t.fail(`round ${round}: acknowledged commit w${w}-${i} is missing after SIGKILL`);
          return;
        }
      }
    }
    // Each writer commits in order, so what survives is a prefix: no holes.
    for (let w = 0; w < WRITERS; w++) {
      const n = Object.keys(items).filter((k) => k.startsWith(`w${w}-`)).length;
      if (n > 0 && items[`w${w}-${n - 1}`] !== n - 1) t.fail(`round ${round}: writer ${w} has a hole`);
    }
    await store.close({ checkpoint: round % 3 === 0 });
  }
  const total = [...everAcked.values()].reduce((a, b) => a + b + 1, 0);
  t.ok(total > ROUNDS * 20, `${total} acknowledged commits survived ${ROUNDS} SIGKILLs (${torn} torn tails cut)`);
  const segments = (await readdir(join(dir, 'journal'))).length;
  t.ok(segments <= 3, `checkpoints retired old journal segments (${segments} left)`);
});
