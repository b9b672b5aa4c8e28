import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { chargeFlow } from '../helpers/jobs.js';
import { prepareWorkers, spawnWorker } from '../helpers/workers.js';

/** Publishes the charge flow (with `extra` node properties) and returns its processId. */
async function publish(client: WfxClient, extra = ''): Promise<string> {
  const res = await client.flows.publish({ source: chargeFlow(extra).replace('AUTO', randomUUID()) });
  return res.processId;
}

/**
 * Starts `n` executions of `pid`, `concurrency` at a time; returns their ids in order. Through
 * POST /process/start itself: the admin key is a system key, and `process.start` would first ask
 * GET /auth/whoami which of the two routes it takes, a second request for each start.
 */
async function startMany(client: WfxClient, pid: string, n: number, concurrency = 32): Promise<string[]> {
  const ids: string[] = new Array<string>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++)
        ids[i] = (await client.process.startAny({ processId: pid, data: { amount: i } })).processInstanceId;
    }),
  );
  return ids;
}

const completedCount = async (client: WfxClient, pid: string) =>
  (await client.instances.list(pid, { stateCd: 1, limit: 1000 })).items.length;

t.test('workers in other processes: module and --command, a killed holder, 1,000 jobs through 4', async (t) => {
  const cwd = t.testdir({});
  const { url } = await startDaemon(t, { cwd });
  const admin = await adminClient(cwd, url);
  const apiKey = await prepareWorkers(cwd, admin);

  await t.test('a worker process completes jobs; a --command worker in Python too', async (t) => {
    const pid = await publish(admin);
    const worker = spawnWorker(t, { cwd, url, apiKey, args: ['./handlers.mjs', '--name', 'node-1'] });
    const ids = await startMany(admin, pid, 5);
    await eventually('5 executions completed', async () => (await completedCount(admin, pid)) === 5);
    const done = await admin.instances.get(ids[0]!);
    t.match(done.data.charge, { receipt: `r-0-${worker.proc.pid}`, worker: 'node-1' });

    await writeFile(
      join(cwd, 'handle.py'),
      [
        'import json, sys',
        'job = json.load(sys.stdin)',
        'amount = job["input"]["amount"]',
        'if amount < 0:',
        '    print(json.dumps({"errorCode": "NEGATIVE_AMOUNT", "errorMessage": "below zero", "retry": False}))',
        '    sys.exit(3)',
        'print(json.dumps({"receipt": "py-%s-%s" % (amount, job["attempt"])}))',
      ].join('\n'),
    );
    worker.proc.kill('SIGTERM');
    t.equal(await worker.exited, 0, 'a SIGTERM stops the worker cleanly');
    const py = spawnWorker(t, { cwd, url, apiKey, args: ['--domain', 'billing', '--command', 'python3 handle.py'] });
    const good = await admin.process.start({ processId: pid, data: { amount: 7 } });
    const bad = await admin.process.start({ processId: pid, data: { amount: -1 } });
    await eventually('both ended', async () => {
      const [a, b] = await Promise.all([
        admin.instances.get(good.processInstanceId),
        admin.instances.get(bad.processInstanceId),
      ]);
      return a.stateCd !== 0 && b.stateCd !== 0 && [a, b];
    });
    t.match((await admin.instances.get(good.processInstanceId)).data.charge, { receipt: 'py-7-1' });
    t.match((await admin.instances.get(bad.processInstanceId)).data.error, {
      code: 'NEGATIVE_AMOUNT',
      nodeId: 'charge',
    });
    py.proc.kill('SIGTERM');
    await py.exited;
  });

  await t.test('SIGKILL the worker holding a job: its lock lapses and another worker gets it', async (t) => {
    const pid = await publish(admin);
    const holder = spawnWorker(t, {
      cwd,
      url,
      apiKey,
      args: ['./handlers.mjs', '--name', 'holder', '--lock-duration', '1s'],
      env: { HANG: '1' },
    });
    const inst = await admin.process.start({ processId: pid, data: { amount: 1 } });
    await eventually('the holder has the job', async () =>
      (await admin.jobs.list({ domain: 'billing' })).items.some(
        (j) => j.processInstanceId === inst.processInstanceId && j.worker === 'holder',
      ),
    );
    holder.proc.kill('SIGKILL');
    await holder.exited;
    const status = await wfxIn(['daemon', 'status', '--json'], { cwd });
    t.match(JSON.parse(status.stdout).domains, [
      { domain: 'billing', organization: 'default', locked: 1, workers: [{ worker: 'holder' }] },
    ]);
    const next = spawnWorker(t, { cwd, url, apiKey, args: ['./handlers.mjs', '--name', 'next'] });
    const done = await eventually('completed by the next worker', async () => {
      const i = await admin.instances.get(inst.processInstanceId);
      return i.stateCd === 1 && i;
    });
    t.match(done.data.charge, { worker: 'next' });
    const logs = (await admin.instances.logs(inst.processInstanceId)).map((e) => e.message).join('\n');
    t.match(logs, /job activated by worker next .*\(the lock of holder lapsed\)/);
    next.proc.kill('SIGTERM');
    await next.exited;
  });

  await t.test('1,000 jobs through 4 worker processes: each completed exactly once', async (t) => {
    const pid = await publish(admin);
    const workers = [1, 2, 3, 4].map((n) =>
      spawnWorker(t, { cwd, url, apiKey, args: ['./handlers.mjs', '--name', `w${n}`, '--concurrency', '8'] }),
    );
    const ids = await startMany(admin, pid, 1000);
    await eventually('1,000 executions completed', async () => (await completedCount(admin, pid)) === 1000, {
      withinMs: 90_000,
      maxPauseMs: 250,
    });
    const completions = workers.flatMap((w) => w.events.filter((e) => e.type === 'completed').map((e) => e.job!.key));
    t.equal(completions.length, 1000, 'the workers report 1,000 completions');
    t.equal(new Set(completions).size, 1000, 'no job completed twice');
    t.ok(
      workers.every((w) => w.events.some((e) => e.type === 'completed')),
      'every worker took some',
    );
    const sample = await admin.instances.get(ids[500]!);
    t.equal(sample.nodes.filter((n) => n.nodeId === 'charge' && n.statusCd === 2).length, 1);
    await Promise.all(workers.map((w) => (w.proc.kill('SIGTERM'), w.exited)));
  });
});
