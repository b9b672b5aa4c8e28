import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { STATE } from '../../../src/daemon/state/state.js';
import { engineHarness, type EngineHarness } from '../../helpers/engine.js';

/**
 * SIGKILL at the named moments of a checkpoint, a segment roll and a recovery (the store stops
 * there when WFX_TEST_CRASH_POINT names it: crash-point.ts), not only at random ones: every
 * acknowledged start must be there after the restart, and the directory must open.
 */
const WORKER = fileURLToPath(new URL('../../fixtures/engine-worker.js', import.meta.url));
/** Starts the worker makes before the test gives up on its point (a checkpoint comes every 300 entries). */
const MOST_STARTS = 20_000;

const FLOW = `processId: 6e1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f
name: Crash point test
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** Runs the worker with `point` set until it stops there, SIGKILLs it; returns the acknowledged starts and whether it stopped. */
async function killAt(args: string[], point: string): Promise<{ acked: string[]; stopped: boolean }> {
  const child = spawn(process.execPath, [WORKER, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, WFX_TEST_CRASH_POINT: point },
  });
  const exited = once(child, 'exit');
  const acked: string[] = [];
  let stopped = false;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('started ')) acked.push(line.slice('started '.length));
    if (line === `crash-point ${point}`) stopped = true;
    if (stopped || acked.length >= MOST_STARTS) break;
  }
  child.kill('SIGKILL');
  await exited;
  return { acked, stopped };
}

async function flowFile(t: Test, h: EngineHarness): Promise<string> {
  const file = join(h.dir, '..', `${process.pid}-crash-point-flow-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, FLOW);
  t.teardown(() => rm(file, { force: true }));
  return file;
}

for (const point of [
  'checkpoint:synced',
  'checkpoint:pending',
  'checkpoint:renamed',
  'checkpoint:named',
  'roll:created',
]) {
  t.test(`SIGKILL at ${point}: every acknowledged start is there after the restart`, async (t) => {
    const h = await engineHarness(t);
    await h.close();
    const { acked, stopped } = await killAt(['start', h.dir, await flowFile(t, h)], point);
    t.ok(stopped, `the worker stopped at ${point} (after ${acked.length} starts)`);
    const after = await h.restart();
    let missing = 0;
    for (const id of acked) {
      const inst = after.store.state.instances[id];
      if (!inst || inst.stateCd !== STATE.RUNNING) missing++;
    }
    t.equal(missing, 0, `all ${acked.length} acknowledged starts are there, waiting`);
    // A checkpoint before anything new is written (at roll:created, the segment being written
    // is the empty one the crash left), a restart right after it, a start, another restart.
    await after.store.checkpoint();
    const again = await after.restart();
    t.equal(
      acked.filter((id) => !again.store.state.instances[id]).length,
      0,
      'every start acknowledged before is there after the checkpoint',
    );
    const late = await again.start(await again.publish(FLOW));
    const last = await again.restart();
    t.ok(last.store.state.instances[late.processInstanceId], 'and a start made after it');
  });
}

t.test(
  'SIGKILL during recovery (after the journal is replayed and its torn tail cut), then again at a checkpoint: nothing lost',
  async (t) => {
    const h = await engineHarness(t);
    await h.close();
    const file = await flowFile(t, h);
    const first = await killAt(['start', h.dir, file], 'checkpoint:pending');
    t.ok(first.stopped);
    const recovering = await killAt(['start', h.dir, file], 'recovery:replayed');
    t.ok(recovering.stopped, 'the worker stopped inside its recovery');
    t.same(recovering.acked, [], 'nothing started before recovery ended');
    const second = await killAt(['start', h.dir, file], 'checkpoint:named');
    t.ok(second.stopped);
    const after = await h.restart();
    const acked = [...first.acked, ...second.acked];
    const missing = acked.filter((id) => after.store.state.instances[id]?.stateCd !== STATE.RUNNING);
    t.same(missing, [], `all ${acked.length} acknowledged starts are there`);
  },
);

t.test('a segment deleted after a SIGKILL is refused at the restart, naming it', async (t) => {
  const h = await engineHarness(t);
  await h.close();
  const { acked, stopped } = await killAt(['start', h.dir, await flowFile(t, h)], 'checkpoint:named');
  t.ok(stopped);
  const journal = join(h.dir, 'journal');
  const last = join(journal, (await readdir(journal)).sort().at(-1)!);
  await rm(last);
  await t.rejects(
    h.restart(),
    { code: 'JOURNAL_CORRUPT', details: { file: last } },
    `not a silent start without the starts after the snapshot (${acked.length} acknowledged)`,
  );
});
