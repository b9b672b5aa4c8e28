/**
 * The step's job inputs (domainTask jobs, the jobs API): an activation locks available jobs to
 * a worker, a heartbeat extends a lock, a release gives a job back, a completion or a failure
 * resumes the job's node. Each checks first, on the state as it is in the step, and throws a
 * catalogue error (JOB_NOT_FOUND, JOB_LOCK_LOST) before anything changes. A lock lapses by
 * the clock alone: an activation takes any job whose lock's expiry is past.
 */
import type { ActivatedJob, JobAnswer } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { ownEntry } from '../../../shared/json-object.js';
import {
  JobQueues,
  isFree,
  jobKey,
  jobTarget,
  jobTimes,
  waitingJob,
  type JobReads,
  type JobRef,
} from '../../state/job-queues.js';
import type { Execution, JobWait, NodeInstance, WfxState } from '../../state/state.js';
import type { JobResult } from '../nodes/handler.js';
import type { Step } from './step.js';

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

/** The job inputs of the step (index.ts, StepInput). */
export type JobInput =
  /** Locks up to `req.maxJobs` available jobs of `actions` (checked by the caller) to the worker. */
  | { readonly kind: 'job.activate'; readonly req: ActivateRequest; readonly actions: readonly string[] }
  /** The worker's output: the node completes, or a failed attempt when it does not match the action's schema. */
  | { readonly kind: 'job.complete'; readonly req: JobCall & { readonly output: unknown } }
  | { readonly kind: 'job.fail'; readonly req: FailRequest }
  | { readonly kind: 'job.heartbeat'; readonly req: JobCall & { readonly lockDurationMs?: number } }
  | { readonly kind: 'job.release'; readonly req: JobCall };

/** What a completion whose output its action's schema refuses did: a failed attempt, and why. */
export interface RefusedOutput {
  readonly problem: string;
  readonly answer: JobAnswer;
}

/** What each job input answers. */
export interface JobAnswers {
  'job.activate': ActivatedJob[];
  'job.complete': RefusedOutput | null;
  'job.fail': JobAnswer;
  'job.heartbeat': JobAnswer;
  'job.release': JobAnswer;
}

/** A job found by key, with what its answer names. */
export interface Held {
  readonly inst: Execution;
  readonly node: NodeInstance;
  readonly wait: JobWait;
  readonly ref: JobRef;
}

const isAvailable = (wait: JobWait, now: string): boolean =>
  (wait.lock === null || wait.lock.expiresAt <= now) && (wait.notBefore === null || wait.notBefore <= now);

/** Locks the available jobs to the worker (see JobInput). */
export function activateJobs(s: Step, input: Extract<JobInput, { kind: 'job.activate' }>): ActivatedJob[] {
  const { req } = input;
  const expiresAt = new Date(s.now.getTime() + req.lockDurationMs).toISOString();
  const picked = availableJobs(s.state, req.organization, req.domain, input.actions, req.maxJobs, s.now);
  return picked.map((h) => {
    s.touched.add(h.ref.instanceId);
    const lock = { worker: req.worker, activatedAt: s.at, expiresAt, durationMs: req.lockDurationMs };
    s.emit({ type: 'job.locked', ...h.ref, at: s.at, lock, reason: 'activated' });
    return activated(h, expiresAt);
  });
}

/**
 * Completes the job with its output: its node completes (the output in its resultVariable).
 * Output that does not match the action's output schema is a failed attempt instead (retried
 * or failing the node, as a worker's failure): answered with the problem.
 */
export function completeJob(s: Step, req: JobCall & { readonly output: unknown }): RefusedOutput | null {
  const h = heldJob(s.state, req, s.now);
  const action = ownEntry(s.state.domains[h.inst.organization] ?? {}, h.wait.domain)?.actions[h.wait.action];
  const problem = action ? s.ctx.schemas.problem(action.output, req.output, 'the output') : null;
  if (problem === null) {
    s.resume(h.inst, h.node, { kind: 'job', result: { ok: true, output: req.output } });
    return null;
  }
  const result: JobResult = {
    ok: false,
    worker: req.worker,
    code: 'JOB_OUTPUT_INVALID',
    message: problem,
    retry: true,
  };
  s.resume(h.inst, h.node, { kind: 'job', result });
  return { problem, answer: afterFailure(s.state, req.key, h.ref) };
}

