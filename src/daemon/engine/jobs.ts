/**
 * The jobs API's operations on the engine: activate (lock waiting jobs to a worker), complete,
 * fail, heartbeat and release. Each is one step, as a task answer is: it checks first, in the
 * step and on the state as it is then, and throws a catalogue error (JOB_NOT_FOUND,
 * JOB_LOCK_LOST, DOMAIN_NOT_FOUND) before anything changes; its records are durable before the
 * worker hears back. A lock lapses by the clock alone: an activation takes any job whose lock's
 * expiry is past, so no timer has to fire for a lock to lapse, and after a restart every lock
 * is honoured until its expiry, as it was journaled.
 */
import type { ActivatedJob, JobAnswer, JobView } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { ownEntry } from '../../shared/json-object.js';
import { JobQueues, jobKey, jobTarget, waitingJob, type JobRef } from '../state/job-queues.js';
import type { Instance, JobWait, NodeInstance, WfxState } from '../state/state.js';
import type { DomainSchemas } from '../jobs/schemas.js';
import type { JobResult } from './nodes/handler.js';
import type { StepRunner } from './work-runner.js';

/** What JobOperations needs from the engine. */
export interface JobOperationsOptions {
  readonly state: WfxState;
  readonly step: StepRunner;
  readonly now: () => Date;
  readonly schemas: DomainSchemas;
}

/** An activation: the worker, what it takes, for how long. */
export interface ActivateRequest {
  readonly organization: string;
  readonly domain: string;
  /** Only these actions; undefined: every action of the domain. */
  readonly actions?: readonly string[];
  readonly worker: string;
  readonly maxJobs: number;
  readonly lockDurationMs: number;
}

/** A call about one job: its key, the worker that holds it, and the caller's organization (null: a system caller, any). */
export interface JobCall {
  readonly organization: string | null;
  readonly key: string;
  readonly worker: string;
}

/** A failed attempt as a worker reports it. */
export interface FailRequest extends JobCall {
  readonly errorCode?: string;
  readonly errorMessage?: string;
  readonly retry?: boolean;
  readonly retryBackoffMs?: number;
}

/** A job found by key, with what its answer names. */
interface Held {
  readonly inst: Instance;
  readonly node: NodeInstance;
  readonly wait: JobWait;
  readonly ref: JobRef;
}

const isAvailable = (wait: JobWait, now: string): boolean =>
  (wait.lock === null || wait.lock.expiresAt <= now) && (wait.notBefore === null || wait.notBefore <= now);

/** The jobs API's engine operations (see the top of this file). */
export class JobOperations {
  private readonly state: WfxState;

  constructor(private readonly options: JobOperationsOptions) {
    this.state = options.state;
  }

  /**
   * Locks up to `maxJobs` available jobs of the domain's actions (oldest first) to `worker` and
   * resolves with them once the locks are durable; with none available, resolves with [] at
   * once and writes nothing. Throws DOMAIN_NOT_FOUND (no such domain, or action, in the
   * organization).
   */
  async activate(req: ActivateRequest): Promise<ActivatedJob[]> {
    const actions = this.actionsOf(req.organization, req.domain, req.actions);
    if (this.available(req.organization, req.domain, actions, req.maxJobs, this.options.now()).length === 0) return [];
    return this.options.step((t, emit) => {
      const now = t.now;
      const at = now.toISOString();
      const expiresAt = new Date(now.getTime() + req.lockDurationMs).toISOString();
      const picked = this.available(req.organization, req.domain, actions, req.maxJobs, now);
      return picked.map((h) => {
        t.touched.add(h.ref.instanceId);
        const lock = { worker: req.worker, activatedAt: at, expiresAt, durationMs: req.lockDurationMs };
        emit({ type: 'job.locked', ...h.ref, at, lock, reason: 'activated' });
        return activated(h, expiresAt);
      });
    });
  }

  /**
   * When a job of the domain's actions that is not available now (locked, or in a retry's
   * backoff) becomes available by the clock, in ms since the epoch; null when none will. A long
   * poll wakes then, so a lapsing lock needs no timer of its own.
   */
  nextAvailableAt(organization: string, domain: string, actions: readonly string[] | undefined): number | null {
    const queues = JobQueues.of(this.state);
    let next: number | null = null;
    for (const action of actions ?? queues.actions(organization, domain)) {
      for (const ref of queues.queue(organization, domain, action).values()) {
        const wait = waitingJob(this.state, ref)?.wait;
        if (!wait) continue;
        const times = [wait.lock?.expiresAt, wait.notBefore].filter((x): x is string => x != null).map(Date.parse);
        if (times.length === 0) continue;
        const at = Math.max(...times);
        if (next === null || at < next) next = at;
      }
    }
    return next;
  }

