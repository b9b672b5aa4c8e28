/**
 * Jobs benchmark (part of `npm run bench`): jobs per second through one worker process, and
 * the latency of one job with an idle worker waiting for it. Activation and completion both take
 * many jobs a request (POST /jobs/activate's maxJobs, POST /jobs/complete). The daemon (store, engine, HTTP
 * API on a port) runs in this process; the worker is a child process running `wfx/worker`'s
 * createWorker, its handler answering at once.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { newApiKey } from '../src/daemon/auth/api-keys.js';
import { Engine } from '../src/daemon/engine/engine.js';
import { publishFlow } from '../src/daemon/flows/publish.js';
import { buildServer } from '../src/daemon/api/server.js';
import { WFX_STORE, type WfxRecord } from '../src/daemon/state/records.js';
import type { WfxState } from '../src/daemon/state/state.js';
import { History } from '../src/daemon/store/history.js';
import { Store } from '../src/daemon/store/store.js';
import { WebhookReceiver } from '../src/daemon/triggers/webhooks.js';
import { validateFlowSource } from '../src/shared/flow/validate.js';
import { inCallers } from './callers.js';
import { machineLine, writeSection } from './report.js';
import { UNPACED_LIMITS } from './daemon.js';

const WORKER = fileURLToPath(new URL('./job-worker.js', import.meta.url));
const FLOW = `processId: c3c3c3c3-0000-4000-8000-000000000003
name: Bench jobs
nodes:
  start: { type: startEvent, next: job }
  job: { type: domainTask, domain: bench, action: run, input: { n: "{n}" }, next: done }
  done: { type: endEvent }
`;

export interface JobsBenchResult {
  readonly jobs: number;
  readonly concurrency: number;
  /** Jobs completed per second, all waiting when the worker starts. */
  readonly perSecond: number;
  /** One job at a time, the worker idle and polling: start of the execution to its end. */
  readonly aloneP50Ms: number;
  readonly aloneP99Ms: number;
  /** In the worker, from receiving a job to its completion answered, under the throughput run. */
  readonly workerP50Ms: number;
  readonly workerP99Ms: number;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};

/**
 * `concurrency`: the worker's slots. Its completions go many to a request (wfx/worker's
 * completions.ts), so more slots mean fuller batches, as a worker under load would run.
 */
export async function runJobsBench(jobs = 20_000, concurrency = 128, alone = 300): Promise<JobsBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'wfx-bench-jobs-'));
  const store = await Store.open<WfxState, WfxRecord>({ dir, ...WFX_STORE });
  const history = await History.open(join(dir, 'history'));
  // Every job waits before the worker starts: the organization's pace of starts is not what is measured.
  const engine = new Engine({ store, history, limits: UNPACED_LIMITS });
  const app = buildServer({ store, engine, webhooks: new WebhookReceiver({ store, engine }) });
  let child: ChildProcess | null = null;
  try {
    const at = new Date().toISOString();
    await store.commit(
      { type: 'organization.created', name: 'default', at },
      {
        type: 'domain.saved',
        domain: {
          name: 'bench',
          organization: 'default',
          description: null,
          actions: { run: { description: null, input: { type: 'object' }, output: {} } },
          createdAt: at,
          updatedAt: at,
        },
      },
    );
    const key = newApiKey({ name: 'bench', organization: 'default', role: 'worker', at: new Date() });
    await store.commit({ type: 'apiKey.created', key: key.key });
    const v = validateFlowSource(FLOW);
    if (!v.ok) throw new Error(JSON.stringify(v.problems));
    const { processId } = await publishFlow(store, {
      definition: v.flow,
      organization: 'default',
      environment: 'PRODUCTION',
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    const started = new Map<string, bigint>();
    const latencies: number[] = [];
    let finished = 0;
    let waitFor = 0;
    let onAll: () => void = () => undefined;
    engine.on('finished', (id) => {
      const t0 = started.get(id);
      if (t0 !== undefined) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (++finished === waitFor) onAll();
    });
    const allFinished = (n: number) =>
      new Promise<void>((resolve) => {
        waitFor = finished + n;
        onAll = resolve;
      });

    // Throughput: every job waiting, then one worker process takes them.
    const done = allFinished(jobs);
    await inCallers(jobs, 50, (n) => engine.start({ processId, organization: 'default', data: { n } }));
    const workerMs: number[] = [];
    // BENCH_WORKER_PROF=DIR: a CPU profile of the worker process in DIR.
    child = fork(WORKER, [url, key.apiKey, String(concurrency)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: process.env.BENCH_WORKER_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_WORKER_PROF] : [],
    });
    child.on('message', (m: { ms?: number }) => {
      if (m.ms !== undefined) workerMs.push(m.ms);
    });
    await once(child, 'message'); // ready
    const t0 = process.hrtime.bigint();
    await done;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;

    // Latency: one execution at a time, the worker polling for it.
    for (let i = 0; i < alone; i++) {
      const one = allFinished(1);
      const s = process.hrtime.bigint();
      const inst = await engine.start({ processId, organization: 'default', data: { n: i } });
      started.set(inst.processInstanceId, s);
      await one;
    }
    return {
      jobs,
      concurrency,
      perSecond: jobs / seconds,
      aloneP50Ms: quantile(latencies, 0.5),
      aloneP99Ms: quantile(latencies, 0.99),
      workerP50Ms: quantile(workerMs.slice(0, jobs), 0.5),
      workerP99Ms: quantile(workerMs.slice(0, jobs), 0.99),
    };
  } finally {
    if (child) {
      child.send('stop');
      await once(child, 'exit');
    }
    await app.close();
    await engine.close();
    await store.close({ checkpoint: false });
    await history.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatJobsBench(r: JobsBenchResult): string {
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  return [
    '| figure | value |',
    '|---|---|',
    `| jobs/s through one worker process (${r.jobs.toLocaleString('en-US')} jobs waiting, concurrency ${r.concurrency}, durable activate and complete, many a request) | **${Math.round(r.perSecond).toLocaleString('en-US')}** |`,
    `| in the worker, job received → completion answered, p50 / p99 (that run) | ${ms(r.workerP50Ms)} / ${ms(r.workerP99Ms)} |`,
    `| one job at a time, idle worker polling: start → job activated → completed → execution ended, p50 / p99 | **${ms(r.aloneP50Ms)}** / ${ms(r.aloneP99Ms)} |`,
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const table = formatJobsBench(await runJobsBench());
  console.log(table);
  await writeSection('jobs', `${machineLine()}\n\n${table}`);
  console.log('\nwritten to docs/benchmarks/');
}
