/**
 * A job worker: pulls a domain's jobs from a wfx daemon (POST /jobs/activate, a long poll),
 * runs a handler per action, and completes each job (many to a request: completions.ts) or
 * fails it; heartbeats while a handler runs, so a long job keeps its lock. Reconnects with backoff when the daemon is away (a completion
 * whose lock the restarted daemon still honours is accepted). Stopping finishes the jobs in
 * hand within a grace period and gives the rest back (release), so none waits for its lock to
 * lapse. A job runs at least once: a worker that dies mid-job leaves it to the next worker once
 * its lock lapses, and the daemon accepts one completion per job.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { WfxClient } from '../client/client.js';
import type { ActivatedJob } from '../shared/api/index.js';
import { DEFAULT_LOCK_DURATION_MS, DEFAULT_REQUEST_TIMEOUT_MS } from '../shared/api/index.js';
import { isWfxError, type ErrorCode } from '../shared/errors.js';
import { Completions } from './completions.js';
import { JobError, failureOf } from './job-error.js';

export { JobError };

/** What a handler gets besides the job's input. */
export interface JobContext extends ActivatedJob {
  /** The worker's name (it holds the job's lock). */
  readonly worker: string;
  /** Aborted when the job is no longer this worker's (its lock lost, the worker stopping): stop work, the result is dropped. */
  readonly signal: AbortSignal;
}

/**
 * One action's work: the job's input in, its output out (JSON; checked against the action's
 * output schema). A throw fails the attempt: a JobError says its code and whether to retry;
 * any other error is `WORKER_ERROR` with its message.
 */
export type JobHandler = (input: Record<string, unknown>, job: JobContext) => unknown;

/** What a worker reports as it goes (the CLI prints these). */
export type WorkerEvent =
  | { readonly type: 'polling'; readonly worker: string }
  | { readonly type: 'completed'; readonly job: ActivatedJob; readonly ms: number }
  | {
      readonly type: 'failed';
      readonly job: ActivatedJob;
      readonly code: string;
      readonly message: string;
      readonly status: string;
    }
  | { readonly type: 'dropped'; readonly job: ActivatedJob; readonly why: string }
  | { readonly type: 'released'; readonly job: ActivatedJob }
  | { readonly type: 'disconnected'; readonly error: string; readonly retryInMs: number }
  | { readonly type: 'stopped' };

export interface WorkerOptions {
  readonly url: string;
  readonly apiKey: string;
  readonly domain: string;
  /**
   * A handler per action; the worker activates jobs of these actions only. A handler named `*`
   * takes every action of the domain that has no handler of its own (and then every action's
   * jobs are activated).
   */
  readonly handlers: Readonly<Record<string, JobHandler>>;
  /** The worker's name (default: host, pid and a random suffix: unique per process). */
  readonly name?: string;
  /** Jobs run at once at most (default 4). */
  readonly concurrency?: number;
  /** ms a lock lasts; heartbeats renew it at half of that (default 60000). */
  readonly lockDuration?: number;
  /** ms a long poll waits for jobs (default 20000). */
  readonly requestTimeout?: number;
  /** ms stop() waits for jobs in hand before it releases them (default 10000). */
  readonly stopTimeout?: number;
  /**
   * The waits between tries to reach the daemon again after a long poll failed: from
   * `initialMs` (default 200), doubling up to `maxMs` (default 10000), each 50 to 100 % of
   * that, so workers that lost the daemon together do not all call back at once. A poll that
   * succeeds starts again from `initialMs`. `maxMs` also bounds the retries of a job's calls.
   */
  readonly reconnect?: { readonly initialMs?: number; readonly maxMs?: number };
  /** System keys: the organization whose jobs. */
  readonly organization?: string;
  readonly onEvent?: (event: WorkerEvent) => void;
  /** A client of one's own (tests); default: one for `url` and `apiKey`. */
  readonly client?: WfxClient;
}

