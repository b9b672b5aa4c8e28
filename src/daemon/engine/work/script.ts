/**
 * The sandbox of scriptTask: user JavaScript runs in QuickJS compiled to WebAssembly, inside a
 * small pool of worker threads (script-worker.ts), never in the daemon's own V8 isolate.
 *
 * - Each run gets a fresh QuickJS runtime and context (nothing leaks from one run to the next),
 *   a memory limit, a stack limit and an interrupt handler with a deadline (CPU time).
 * - No host function is reachable but `console` (bounded log lines); QuickJS has no file system,
 *   network, process or module loader of its own.
 * - Backstop: a worker that does not answer within the timeout + 2 s is terminated and replaced;
 *   one that dies fails its run with SCRIPT_CRASHED and is replaced. The event loop of the daemon
 *   never runs script code.
 * - Fair between organizations (script-lanes.ts): a free worker goes to the organization holding
 *   the fewest; one holding none while every worker is busy borrows a worker beyond the pool (at
 *   most `size` such; one kept idle while the pool stays full), so another organization's long
 *   scripts never keep its script waiting.
 * - A run's timeout is at most MAX_SCRIPT_TIMEOUT_MS, whatever it asks.
 *
 * Workers start lazily, are unref()'d while idle (they never keep a process alive on their own)
 * and are terminated by close().
 */
import { Worker } from 'node:worker_threads';
import { MAX_SCRIPT_TIMEOUT_MS } from '../../../shared/flow/timeouts.js';
import { MAX_TIMER_MS } from '../../outbound/http-request.js';
import type { WorkFailureCode, WorkResult } from '../../outbound/result.js';
import { ScriptLanes, type LaneKey } from './script-lanes.js';
import type { ScriptRequest, ScriptResponse } from './script-worker.js';

export interface ScriptRun {
  readonly script: string;
  readonly vars: Record<string, unknown>;
  /** Cut to MAX_SCRIPT_TIMEOUT_MS; not positive or not finite: DEFAULT_SCRIPT_TIMEOUT_MS. */
  readonly timeoutMs: number;
  readonly memoryBytes?: number;
  /** Whose run it is: the pool shares its workers fairly between organizations (default ''). */
  readonly organization?: string;
  /** Within the organization, runs of different executions take turns (default ''). */
  readonly execution?: string;
  /** Its execution's priority: higher first within the organization (default 0). */
  readonly priority?: number;
}

export interface ScriptRunner {
  /** Runs `job` when a worker is free for it; never rejects (failures are results). */
  run(job: ScriptRun, signal?: AbortSignal): Promise<WorkResult>;
  /** Runs on a worker now, runs queued, and workers (idle or busy). */
  stats(): { readonly running: number; readonly queued: number; readonly workers: number };
  /** Cancels what is queued or running (CANCELLED) and terminates the workers. */
  close(): Promise<void>;
}

export const DEFAULT_SCRIPT_POOL_SIZE = 2;
export const DEFAULT_SCRIPT_TIMEOUT_MS = 5_000;
export const DEFAULT_SCRIPT_MEMORY_BYTES = 64 * 1024 * 1024;
/** How long past its timeout a worker may stay silent before it is terminated. */
const BACKSTOP_MS = 2_000;

const WORKER_URL = new URL('./script-worker.js', import.meta.url);

