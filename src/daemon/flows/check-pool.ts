/**
 * The daemon's flow checker: flows are parsed, validated and hashed in one worker thread, so a
 * publish never stalls the event loop that answers every other request
 * (docs/decisions/XXX-flow-limits.md). Checks wait in one line per organization, served in turn
 * (one check of each organization that waits, then again), and each line is bounded: an
 * organization publishing many big flows delays its own publishes, not another's.
 *
 * The worker starts with the first check, is unref()'d while idle, and is replaced when it dies
 * (its check fails with INTERNAL_ERROR); a check running past the backstop has its worker
 * terminated the same way.
 */
import { Worker } from 'node:worker_threads';
import { WfxError } from '../../shared/errors.js';
import type { FlowProblem } from '../../shared/flow/validate.js';
import type { CheckedFlow, FlowCheckRequest, FlowCheckResult, FlowChecker, FlowInput } from './check.js';
import type { CheckAnswer, CheckMessage } from './check-worker.js';

/** Checks of one organization that may wait while another of its checks runs. */
export const FLOW_CHECKS_QUEUED_PER_ORGANIZATION = 8;
/** How long one check may run before its worker is terminated (a flow within its limits takes far less). */
const BACKSTOP_MS = 60_000;
/** The worker's heap: a flow within its limits needs a small part of it. */
const WORKER_HEAP_MB = 256;

const WORKER_URL = new URL('./check-worker.js', import.meta.url);

interface Job {
  readonly id: number;
  readonly request: FlowCheckRequest;
  readonly resolve: (result: FlowCheckResult) => void;
  readonly reject: (err: WfxError) => void;
  timer?: NodeJS.Timeout;
}

/**
 * A FlowChecker backed by one worker thread. `maxQueuedPerOrganization` (default
 * FLOW_CHECKS_QUEUED_PER_ORGANIZATION) bounds each organization's waiting checks.
 */
export function createFlowCheckPool(options?: {
  readonly maxQueuedPerOrganization?: number;
  readonly backstopMs?: number;
}): FlowChecker {
  const maxQueued = options?.maxQueuedPerOrganization ?? FLOW_CHECKS_QUEUED_PER_ORGANIZATION;
  const backstopMs = options?.backstopMs ?? BACKSTOP_MS;
  /** Waiting checks by organization; the Map's order is the turn order. */
  const queues = new Map<string, Job[]>();
  let worker: Worker | null = null;
  let lastError: Error | undefined;
  let running: Job | null = null;
  let nextId = 1;
  let closed = false;

  function spawn(): Worker {
    const w = new Worker(WORKER_URL, {
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: 4 },
    });
    lastError = undefined;
    // Without a listener, an error in the worker would be thrown in the daemon's thread.
    w.on('error', (err: Error) => {
      lastError = err;
    });
    w.on('message', (answer: CheckAnswer) => {
      const job = running;
      if (w !== worker || !job || job.id !== answer.id) return;
      settle(job);
      if ('result' in answer) job.resolve(answer.result);
      else job.reject(new WfxError('INTERNAL_ERROR', `checking the flow failed: ${answer.error}`));
      w.unref();
      pump();
    });
    w.on('exit', (code: number) => {
      if (w !== worker) return;
      worker = null;
      const job = running;
      if (job) {
        settle(job);
        const why = lastError ? `${lastError.name}: ${lastError.message}` : `exit code ${code}`;
        job.reject(new WfxError('INTERNAL_ERROR', `the flow checker stopped while checking (${why})`));
      }
      pump();
    });
    return w;
  }

  function settle(job: Job): void {
    if (job.timer) clearTimeout(job.timer);
    if (running === job) running = null;
  }

  /** Starts the next check, taking organizations in turn. */
  function pump(): void {
    if (closed || running) return;
    const first = queues.entries().next();
    if (first.done) return;
    const [organization, line] = first.value;
    const job = line.shift()!;
    queues.delete(organization);
    if (line.length > 0) queues.set(organization, line); // to the back: the others go first
    running = job;
    const w = (worker ??= spawn());
    w.ref();
    job.timer = setTimeout(() => {
      if (running !== job) return;
      worker = null;
      settle(job);
      job.reject(new WfxError('INTERNAL_ERROR', `checking the flow took longer than ${backstopMs / 1000} s`));
      void w.terminate().catch(() => undefined);
      pump();
    }, backstopMs);
    try {
      w.postMessage({ id: job.id, request: job.request } satisfies CheckMessage);
    } catch (err) {
      // A value that cannot be copied to the worker (never JSON from a request): that check fails alone.
      settle(job);
      job.reject(new WfxError('INTERNAL_ERROR', `the flow cannot be passed to its checker: ${(err as Error).message}`));
      w.unref();
      pump();
    }
  }

  function run(organization: string, request: FlowCheckRequest): Promise<FlowCheckResult> {
    if (closed) return Promise.reject(new WfxError('SERVICE_UNAVAILABLE', 'the daemon is stopping'));
    const line = queues.get(organization) ?? [];
    if (line.length >= maxQueued) {
      return Promise.reject(
        new WfxError(
          'RATE_LIMIT_EXCEEDED',
          `${line.length} flows of organization ${organization} wait to be checked already: publish again when they are done`,
          { details: { retryAfter: 1 } },
        ),
      );
    }
    return new Promise<FlowCheckResult>((resolve, reject) => {
      line.push({ id: nextId++, request, resolve, reject });
      if (!queues.has(organization)) queues.set(organization, line);
      pump();
    });
  }

  return {
    async check(organization: string, input: FlowInput): Promise<CheckedFlow> {
      const result = await run(organization, { kind: 'check', input });
      return (result as Extract<FlowCheckResult, { kind: 'check' }>).checked;
    },
    async locate(organization: string, source: string, problems: readonly FlowProblem[]) {
      const result = await run(organization, { kind: 'locate', source, problems });
      return (result as Extract<FlowCheckResult, { kind: 'locate' }>).problems;
    },
    async close(): Promise<void> {
      closed = true;
      const stopping = new WfxError('SERVICE_UNAVAILABLE', 'the daemon is stopping');
      for (const line of queues.values()) for (const job of line) job.reject(stopping);
      queues.clear();
      if (running) {
        const job = running;
        settle(job);
        job.reject(stopping);
      }
      const w = worker;
      worker = null;
      await w?.terminate().catch(() => undefined);
    },
  };
}