/** A running worker. */
export interface Worker {
  readonly name: string;
  /** Stops polling, finishes (or, after stopTimeout, releases) the jobs in hand; `now`: releases them at once. */
  stop(options?: { readonly now?: boolean }): Promise<void>;
  /** Settles once stopped: rejects when the worker had to stop (a credential refused, an unknown domain). */
  readonly done: Promise<void>;
  /** Jobs completed and failed so far. */
  readonly stats: { readonly completed: number; readonly failed: number; readonly inFlight: number };
}

/** Errors that no reconnect cures: the worker stops with them. */
const FATAL: ReadonlySet<ErrorCode> = new Set(['UNAUTHORIZED', 'FORBIDDEN', 'DOMAIN_NOT_FOUND', 'VALIDATION_ERROR']);
/** Errors of a job call that mean the job is not this worker's any more: its result is dropped. */
const LOST: ReadonlySet<ErrorCode> = new Set(['JOB_LOCK_LOST', 'JOB_NOT_FOUND']);
const RECONNECT_INITIAL_MS = 200;
const RECONNECT_MAX_MS = 10_000;

/** A job this worker holds. */
interface Held {
  /** The job, its `lockedUntil` renewed by each heartbeat. */
  job: ActivatedJob;
  readonly abort: AbortController;
  /** Given back (stopping) or lost: whatever the handler returns is dropped. */
  gone: string | null;
  heartbeat: NodeJS.Timeout | undefined;
}

