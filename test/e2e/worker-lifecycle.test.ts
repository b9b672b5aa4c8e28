/**
 * A worker's life around a real daemon process: `daemon status` before any worker came, `wfx
 * worker run` stopped by SIGTERM with a job in hand (finished, or given back), and the worker
 * library reconnecting to a daemon that stops and comes back on its port.
 */
import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import { createWorker, type WorkerEvent } from '../../src/worker/index.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { chargeFlow } from '../helpers/jobs.js';
import { inHand, prepareWorkers, spawnWorker, type WorkerProcess } from '../helpers/workers.js';

/** Resolves with how the worker process exited, or rejects once `ms` pass first (the test fails, not hangs). */
function exitWithin(w: WorkerProcess, ms: number): Promise<number | string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the worker did not exit within ${ms} ms: ${w.stderr()}`)), ms);
  });
  return Promise.race([w.exited, late]).finally(() => clearTimeout(timer));
}

/** The job of execution `id` as GET /jobs lists it, once it is locked by `worker`. */
const lockedBy = (admin: WfxClient, id: string, worker: string) =>
  eventually(`the job of ${id} locked by ${worker}`, async () =>
    (await admin.jobs.list({ domain: 'billing' })).items.find(
      (j) => j.processInstanceId === id && j.state === 'locked' && j.worker === worker,
    ),
  );

t.test('a worker around a real daemon: status, SIGTERM, reconnect', async (t) => {
  const cwd = t.testdir({});
  const first = await startDaemon(t, { cwd });
  let admin = await adminClient(cwd, first.url);
  const apiKey = await prepareWorkers(cwd, admin);
  const pid = (await admin.flows.publish({ source: chargeFlow().replace('AUTO', randomUUID()) })).processId;
  const start = async (amount: number) =>
    (await admin.process.start({ processId: pid, data: { amount } })).processInstanceId;

  // One execution's job waits from here: no worker has come yet.
  const waiting = await start(1);

  await t.test('daemon status: a domain whose jobs wait with no worker seen is counted stalled', async (t) => {
    const res = await wfxIn(['daemon', 'status'], { cwd });
    t.equal(res.code, 0, res.stderr);
    t.match(res.stdout, /^ {2}domains +1 \(1 stalled: jobs wait and no worker was seen\)$/m);
    t.match(res.stdout, /^billing +default +stalled +1 +0 +- +never +\S+$/m);
  });

  await t.test('SIGTERM to `wfx worker run` with a job in hand: it finishes the job, then exits 0', async (t) => {
    const w = spawnWorker(t, {
      cwd,
      url: first.url,
      apiKey,
      args: ['./handlers.mjs', '--name', 'finisher', '--concurrency', '1'],
      env: { UNTIL_TERM: '1' },
    });
    const job = await lockedBy(admin, waiting, 'finisher');
    await inHand(w, job.key);
    w.proc.kill('SIGTERM'); // the handler returns only now, while the worker stops
    t.equal(await exitWithin(w, 20_000), 0);
    const types = w.events.map((e) => e.type);
    t.same(types.slice(-2), ['completed', 'stopped'], 'completed while stopping, then stopped');
    t.equal(w.events.find((e) => e.type === 'completed')?.job?.key, job.key);
    t.notOk(types.includes('released'), 'nothing given back');
    const done = await admin.instances.get(waiting);
    t.equal(done.stateCd, 1);
    t.match(done.data.charge, { worker: 'finisher' });
  });

  await t.test('SIGTERM with a job that does not finish in time: given back at once, not left to lapse', async (t) => {
    const id = await start(2);
    const w = spawnWorker(t, {
      cwd,
      url: first.url,
      apiKey,
      // A lock far longer than the test: only a release can free the job in time.
      args: ['./handlers.mjs', '--name', 'holder', '--lock-duration', '10m', '--stop-timeout', '200ms'],
      env: { HANG: '1' },
    });
    const job = await lockedBy(admin, id, 'holder');
    await inHand(w, job.key);
    w.proc.kill('SIGTERM');
    t.equal(await exitWithin(w, 20_000), 0);
    t.same(
      w.events.filter((e) => e.type === 'released' || e.type === 'stopped').map((e) => [e.type, e.job?.key]),
      [
        ['released', job.key],
        ['stopped', undefined],
      ],
    );
    const listed = (await admin.jobs.list({ domain: 'billing' })).items.find((j) => j.key === job.key);
    t.match(
      listed,
      { state: 'waiting', worker: null, lockedUntil: null, attempt: 1 },
      'waiting, its attempt not spent',
    );
    const next = await admin.jobs.activate({ domain: 'billing', worker: 'next', requestTimeout: 0 });
    t.same(
      next.jobs.map((j) => j.key),
      [job.key],
      'the next worker gets it at once',
    );
    await admin.jobs.complete(job.key, { worker: 'next', output: { receipt: 'by hand' } });
  });

  await t.test('the daemon stops and comes back: the worker backs off, bounded, then takes jobs again', async (t) => {
    const events: Array<WorkerEvent & { readonly at: number }> = [];
    const w = createWorker({
      url: first.url,
      apiKey,
      domain: 'billing',
      name: 'returner',
      requestTimeout: 1000,
      reconnect: { initialMs: 50, maxMs: 400 },
      handlers: { charge: (input) => ({ receipt: `back-${String(input.amount)}` }) },
      onEvent: (e) => events.push({ ...e, at: performance.now() }),
    });
    t.teardown(() => w.stop({ now: true }));
    const before = await start(3);
    await eventually(
      'completed before the daemon stops',
      async () => (await admin.instances.get(before)).stateCd === 1,
    );

    t.equal((await wfxIn(['daemon', 'stop'], { cwd })).code, 0, 'the daemon stopped');
    type Disconnected = Extract<WorkerEvent, { type: 'disconnected' }> & { readonly at: number };
    const gone = () => events.filter((e): e is Disconnected => e.type === 'disconnected');
    await eventually('six tries to reach it', () => gone().length >= 6);
    const waits = gone().map((e) => e.retryInMs);
    // The n-th wait (from 0) is 50 to 100 % of min(maxMs, initialMs * 2^n): it doubles up to the bound.
    t.same(
      waits.map((ms, n) => {
        const full = Math.min(400, 50 * 2 ** n);
        return ms >= Math.floor(full / 2) && ms <= full ? full : ms;
      }),
      [50, 100, 200, 400, 400, 400, ...waits.slice(6).map(() => 400)],
      `waits ${waits.join(', ')} ms: doubling from 50, at most 400`,
    );
    const seen = gone();
    for (let i = 1; i < seen.length; i++)
      t.ok(seen[i]!.at - seen[i - 1]!.at >= seen[i - 1]!.retryInMs - 5, `it waited ${seen[i - 1]!.retryInMs} ms`);
    t.match(seen.at(-1)!.error, /^DAEMON_UNREACHABLE/);

    // The same data directory on the same port: the worker's URL answers again.
    const port = new URL(first.url).port;
    const second = await startDaemon(t, { cwd, args: ['--port', port] });
    t.equal(second.url, first.url, 'back on its port');
    admin = await adminClient(cwd, second.url);
    const after = await start(4);
    const done = await eventually('completed after the daemon came back', async () => {
      const inst = await admin.instances.get(after);
      return inst.stateCd === 1 && inst;
    });
    t.match(done.data.charge, { receipt: 'back-4' });
    // The execution completes as the daemon commits; the worker counts it once answered.
    await eventually('the worker counts both', () => w.stats.completed === 2);
    const tries = gone().length;
    t.equal(events.at(-1)!.type, 'completed', 'polling again, not failing');
    await w.stop();
    t.equal(gone().length, tries, 'no disconnection once back');
  });
});