  /**
   * Completes the job with `output`: its node completes (the output in its resultVariable).
   * Output that does not match the action's output schema is a failed attempt instead (retried
   * or failing the node, as a worker's failure), and then throws JOB_OUTPUT_INVALID (422) once
   * that is durable. Throws JOB_NOT_FOUND, JOB_LOCK_LOST before anything changes.
   */
  async complete(req: JobCall & { readonly output: unknown }): Promise<JobAnswer> {
    const refused = await this.options.step((t) => {
      const h = this.held(req, t.now);
      const action = ownEntry(this.state.domains[h.inst.organization] ?? {}, h.wait.domain)?.actions[h.wait.action];
      const problem = action ? this.options.schemas.problem(action.output, req.output, 'the output') : null;
      if (problem === null) {
        t.resume(h.inst, h.node, { kind: 'job', result: { ok: true, output: req.output } });
        return null;
      }
      const result: JobResult = {
        ok: false,
        worker: req.worker,
        code: 'JOB_OUTPUT_INVALID',
        message: problem,
        retry: true,
      };
      t.resume(h.inst, h.node, { kind: 'job', result });
      return { problem, answer: this.afterFailure(req.key, h.ref) };
    });
    if (refused === null) return { key: req.key, status: 'completed' };
    throw new WfxError(
      'JOB_OUTPUT_INVALID',
      `${refused.problem}; the attempt counts as failed (${refused.answer.status})`,
      {
        details: { problem: refused.problem, ...refused.answer },
      },
    );
  }

  /**
   * A failed attempt: retried after the backoff while attempts are left (and `retry` is not
   * false), else the node fails with the worker's error code (JOB_FAILED without one). Throws
   * JOB_NOT_FOUND, JOB_LOCK_LOST before anything changes.
   */
  fail(req: FailRequest): Promise<JobAnswer> {
    return this.options.step((t) => {
      const h = this.held(req, t.now);
      const result: JobResult = {
        ok: false,
        worker: req.worker,
        code: req.errorCode ?? null,
        message: req.errorMessage ?? '',
        retry: req.retry !== false,
        ...(req.retryBackoffMs !== undefined && { backoffMs: req.retryBackoffMs }),
      };
      t.resume(h.inst, h.node, { kind: 'job', result });
      return this.afterFailure(req.key, h.ref);
    });
  }

  /** Extends the worker's lock by `lockDurationMs` from now (default: its activation's). Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  heartbeat(req: JobCall & { readonly lockDurationMs?: number }): Promise<JobAnswer> {
    return this.options.step((t, emit) => {
      const h = this.held(req, t.now);
      const lock = h.wait.lock!;
      const durationMs = req.lockDurationMs ?? lock.durationMs;
      const expiresAt = new Date(t.now.getTime() + durationMs).toISOString();
      emit({
        type: 'job.locked',
        ...h.ref,
        at: t.now.toISOString(),
        lock: { worker: lock.worker, activatedAt: lock.activatedAt, expiresAt, durationMs },
        reason: 'extended',
      });
      return { key: req.key, status: 'locked', lockedUntil: expiresAt };
    });
  }

  /** Gives the job back unworked: available at once, no attempt counted. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  release(req: JobCall): Promise<JobAnswer> {
    return this.options.step((t, emit) => {
      const h = this.held(req, t.now);
      t.touched.add(h.ref.instanceId);
      emit({ type: 'job.locked', ...h.ref, at: t.now.toISOString(), lock: null, reason: 'released' });
      return { key: req.key, status: 'released' };
    });
  }

  /** The waiting jobs (organization null: every one), oldest first, at most `limit`. Pure read. */
  list(filter: {
    readonly organization: string | null;
    readonly domain?: string;
    readonly action?: string;
    readonly limit: number;
  }): { items: JobView[]; more: boolean } {
    const queues = JobQueues.of(this.state);
    const now = this.options.now().toISOString();
    const found: JobView[] = [];
    for (const [org, domain] of queues.domains()) {
      if ((filter.organization !== null && org !== filter.organization) || (filter.domain ?? domain) !== domain)
        continue;
      for (const action of queues.actions(org, domain)) {
        if ((filter.action ?? action) !== action) continue;
        for (const ref of queues.queue(org, domain, action).values()) {
          const h = waitingJob(this.state, ref);
          if (h) found.push(viewOf({ ...h, ref }, now));
        }
      }
    }
    found.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
    return { items: found.slice(0, filter.limit), more: found.length > filter.limit };
  }