/** Starts a worker for `options.domain` (see the top of this file); it polls until stopped. */
export function createWorker(options: WorkerOptions): Worker {
  const client =
    options.client ?? new WfxClient({ url: options.url, apiKey: options.apiKey, credentialSource: 'worker' });
  const name = options.name ?? `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const lockDuration = options.lockDuration ?? DEFAULT_LOCK_DURATION_MS;
  const actions = Object.hasOwn(options.handlers, '*') ? undefined : Object.keys(options.handlers);
  const emit = options.onEvent ?? (() => undefined);
  const initialMs = Math.max(1, options.reconnect?.initialMs ?? RECONNECT_INITIAL_MS);
  const maxMs = Math.max(initialMs, options.reconnect?.maxMs ?? RECONNECT_MAX_MS);
  const held = new Map<string, Held>();
  const completions = new Completions(client, name);
  const stats = { completed: 0, failed: 0, inFlight: 0 };
  let stopping = false;
  const poll = new AbortController();
  let slotFreed: (() => void) | null = null;

  /** Retries a job call while the daemon is away, as long as the lock may still hold. */
  async function call<T>(h: Held, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const away =
          isWfxError(err, 'DAEMON_UNREACHABLE') ||
          isWfxError(err, 'SERVICE_UNAVAILABLE') ||
          isWfxError(err, 'PARTITION_MOVING');
        if (!away || Date.now() > Date.parse(h.job.lockedUntil) || attempt > 50) throw err;
        await sleep(Math.min(maxMs, 100 * 2 ** attempt), null);
      }
    }
  }

  async function run(job: ActivatedJob): Promise<void> {
    const h: Held = { job, abort: new AbortController(), gone: null, heartbeat: undefined };
    held.set(job.key, h);
    stats.inFlight++;
    const started = performance.now();
    const renewEvery = Math.max(100, Math.floor(lockDuration / 2));
    const renew = (): void => {
      h.heartbeat = setTimeout(() => {
        client.jobs.heartbeat(job.key, { worker: name }).then(
          (a) => {
            if (a.lockedUntil) h.job = { ...h.job, lockedUntil: a.lockedUntil };
            if (h.gone === null) renew();
          },
          (err: unknown) => {
            if (isWfxError(err) && LOST.has(err.code)) lose(h, `${err.code}: ${err.message}`);
            else if (h.gone === null) renew(); // the daemon away: try again, the lock may hold
          },
        );
      }, renewEvery);
    };
    renew();
    try {
      const handler = Object.hasOwn(options.handlers, job.action)
        ? options.handlers[job.action]!
        : options.handlers['*']!;
      let output: unknown;
      try {
        output = await handler(job.input, { ...job, worker: name, signal: h.abort.signal });
      } catch (err) {
        if (h.gone !== null) return emit({ type: 'dropped', job, why: h.gone });
        const f = failureOf(err);
        const answer = await call(h, () =>
          client.jobs.fail(job.key, {
            worker: name,
            errorCode: f.code,
            errorMessage: f.message,
            retry: f.retry,
            ...(f.backoffMs !== undefined && { retryBackoff: f.backoffMs }),
          }),
        );
        stats.failed++;
        return emit({ type: 'failed', job, code: f.code, message: f.message, status: answer.status });
      }
      if (h.gone !== null) return emit({ type: 'dropped', job, why: h.gone });
      try {
        await call(h, () => completions.complete(job.key, output ?? null));
        stats.completed++;
        emit({ type: 'completed', job, ms: performance.now() - started });
      } catch (err) {
        if (isWfxError(err, 'JOB_OUTPUT_INVALID')) {
          stats.failed++;
          const status = (err.details as { status?: string } | undefined)?.status ?? 'failed';
          return emit({ type: 'failed', job, code: err.code, message: err.message, status });
        }
        throw err;
      }
    } catch (err) {
      emit({ type: 'dropped', job, why: isWfxError(err) ? `${err.code}: ${err.message}` : String(err) });
    } finally {
      // A heartbeat answered after this must not arm another.
      h.gone ??= 'finished';
      clearTimeout(h.heartbeat);
      held.delete(job.key);
      stats.inFlight--;
      slotFreed?.();
    }
  }

  function lose(h: Held, why: string): void {
    if (h.gone !== null) return;
    h.gone = why;
    clearTimeout(h.heartbeat);
    h.abort.abort(new Error(why));
  }

  async function loop(): Promise<void> {
    let failures = 0;
    emit({ type: 'polling', worker: name });
    // As Camunda's job workers do: under load, ask again once half the slots are free, so one
    // activation (one durable step in the daemon) locks several jobs instead of one each.
    const threshold = Math.max(1, Math.ceil(concurrency / 2));
    while (!stopping) {
      if (concurrency - stats.inFlight < threshold) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        slotFreed = null;
        continue;
      }
      try {
        const { jobs } = await client.jobs.activate(
          {
            domain: options.domain,
            ...(actions && { actions }),
            worker: name,
            maxJobs: concurrency - stats.inFlight,
            lockDuration,
            requestTimeout: options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS,
            ...(options.organization !== undefined && { organization: options.organization }),
          },
          poll.signal,
        );
        failures = 0;
        for (const job of jobs) void run(job);
      } catch (err) {
        if (stopping) break;
        if (isWfxError(err) && FATAL.has(err.code)) throw err;
        const retryInMs = Math.round(Math.min(maxMs, initialMs * 2 ** failures++) * (0.5 + Math.random() / 2));
        emit({ type: 'disconnected', error: isWfxError(err) ? `${err.code}: ${err.message}` : String(err), retryInMs });
        await sleep(retryInMs, poll.signal);
      }
    }
  }

  let graceMs = options.stopTimeout ?? 10_000;
  const done = loop().finally(async () => {
    stopping = true;
    await drain();
    emit({ type: 'stopped' });
  });
  // A caller that never awaits `done` must not see an unhandled rejection: `done` reports it.
  done.catch(() => undefined);

  return {
    name,
    stats,
    done,
    async stop(opts = {}) {
      if (opts.now) graceMs = 0;
      stopping = true;
      poll.abort();
      slotFreed?.();
      await done.catch(() => undefined);
    },
  };

  /** Waits up to `graceMs` (a stop now cuts it short) for the jobs in hand, then releases the rest. */
  async function drain(): Promise<void> {
    const from = Date.now();
    while (held.size > 0 && Date.now() < from + graceMs) await sleep(50, null);
    await Promise.allSettled(
      [...held.values()].map(async (h) => {
        lose(h, 'the worker stopped and released it');
        await client.jobs.release(h.job.key, name).then(
          () => emit({ type: 'released', job: h.job }),
          () => undefined, // lapses with its lock
        );
      }),
    );
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}
