import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { liveInstances } from '../../helpers/state.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { engineHarness, trail } from '../../helpers/engine.js';

const WORKER = fileURLToPath(new URL('../../fixtures/engine-worker.js', import.meta.url));

const FLOW = `processId: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f
name: Crash test
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, b] }
  a: { type: setVariable, variables: { a: "{i}" }, next: join }
  b: { type: setVariable, variables: { b: "{worker}" }, next: join }
  join: { type: parallelGateway, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const WAITING_TRAIL = ['start:2', 'fork:2', 'a:2', 'b:2', 'join:2', 'ask:1'];

/** Runs the worker until `stopAfter` lines with `prefix` were printed, SIGKILLs it, returns the ids. */
async function runAndKill(args: string[], prefix: string, stopAfter: (readyLine: string) => number): Promise<string[]> {
  const child = spawn(process.execPath, [WORKER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const acked: string[] = [];
  let limit = Infinity;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('ready')) limit = stopAfter(line);
    else if (line.startsWith(`${prefix} `)) acked.push(line.slice(prefix.length + 1));
    if (acked.length >= limit || line === 'done') break;
  }
  child.kill('SIGKILL');
  await exited;
  return acked;
}

t.test('kill -9 while executions start and run: every acknowledged start is there, whole', async (t) => {
  const h = await engineHarness(t);
  await h.close();
  const flowFile = join(h.dir, '..', `${process.pid}-crash-flow.yaml`);
  await writeFile(flowFile, FLOW);
  t.teardown(async () => (await import('node:fs/promises')).rm(flowFile, { force: true }));
  const acked = new Set<string>();
  for (const stop of [37, 450, 1200]) {
    for (const id of await runAndKill(['start', h.dir, flowFile], 'started', () => stop)) acked.add(id);
  }
  const after = await h.restart();
  const all = liveInstances(after.store.state);
  for (const id of acked) {
    const inst = after.store.state.instances[id];
    if (!inst) {
      t.fail(`acknowledged execution ${id} is missing`);
      return;
    }
    if (trail(inst).join() !== WAITING_TRAIL.join() || inst.stateCd !== STATE.RUNNING) {
      t.fail(`execution ${id} is not whole: ${trail(inst).join()}`);
      return;
    }
  }
  t.ok(
    all.every((inst) => trail(inst).join() === WAITING_TRAIL.join()),
    `all ${all.length} executions (${acked.size} acknowledged) are whole: none half-run`,
  );
  t.ok(acked.size >= 37 + 450, 'the kills came after many acknowledged starts');
});

t.test('kill -9 while tasks are answered: every acknowledged answer completed its execution', async (t) => {
  const h = await engineHarness(t);
  const pid = await h.publish(
    FLOW.replace('3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', '4c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f'),
  );
  const ids: string[] = [];
  for (let i = 0; i < 400; i++)
    ids.push(
      (await h.engine.start({ processId: pid, organization: 'default', data: { worker: 0, i } })).processInstanceId,
    );
  await h.close();
  const answered = await runAndKill(['answer', h.dir], 'answered', (ready) =>
    Math.floor(Number(ready.split(' ')[1]) / 3),
  );
  t.ok(answered.length > 100, `${answered.length} answers acknowledged before the kill`);
  const after = await h.restart();
  for (const id of answered) {
    const inst = await after.get(id);
    if (inst.stateCd !== STATE.COMPLETED || inst.variables.inputValue !== 'yes') {
      t.fail(`acknowledged answer to ${id} is lost: ${trail(inst).join()}`);
      return;
    }
  }
  let completed = 0;
  let whole = 0;
  for (const id of ids) {
    const inst = await after.get(id);
    if (inst.stateCd === STATE.COMPLETED) completed++;
    if (inst.stateCd === STATE.COMPLETED || trail(inst).join() === WAITING_TRAIL.join()) whole++;
  }
  t.equal(whole, ids.length, 'every execution is either completed or still waiting at ask: none lost or half-done');
  t.ok(completed >= answered.length, `${completed} completed`);
  // What was not answered before the kill can be answered after the restart.
  for (const id of ids) {
    const inst = await after.get(id);
    if (inst.stateCd !== STATE.RUNNING) continue;
    await after.engine.submitTask({
      organization: 'default',
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'late' },
    });
  }
  for (const id of ids) if ((await after.get(id)).stateCd !== STATE.COMPLETED) t.fail(`${id} did not complete`);
});

t.test(
  'kill -9 while executions run start to finish: every acknowledged one is in history, whole, and none is left live',
  async (t) => {
    // No wait: each execution starts and finishes in one step, written to history alone (ExecutionArchive.oneStep).
    const oneStep = FLOW.replace('3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', '5d1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f')
      .replace('next: ask', 'next: done')
      .replace(/^  ask:.*\n/m, '');
    const h = await engineHarness(t);
    await h.close();
    const flowFile = join(h.dir, '..', `${process.pid}-one-step-flow.yaml`);
    await writeFile(flowFile, oneStep);
    t.teardown(async () => (await import('node:fs/promises')).rm(flowFile, { force: true }));
    const acked: string[] = [];
    for (const stop of [41, 600]) acked.push(...(await runAndKill(['start', h.dir, flowFile], 'started', () => stop)));
    t.ok(acked.length >= 41 + 600, 'the kills came after many acknowledged executions');
    const buckets = join(h.dir, 'history');
    const zerosAhead = async () => {
      let zeros = 0;
      for (const name of await readdir(buckets))
        for (const byte of await readFile(join(buckets, name))) if (byte === 0) zeros++;
      return zeros;
    };
    t.ok((await zerosAhead()) > 0, 'the kills left the zeros the history writer keeps ahead of its data');
    const after = await h.restart();
    t.equal(await zerosAhead(), 0, 'opening history cut them');
    const whole = ['start:2', 'fork:2', 'a:2', 'b:2', 'join:2', 'done:2'].join();
    for (const id of acked) {
      const inst = await after.get(id).catch(() => null);
      if (!inst || inst.stateCd !== STATE.COMPLETED || trail(inst).join() !== whole) {
        t.fail(`acknowledged execution ${id} is ${inst ? `not whole: ${trail(inst).join()}` : 'missing'}`);
        return;
      }
    }
    t.pass(`all ${acked.length} acknowledged executions read back from history, completed and whole`);
    t.same(liveInstances(after.store.state), [], 'nothing of them is in the live state: the journal never held them');
    const more = await after.engine.start({
      processId: '5d1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
      organization: 'default',
      data: { worker: 0, i: 0 },
    });
    t.equal(
      (await after.get(more.processInstanceId)).stateCd,
      STATE.COMPLETED,
      'history takes appends again after the kills',
    );
  },
);