  /** The actions an activation takes: the given ones (each checked) or every action of the domain. Throws DOMAIN_NOT_FOUND. */
  private actionsOf(organization: string, domain: string, actions: readonly string[] | undefined): readonly string[] {
    const d = ownEntry(this.state.domains[organization] ?? {}, domain);
    if (!d) throw new WfxError('DOMAIN_NOT_FOUND', `organization ${organization} has no domain ${domain}`);
    if (actions === undefined) return Object.keys(d.actions);
    const unknown = actions.find((a) => !Object.hasOwn(d.actions, a));
    if (unknown !== undefined) throw new WfxError('DOMAIN_NOT_FOUND', `domain ${domain} has no action ${unknown}`);
    return actions;
  }

  /** Up to `max` available jobs of the actions, oldest waiting first within each action. Pure read. */
  private available(organization: string, domain: string, actions: readonly string[], max: number, now: Date): Held[] {
    const queues = JobQueues.of(this.state);
    const at = now.toISOString();
    const picked: Held[] = [];
    for (const action of actions) {
      for (const ref of queues.queue(organization, domain, action).values()) {
        if (picked.length >= max) return picked;
        const h = waitingJob(this.state, ref);
        if (h && isAvailable(h.wait, at)) picked.push({ ...h, ref });
      }
    }
    return picked;
  }

  /** The job `req.key` names, held by `req.worker` now. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  private held(req: JobCall, now: Date): Held {
    const ref = jobTarget(req.key);
    const h = ref && waitingJob(this.state, ref);
    if (!ref || !h || (req.organization !== null && h.inst.organization !== req.organization))
      throw new WfxError('JOB_NOT_FOUND', `no job ${req.key} waits (never one, or its node is done)`);
    const lock = h.wait.lock;
    if (lock === null || lock.worker !== req.worker || lock.expiresAt <= now.toISOString()) {
      const why =
        lock === null
          ? 'no worker holds it (its lock lapsed and it waits again)'
          : lock.worker !== req.worker
            ? `worker ${lock.worker} holds it`
            : `its lock lapsed at ${lock.expiresAt}`;
      throw new WfxError('JOB_LOCK_LOST', `worker ${req.worker} does not hold job ${req.key}: ${why}`, {
        details: { worker: lock?.worker ?? null, lockedUntil: lock?.expiresAt ?? null },
      });
    }
    return { ...h, ref };
  }

  /** What a failed attempt led to: the next attempt's wait, or the node's failure. */
  private afterFailure(key: string, ref: JobRef): JobAnswer {
    const next = waitingJob(this.state, ref);
    if (!next) return { key, status: 'failed', retriesLeft: 0 };
    return {
      key,
      status: 'retrying',
      retriesLeft: next.wait.maxAttempts - next.wait.attempt,
      notBefore: next.wait.notBefore,
    };
  }
}

/** A job as its worker gets it. */
function activated(h: Held, lockedUntil: string): ActivatedJob {
  return {
    key: jobKey(h.ref.instanceId, h.ref.nodeInstanceId),
    domain: h.wait.domain,
    action: h.wait.action,
    input: h.wait.input,
    attempt: h.wait.attempt,
    maxAttempts: h.wait.maxAttempts,
    retriesLeft: h.wait.maxAttempts - h.wait.attempt,
    lockedUntil,
    deadline: h.wait.dueAt,
    processInstanceId: h.inst.processInstanceId,
    processId: h.inst.processId,
    nodeId: h.node.nodeId,
    organization: h.inst.organization,
  };
}

/** A job as GET /jobs lists it. */
function viewOf(h: Held, now: string): JobView {
  const w = h.wait;
  const locked = w.lock !== null && w.lock.expiresAt > now;
  return {
    key: jobKey(h.ref.instanceId, h.ref.nodeInstanceId),
    organization: h.inst.organization,
    domain: w.domain,
    action: w.action,
    state: locked ? 'locked' : w.notBefore !== null && w.notBefore > now ? 'backoff' : 'waiting',
    worker: locked ? w.lock!.worker : null,
    lockedUntil: locked ? w.lock!.expiresAt : null,
    attempt: w.attempt,
    maxAttempts: w.maxAttempts,
    activations: w.activations,
    notBefore: w.notBefore,
    deadline: w.dueAt,
    lastError: w.lastError,
    createdAt: h.node.startTime,
    processInstanceId: h.inst.processInstanceId,
    processId: h.inst.processId,
    processName: h.inst.processName,
    nodeId: h.node.nodeId,
  };
}
