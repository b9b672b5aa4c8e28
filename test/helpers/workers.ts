import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WfxClient } from '../../src/client/client.js';
import { spawnWfx } from './cli.js';
import { eventually } from './eventually.js';
import { BILLING } from './jobs.js';

/** A `wfx worker run` process of a test: its events (--json lines) as they come. */
export interface WorkerProcess {
  readonly proc: ChildProcess;
  /** Every event line printed so far, parsed. */
  readonly events: Array<{ type: string; job?: { key: string }; [k: string]: unknown }>;
  /** Standard error so far. */
  stderr(): string;
  /** Resolves with the exit code (or signal) once it exited. */
  readonly exited: Promise<number | string>;
}

/**
 * Spawns `wfx worker run ...args --json` against `url` with `apiKey`, in `cwd`; killed at teardown.
 */
export function spawnWorker(
  t: { teardown(fn: () => unknown): void },
  opts: { cwd: string; url: string; apiKey: string; args: string[]; env?: NodeJS.ProcessEnv },
): WorkerProcess {
  const proc = spawnWfx(t, ['--url', opts.url, '--api-key', opts.apiKey, '--json', 'worker', 'run', ...opts.args], {
    cwd: opts.cwd,
    ...(opts.env && { env: opts.env }),
  });
  const events: WorkerProcess['events'] = [];
  let err = '';
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      try {
        events.push(JSON.parse(line) as WorkerProcess['events'][number]);
      } catch {
        events.push({ type: 'text', line });
      }
    }
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = once(proc, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return { proc, events, stderr: () => err, exited };
}

/**
 * The handlers module of the e2e tests: `charge` answers a receipt naming its process and
 * worker. HANG=1 holds every job for ever; GATE=1 holds them until the process gets SIGUSR2,
 * UNTIL_TERM=1 until it gets SIGTERM (the worker is then stopping: it finishes them). Each job
 * prints `in hand <key>` on standard error as its handler starts (see `inHand`).
 */
export const HANDLERS_MODULE = `export const domain = 'billing';
const gate =
  process.env.GATE === '1' ? new Promise((resolve) => process.once('SIGUSR2', resolve))
  : process.env.UNTIL_TERM === '1' ? new Promise((resolve) => process.once('SIGTERM', resolve))
  : null;
export async function charge(input, job) {
  process.stderr.write('in hand ' + job.key + '\\n');
  if (process.env.HANG === '1') await new Promise(() => {});
  if (gate) await gate;
  return { receipt: 'r-' + input.amount + '-' + process.pid, worker: job.worker };
}
export function refund() { return {}; }
`;

/**
 * Resolves once worker `w` has job `key` in hand: its handler started. The daemon shows a job
 * locked before the worker has read the answer that carries it, so that is not enough for a
 * test about what the worker does with the jobs it holds.
 */
export function inHand(w: WorkerProcess, key: string): Promise<true> {
  return eventually(`worker holds ${key}`, () => w.stderr().includes(`in hand ${key}\n`) || undefined);
}

/** Writes HANDLERS_MODULE to `cwd`/handlers.mjs, registers BILLING and makes a worker key; returns the key. */
export async function prepareWorkers(cwd: string, admin: WfxClient): Promise<string> {
  await writeFile(join(cwd, 'handlers.mjs'), HANDLERS_MODULE);
  await admin.domains.register('billing', { description: BILLING.description, actions: BILLING.actions });
  return (await admin.keys.create({ name: 'worker', role: 'worker', organization: 'default' })).apiKey;
}
