/**
 * The daemon's flow checker: flows are parsed, validated and hashed in worker threads, so a
 * publish never stalls the event loop that answers every other request
 * (docs/decisions/047-flow-limits.md). Checks wait in one line per organization; the lines are
 * served in turn, and an organization has at most one check running: with two workers, one
 * organization's big flows never hold back another's publish, and each line is bounded.
 *
 * Workers start with the checks that need them, are unref()'d while idle and stopped after a
 * minute of it, and are replaced when they die (the check running fails with INTERNAL_ERROR); a
 * check running past the backstop has its worker terminated the same way.
 */
import { Worker } from 'node:worker_threads';
import { WfxError } from '../../shared/errors.js';
import type { FlowProblem } from '../../shared/flow/validate.js';
import type { CheckedFlow, FlowCheckRequest, FlowCheckResult, FlowChecker, FlowInput } from './check.js';
import type { CheckAnswer, CheckMessage } from './check-worker.js';

/** Checks of one organization that may wait while another of its checks runs. */
export const FLOW_CHECKS_QUEUED_PER_ORGANIZATION = 8;
/** Worker threads: two organizations' checks run at once. */
export const FLOW_CHECK_WORKERS = 2;
/** How long one check may run before its worker is terminated (a flow within its limits takes far less). */
const BACKSTOP_MS = 60_000;
/** How long a worker may idle before it is stopped (its memory given back; the next check starts one). */
const IDLE_MS = 60_000;
/** A worker's heap: a flow within its limits needs a small part of it. */
const WORKER_HEAP_MB = 256;

const WORKER_URL = new URL('./check-worker.js', import.meta.url);

interface Job {
  readonly id: number;
  readonly organization: string;
  readonly request: FlowCheckRequest;
  readonly resolve: (result: FlowCheckResult) => void;
  readonly reject: (err: WfxError) => void;
}

/**
 * Lines of waiting items, one per organization, served in turn: the first organization in line
 * whose item may run gives its oldest, then goes to the back of the line. Each line is bounded.
 */
export class TurnLines<T> {
  /** The lines; the Map's order is the turn order. */
  private readonly lines = new Map<string, T[]>();

  constructor(private readonly maxPerLine: number) {}

  /** How many items of `organization` wait. */
  waiting(organization: string): number {
    return this.lines.get(organization)?.length ?? 0;
  }

  /** Adds an item at the end of its organization's line; false (nothing added) when the line is full. */
  push(organization: string, item: T): boolean {
    const line = this.lines.get(organization);
    if (!line) this.lines.set(organization, [item]);
    else if (line.length >= this.maxPerLine) return false;
    else line.push(item);
    return true;
  }

  /** The next item in turn of an organization not in `busy`, taken out of its line; undefined when none. */
  take(busy: ReadonlySet<string>): T | undefined {
    for (const [organization, line] of this.lines) {
      if (busy.has(organization)) continue;
      const item = line.shift()!;
      this.lines.delete(organization);
      if (line.length > 0) this.lines.set(organization, line);
      return item;
    }
    return undefined;
  }

  /** Every item still waiting, the lines emptied. */
  drain(): T[] {
    const all = [...this.lines.values()].flat();
    this.lines.clear();
    return all;
  }
}

interface Slot {
  readonly worker: Worker;
  job: Job | null;
  /** The backstop of the check running, or the idle timeout of a worker with none. */
  timer: NodeJS.Timeout | undefined;
  /** Terminated on purpose (backstop, close): its exit fails nothing more. */
  retired: boolean;
  lastError: Error | undefined;
}

/**
 * A FlowChecker backed by `workers` worker threads (default FLOW_CHECK_WORKERS).
 * `maxQueuedPerOrganization` (default FLOW_CHECKS_QUEUED_PER_ORGANIZATION) bounds each
 * organization's waiting checks.
 */