/** A failed attempt: retried after the backoff while attempts are left, else the node fails. */
export function failJob(s: Step, req: FailRequest): JobAnswer {
  const h = heldJob(s.state, req, s.now);
  const result: JobResult = {
    ok: false,
    worker: req.worker,
    code: req.errorCode ?? null,
    message: req.errorMessage ?? '',
    retry: req.retry !== false,
    ...(req.retryBackoffMs !== undefined && { backoffMs: req.retryBackoffMs }),
  };
  s.resume(h.inst, h.node, { kind: 'job', result });
  return afterFailure(s.state, req.key, h.ref);
}

/** Extends the worker's lock by `lockDurationMs` from now (default: its activation's). */
export function extendJobLock(s: Step, req: JobCall & { readonly lockDurationMs?: number }): JobAnswer {
  const h = heldJob(s.state, req, s.now);
  const lock = h.wait.lock!;
  const durationMs = req.lockDurationMs ?? lock.durationMs;
  const expiresAt = new Date(s.now.getTime() + durationMs).toISOString();
  s.emit({
    type: 'job.locked',
    ...h.ref,
    at: s.now.toISOString(),
    lock: { worker: lock.worker, activatedAt: lock.activatedAt, expiresAt, durationMs },
    reason: 'extended',
  });
  return { key: req.key, status: 'locked', lockedUntil: expiresAt };
}

/** Gives the job back unworked: available at once, no attempt counted. */
export function releaseJob(s: Step, req: JobCall): JobAnswer {
  const h = heldJob(s.state, req, s.now);
  s.touched.add(h.ref.instanceId);
  s.emit({ type: 'job.locked', ...h.ref, at: s.now.toISOString(), lock: null, reason: 'released' });
  return { key: req.key, status: 'released' };
}

/**
 * Up to `max` available jobs of the actions among the resident executions, the highest priority
 * first (JobQueues.queueOf), then oldest waiting first within each action: what the step takes
 * once `jobsToTake`'s trees are resident. Pure read.
 */
export function availableJobs(
  state: WfxState,
  organization: string,
  domain: string,
  actions: readonly string[],
  max: number,
  now: Date,
): Held[] {
  const queues = JobQueues.of(state);
  const at = now.toISOString();
  const picked: Held[] = [];
  for (const ref of queues.queueOf(organization, domain, actions).values()) {
    if (picked.length >= max) return picked;
    const h = waitingJob(state, ref);
    if (h && isAvailable(h.wait, at)) picked.push({ ...h, ref });
  }
  return picked;
}

/**
 * The executions of the jobs an activation of up to `max` would take at `now`, resident or cold
 * (judged by their summaries, no document read), in `availableJobs`' order: what
 * it must make resident before its step, at most `max` trees. A job whose execution is being
 * read back is named too (ensuring it waits for that read). Pure read.
 */
export function jobsToTake(
  state: WfxState,
  reads: JobReads,
  organization: string,
  domain: string,
  actions: readonly string[],
  max: number,
  now: Date,
): string[] {
  const queues = JobQueues.of(state);
  const at = now.getTime();
  const ids: string[] = [];
  for (const ref of queues.queueOf(organization, domain, actions).values()) {
    if (ids.length >= max) return ids;
    const times = jobTimes(reads, ref);
    const loading = times === null && reads.get(ref.instanceId) === undefined;
    if (loading || (times !== null && isFree(times, at))) ids.push(ref.instanceId);
  }
  return ids;
}

/** The job `req.key` names, held by `req.worker` now. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
function heldJob(state: WfxState, req: JobCall, now: Date): Held {
  const ref = jobTarget(req.key);
  const h = ref && waitingJob(state, ref);
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
function afterFailure(state: WfxState, key: string, ref: JobRef): JobAnswer {
  const next = waitingJob(state, ref);
  if (!next) return { key, status: 'failed', retriesLeft: 0 };
  return {
    key,
    status: 'retrying',
    retriesLeft: next.wait.maxAttempts - next.wait.attempt,
    notBefore: next.wait.notBefore,
  };
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
