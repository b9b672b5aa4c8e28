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
 *
 * Workers start lazily, are unref()'d while idle (they never keep a process alive on their own)
 * and are terminated by close().
 */
import { Worker } from 'node:worker_threads';
import type { WorkFailureCode, WorkResult } from './result.js';
import type { ScriptRequest, ScriptResponse } from './script-worker.js';

export interface ScriptRun {
  readonly script: string;
  readonly vars: Record<string, unknown>;
  readonly timeoutMs: number;
  readonly memoryBytes?: number;
}

export interface ScriptRunner {
  run(job: ScriptRun, signal?: AbortSignal): Promise<WorkResult>;
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
 * A pool of `size` sandbox workers (default DEFAULT_SCRIPT_POOL_SIZE); `memoryBytes` is a run's
 * default memory cap, `maxJsonDepth` how deep a result may nest (SCRIPT_RESULT_INVALID beyond).
 */
export function createScriptRunner(options?: {
  readonly size?: number;
  readonly memoryBytes?: number;
  readonly maxJsonDepth?: number;
}): ScriptRunner {
  const size = Math.max(1, Math.floor(options?.size ?? DEFAULT_SCRIPT_POOL_SIZE));
  const defaultMemory = options?.memoryBytes ?? DEFAULT_SCRIPT_MEMORY_BYTES;
  const slots: Slot[] = [];
  const queue: Job[] = [];
  const terminating = new Set<Promise<unknown>>();
  let nextId = 1;
  let closed = false;

  function finish(job: Job, result: WorkResult): void {
    if (job.done) return;
    job.done = true;
    if (job.timer) clearTimeout(job.timer);
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    if (job.slot?.job === job) job.slot.job = undefined;
    job.slot = undefined;
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
    job.slot = slot;
    slot.worker.ref();
    job.timer = setTimeout(() => {
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
    }, job.req.timeoutMs + BACKSTOP_MS);
    slot.worker.postMessage(job.req);
  }

  function pump(): void {
    while (!closed && queue.length > 0) {
      let slot = slots.find((s) => !s.job && !s.retired);
      if (!slot) {
        if (slots.length >= size) return;
        slot = spawn();
      }
      dispatch(slot, queue.shift()!);
    }
  }

  function cancel(job: Job, message: string): void {
    if (job.done) return;
    const slot = job.slot;
    if (slot) retire(slot);
    else {
      const i = queue.indexOf(job);
      if (i >= 0) queue.splice(i, 1);
    }
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
      const timeoutMs = Number.isFinite(run.timeoutMs) && run.timeoutMs > 0 ? run.timeoutMs : DEFAULT_SCRIPT_TIMEOUT_MS;
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
        const job: Job = { req, resolve, signal, onAbort: undefined, slot: undefined, timer: undefined, done: false };
        if (signal) {
          job.onAbort = () => cancel(job, 'the script was cancelled');
          signal.addEventListener('abort', job.onAbort, { once: true });
        }
        queue.push(job);
        pump();
      });
    },

    async close(): Promise<void> {
      closed = true;
      for (const job of queue.splice(0)) finish(job, failure('CANCELLED', 'the script runner was closed'));
      for (const slot of [...slots]) {
        if (slot.job) finish(slot.job, failure('CANCELLED', 'the script runner was closed'));
        retire(slot);
      }
      await Promise.all([...terminating]);
    },
  };
}