interface Job {
  readonly req: ScriptRequest;
  readonly key: LaneKey;
  /** Taken from the lanes onto a worker: its lane counts it as running until it finishes. */
  started: boolean;
  readonly resolve: (result: WorkResult) => void;
  readonly signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  slot: Slot | undefined;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

interface Slot {
  readonly worker: Worker;
  job: Job | undefined;
  /** Terminated on purpose (backstop, cancel, recycle, close): its exit is no crash. */
  retired: boolean;
  lastError: Error | undefined;
}

function failure(code: WorkFailureCode, message: string): WorkResult {
  return { ok: false, code, message };
}

/**
 * A pool of `size` sandbox workers (default DEFAULT_SCRIPT_POOL_SIZE), and up to `size` more
 * lent to organizations that hold none while the pool is busy; `memoryBytes` is a run's default
 * memory cap, `maxJsonDepth` how deep a result may nest (SCRIPT_RESULT_INVALID beyond).
 */
export function createScriptRunner(options?: {
  readonly size?: number;
  readonly memoryBytes?: number;
  readonly maxJsonDepth?: number;
}): ScriptRunner {
  const size = Math.max(1, Math.floor(options?.size ?? DEFAULT_SCRIPT_POOL_SIZE));
  const defaultMemory = options?.memoryBytes ?? DEFAULT_SCRIPT_MEMORY_BYTES;
  const slots: Slot[] = [];
  const lanes = new ScriptLanes<Job>();
  /** Slots with a job: at most `size`, or `2 * size` counting the ones lent (see pump). */
  let busy = 0;
  const terminating = new Set<Promise<unknown>>();
  let nextId = 1;
  let closed = false;

  function finish(job: Job, result: WorkResult): void {
    if (job.done) return;
    job.done = true;
    if (job.timer) clearTimeout(job.timer);
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    if (job.slot?.job === job) {
      job.slot.job = undefined;
      busy--;
    }
    job.slot = undefined;
    if (job.started) lanes.finished(job.key.organization);
    else lanes.remove(job, job.key);
    job.resolve(result);
  }

  function retire(slot: Slot): void {
    if (slot.retired) return;
    slot.retired = true;
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    const p = slot.worker.terminate().catch(() => undefined);
    terminating.add(p);
    void p.then(() => terminating.delete(p));
  }

  function spawn(): Slot {
    // No execArgv of the daemon's (an --input-type, a loader, an inspector port do not belong in
    // a sandbox thread). The native stack is pinned: QuickJS's own limit sits well below it.
    const worker = new Worker(WORKER_URL, { execArgv: [], resourceLimits: { stackSizeMb: 4 } });
    worker.unref();
    const slot: Slot = { worker, job: undefined, retired: false, lastError: undefined };
    worker.on('message', (msg: ScriptResponse) => onMessage(slot, msg));
    // Without a listener, an error in the worker would be thrown in the daemon's thread.
    worker.on('error', (err: Error) => {
      slot.lastError = err;
    });
    worker.on('messageerror', (err: Error) => {
      slot.lastError = err;
    });
    worker.on('exit', (code: number) => onExit(slot, code));
    slots.push(slot);
    return slot;
  }

  function onMessage(slot: Slot, msg: ScriptResponse): void {
    const job = slot.job;
    if (slot.retired || !job || job.req.id !== msg.id) return;
    finish(job, msg.result);
    if (msg.recycle) retire(slot);
    else slot.worker.unref();
    pump();
  }

  function onExit(slot: Slot, code: number): void {
    if (slot.retired) return;
    slot.retired = true;
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
    const job = slot.job;
    if (job) {
      const why = slot.lastError ? `${slot.lastError.name}: ${slot.lastError.message}` : `exit code ${code}`;
      finish(job, failure('SCRIPT_CRASHED', `the script's worker died (${why})`));
    }
    pump();
  }

  function dispatch(slot: Slot, job: Job): void {
    slot.job = job;
    busy++;
    job.slot = slot;
    job.started = true;
    slot.worker.ref();
    job.timer = setTimeout(
      () => {
        if (job.done || job.slot !== slot) return;
        retire(slot);
        finish(
          job,
          failure(
            'SCRIPT_TIMEOUT',
            `the script ran longer than its ${job.req.timeoutMs} ms limit (its worker was terminated)`,
          ),
        );
        pump();
      },
      Math.min(job.req.timeoutMs + BACKSTOP_MS, MAX_TIMER_MS),
    );
    slot.worker.postMessage(job.req);
  }

  /**
   * Hands queued runs to workers, fairly (ScriptLanes), up to `size` at once; an organization
   * that holds none may go beyond, up to `2 * size`: its script does not wait for another's to
   * end (which may take MAX_SCRIPT_TIMEOUT_MS). Idle workers beyond `size` are then retired,
   * but one while the pool is full: the next lent run need not start a thread again.
   */
  function pump(): void {
    while (!closed) {
      const holds = lanes.nextHolds();
      if (holds === undefined || busy >= (holds === 0 ? 2 * size : size)) break;
      const next = lanes.take()!;
      dispatch(slots.find((s) => !s.job && !s.retired) ?? spawn(), next.item);
    }
    const keep = Math.max(size, busy >= size ? busy + 1 : 0);
    for (const slot of slots.filter((s) => !s.job)) if (slots.length > keep) retire(slot);
  }

  function cancel(job: Job, message: string): void {
    if (job.done) return;
    if (job.slot) retire(job.slot);
    finish(job, failure('CANCELLED', message));
    pump();
  }

  return {
    run(run: ScriptRun, signal?: AbortSignal): Promise<WorkResult> {
      if (closed) return Promise.resolve(failure('CANCELLED', 'the script runner is closed'));
      if (signal?.aborted) return Promise.resolve(failure('CANCELLED', 'the script was cancelled'));
      let varsJson: string;
      try {
        varsJson = JSON.stringify(run.vars ?? {});
      } catch (err) {
        return Promise.resolve(failure('SCRIPT_ERROR', `the variables are not JSON: ${(err as Error).message}`));
      }
      const timeoutMs =
        Number.isFinite(run.timeoutMs) && run.timeoutMs > 0
          ? Math.min(run.timeoutMs, MAX_SCRIPT_TIMEOUT_MS)
          : DEFAULT_SCRIPT_TIMEOUT_MS;
      const memory = run.memoryBytes ?? defaultMemory;
      // QuickJS reads a negative limit as "none": only positive, finite limits are taken.
      const memoryBytes = Number.isFinite(memory) && memory > 0 ? Math.floor(memory) : DEFAULT_SCRIPT_MEMORY_BYTES;
      const req: ScriptRequest = {
        id: nextId++,
        script: String(run.script),
        varsJson,
        timeoutMs,
        memoryBytes,
        ...(options?.maxJsonDepth !== undefined && { maxJsonDepth: options.maxJsonDepth }),
      };
      return new Promise<WorkResult>((resolve) => {
        const key: LaneKey = {
          organization: run.organization ?? '',
          execution: run.execution ?? '',
          ...(run.priority !== undefined && { priority: run.priority }),
        };
        const job: Job = {
          req,
          key,
          started: false,
          resolve,
          signal,
          onAbort: undefined,
          slot: undefined,
          timer: undefined,
          done: false,
        };
        if (signal) {
          job.onAbort = () => cancel(job, 'the script was cancelled');
          signal.addEventListener('abort', job.onAbort, { once: true });
        }
        lanes.push(job, key);
        pump();
      });
    },

    stats() {
      return { running: busy, queued: lanes.queued, workers: slots.length };
    },

    async close(): Promise<void> {
      closed = true;
      for (const job of lanes.drain()) finish(job, failure('CANCELLED', 'the script runner was closed'));
      for (const slot of [...slots]) {
        if (slot.job) finish(slot.job, failure('CANCELLED', 'the script runner was closed'));
        retire(slot);
      }
      await Promise.all([...terminating]);
    },
  };
}
