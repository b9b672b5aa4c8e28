import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { WfxClient } from '../../src/client/client.js';
import { checkDataDir } from '../../src/daemon/ops/check.js';
import { adminClient, killIfAlive, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

/**
 * SIGKILL of the daemon while it writes `wfx daemon backup`, at each named point of the copy
 * (crash-point.ts): the target is never there in part. Either it is missing (a partial copy
 * beside it, which no daemon opens and the next backup removes) or it is whole: `wfx daemon
 * check` finds nothing and a daemon on it has every acknowledged execution.
 */
const ASK = `processId: 7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, formTitle: "How many?", next: done }
  done: { type: endEvent }
`;
const QUICK = `processId: 8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e
name: Quick
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const ASK_ID = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
const QUICK_ID = '8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e';
/** Executions started before the backup: enough that the snapshot and history take some copying. */
const WAITING = 200;
const FINISHED = 50;
/** Most starts made while the backup runs, before the kill (they give the journal's copy entries). */
const MOST_DURING = 2000;

async function kill(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await eventually(`daemon ${pid} is gone`, () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
}

/** Starts `n` executions of `processId`, 20 at a time; their ids, each acknowledged. */
async function startMany(client: WfxClient, processId: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 20) {
    const batch = Array.from({ length: Math.min(20, n - i) }, () => client.process.startAny({ processId }));
    for (const started of await Promise.all(batch)) ids.push(started.processInstanceId);
  }
  return ids;
}

/** Asserts that the daemon at `url` (with `apiKey`) has every execution of `waiting` waiting and of `finished` done. */
async function holdsAll(
  t: Test,
  url: string,
  apiKey: string,
  acked: { waiting: string[]; finished: string[] },
): Promise<void> {
  const client = new WfxClient({ url, apiKey, credentialSource: 'test' });
  const expected = [...acked.waiting.map((id) => [id, 0] as const), ...acked.finished.map((id) => [id, 1] as const)];
  let missing = 0;
  for (let i = 0; i < expected.length; i += 50) {
    const states = await Promise.all(
      expected.slice(i, i + 50).map(async ([id]) => (await client.instances.get(id).catch(() => null))?.stateCd),
    );
    for (let j = 0; j < states.length; j++) if (states[j] !== expected[i + j]![1]) missing++;
  }
  t.equal(missing, 0, `all ${acked.waiting.length + acked.finished.length} acknowledged executions are there`);
}

const partialsIn = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.startsWith('copy.partial-')).map((n) => join(dir, n));

for (const point of ['backup:snapshot', 'backup:journal', 'backup:released', 'backup:synced', 'backup:renamed']) {
  t.test(`SIGKILL at ${point}: no target, or a whole one; the next backup removes what was left`, async (t) => {
    const cwd = t.testdir({ 'ask.yaml': ASK, 'quick.yaml': QUICK });
    const crashing = await startDaemon(t, { cwd, env: { WFX_TEST_CRASH_POINT: point } });
    const admin = await adminClient(cwd, crashing.url);
    const apiKey = admin.connection.apiKey!;
    for (const source of [ASK, QUICK]) await admin.flows.publish({ source });
    const acked = {
      waiting: await startMany(admin, ASK_ID, WAITING),
      finished: await startMany(admin, QUICK_ID, FINISHED),
    };

    // Starts go on while the backup runs, until the daemon stops at its point.
    const out = join(cwd, '.wfx', 'logs', 'daemon.out');
    const stopped = async () => (await readFile(out, 'utf8').catch(() => '')).includes(`crash-point ${point}\n`);
    const duringAcked: string[] = [];
    const during = (async () => {
      for (let i = 0; i < MOST_DURING && !(await stopped()); i++) {
        const started = await admin.process.startAny({ processId: ASK_ID }).catch(() => null);
        if (started) duringAcked.push(started.processInstanceId);
      }
    })();
    const backup = wfxIn(['daemon', 'backup', 'copy', '--json'], { cwd });
    await eventually(`the daemon stops at ${point}`, stopped);
    await kill(crashing.pid);
    await during;
    t.not((await backup).code, 0, 'the backup never answered');

    const target = join(cwd, 'copy');
    const left = await partialsIn(cwd);
    const targetThere = (await readdir(cwd)).includes('copy');
    if (point === 'backup:renamed') {
      t.ok(targetThere, 'renamed: the target is there');
      t.same(left, [], 'no partial copy left');
    } else {
      t.notOk(targetThere, 'no target: never one in part');
      t.equal(left.length, 1, 'one partial copy beside it');
    }
    if (left.length === 1) {
      if (point === 'backup:journal') {
        const segments = await readdir(join(left[0]!, 'journal'));
        t.equal(segments.length, 1, 'the segment being copied is there, the manifest is not');
      }
      if (point !== 'backup:synced') {
        // Its manifest comes last: what a crash cut is refused, by the check and by a start.
        t.match(await checkDataDir(left[0]!), [{ code: 'DATA_DIR_DAMAGED', file: join(left[0]!, 'store.manifest') }]);
        if (point === 'backup:journal') {
          // The reproduction: a segment cut short, no manifest. (A start costs seconds: here only.)
          const start = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', left[0]!, '--json'], { cwd });
          if (start.code === 0) t.teardown(() => killIfAlive((JSON.parse(start.stdout) as { pid: number }).pid));
          t.equal(start.code, 1, 'no daemon opens the partial copy');
          t.match(start.stderr, /DATA_DIR_DAMAGED/);
        }
      }
    }
    if (targetThere) {
      // Whatever the point: a target there is whole, never one that opens with entries cut.
      t.same(await checkDataDir(target), [], 'the target is whole: the check finds nothing');
      const onCopy = await startDaemon(t, { dataDir: target }).catch((err: Error) => err);
      if (onCopy instanceof Error) t.fail(`a daemon opens the target: ${onCopy.message}`);
      else await holdsAll(t, onCopy.url, apiKey, acked);
    }

    // The daemon comes back with everything acknowledged, and backs up again.
    const after = await startDaemon(t, { cwd });
    await holdsAll(t, after.url, apiKey, { ...acked, waiting: [...acked.waiting, ...duringAcked] });
    const again = await wfxIn(['daemon', 'backup', targetThere ? 'copy-again' : 'copy', '--json'], { cwd });
    t.equal(again.code, 0, again.stderr);
    const report = JSON.parse(again.stdout) as { directory: string; removedPartials?: string[] };
    if (!targetThere) t.same(report.removedPartials, left, 'the partial copy a crash left is removed');
    t.same(await partialsIn(cwd), [], 'nothing partial left');
    t.same(await checkDataDir(report.directory), []);
    if (point === 'backup:journal') {
      const onCopy = await startDaemon(t, { dataDir: report.directory });
      await holdsAll(t, onCopy.url, apiKey, acked);
    }
  });
}