export function createFlowCheckPool(options?: {
  readonly workers?: number;
  readonly maxQueuedPerOrganization?: number;
  readonly backstopMs?: number;
}): FlowChecker {
  const size = Math.max(1, options?.workers ?? FLOW_CHECK_WORKERS);
  const maxQueued = options?.maxQueuedPerOrganization ?? FLOW_CHECKS_QUEUED_PER_ORGANIZATION;
  const backstopMs = options?.backstopMs ?? BACKSTOP_MS;
  const lines = new TurnLines<Job>(maxQueued);
  /** Organizations with a check running. */
  const running = new Set<string>();
  const slots: Slot[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Slot {
    const worker = new Worker(WORKER_URL, {
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: 4 },
    });
    const slot: Slot = { worker, job: null, timer: undefined, retired: false, lastError: undefined };
    // Without a listener, an error in the worker would be thrown in the daemon's thread.
    worker.on('error', (err: Error) => {
      slot.lastError = err;
    });
    worker.on('message', (answer: CheckAnswer) => {
      const job = slot.job;
      if (slot.retired || !job || job.id !== answer.id) return;
      finish(slot);
      if ('result' in answer) job.resolve(answer.result);
      else job.reject(new WfxError('INTERNAL_ERROR', `checking the flow failed: ${answer.error}`));
      pump();
    });
    worker.on('exit', (code: number) => {
      if (slot.retired) return;
      retire(slot);
      const job = slot.job;
      if (job) {
        finish(slot);
        const why = slot.lastError ? `${slot.lastError.name}: ${slot.lastError.message}` : `exit code ${code}`;
        job.reject(new WfxError('INTERNAL_ERROR', `the flow checker stopped while checking (${why})`));
      }
      pump();
    });
    slots.push(slot);
    return slot;
  }

  /** The slot's check is over: its organization may run the next, its worker may idle. */
  function finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.job) running.delete(slot.job.organization);
    slot.job = null;
    slot.timer = undefined;
    if (slot.retired) return;
    slot.worker.unref();
    slot.timer = setTimeout(() => {
      retire(slot);
      void slot.worker.terminate().catch(() => undefined);
    }, IDLE_MS);
    slot.timer.unref();
  }

  function retire(slot: Slot): void {
    slot.retired = true;
    const i = slots.indexOf(slot);
    if (i >= 0) slots.splice(i, 1);
  }

  /** Starts checks while a worker is free (or may be started) and a check may run. */
  function pump(): void {
    while (!closed) {
      const slot = slots.find((s) => !s.job) ?? (slots.length < size ? undefined : null);
      if (slot === null) return;
      const job = lines.take(running);
      if (!job) return;
      dispatch(slot ?? spawn(), job);
    }
  }

  function dispatch(slot: Slot, job: Job): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = job;
    running.add(job.organization);
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      if (slot.job !== job) return;
      retire(slot);
      finish(slot);
      job.reject(new WfxError('INTERNAL_ERROR', `checking the flow took longer than ${backstopMs / 1000} s`));
      void slot.worker.terminate().catch(() => undefined);
      pump();
    }, backstopMs);
    try {
      slot.worker.postMessage({ id: job.id, request: job.request } satisfies CheckMessage);
    } catch (err) {
      // A value that cannot be copied to the worker (never JSON from a request): that check fails alone.
      finish(slot);
      job.reject(new WfxError('INTERNAL_ERROR', `the flow cannot be passed to its checker: ${(err as Error).message}`));
    }
  }

  function run(organization: string, request: FlowCheckRequest): Promise<FlowCheckResult> {
    if (closed) return Promise.reject(new WfxError('SERVICE_UNAVAILABLE', 'the daemon is stopping'));
    return new Promise<FlowCheckResult>((resolve, reject) => {
      const job: Job = { id: nextId++, organization, request, resolve, reject };
      if (!lines.push(organization, job)) {
        const why = `${lines.waiting(organization)} flows of organization ${organization} wait to be checked already: publish again when they are done`;
        reject(new WfxError('RATE_LIMIT_EXCEEDED', why, { details: { retryAfter: 1 } }));
        return;
      }
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
      for (const job of lines.drain()) job.reject(stopping);
      const stopped = [...slots];
      for (const slot of stopped) {
        const job = slot.job;
        retire(slot);
        finish(slot);
        job?.reject(stopping);
      }
      await Promise.all(stopped.map((s) => s.worker.terminate().catch(() => undefined)));
    },
  };
}
