/**
 * The jobs API's operations on the engine: activate (lock waiting jobs to a worker), complete,
 * fail, heartbeat and release, each one step (step/jobs.ts decides them, on the state as it
 * is in the step; its records are durable before the worker hears back), and the reads of the
 * jobs waiting (list, when the next becomes available).
 */
import type { ActivatedJob, JobAnswer, JobView } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { ownEntry } from '../../shared/json-object.js';
import type { Executions } from '../state/executions.js';
import { JobQueues, jobKey, jobTarget, jobTimes, waitingJob, type QueuedJob } from '../state/job-queues.js';
import type { FlowSecretValues } from '../secrets/flow-secret-values.js';
import { withNamesIn, withValuesIn } from './work/secret-refs.js';
import type { Environment, WfxState } from '../state/state.js';
import type { RunStep } from './step/index.js';
import { jobsToTake, type ActivateRequest, type FailRequest, type Held, type JobCall } from './step/jobs.js';

export type { ActivateRequest, FailRequest, JobCall } from './step/jobs.js';

/** What JobOperations needs from the engine. */
export interface JobOperationsOptions {
  readonly state: WfxState;
  /** The seam before the executions: cold ones are judged by their summaries, a page's read back. */
  readonly executions: Executions;
  readonly step: RunStep;
  readonly now: () => Date;
  /** Where the values of a job input's `{secret.NAME}` are read as a worker activates it. */
  readonly secretValues: FlowSecretValues;
}

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
    const now = this.options.now();
    const { executions } = this.options;
    if (jobsToTake(this.state, executions, req.organization, req.domain, actions, req.maxJobs, now).length === 0)
      return [];
    // The step's runner makes the trees of those jobs resident first (step/touched.ts).
    const jobs = await this.options.step({ kind: 'job.activate', req, actions });
    return jobs.some((j) => this.secretsOf(j.key) !== null) ? this.withSecrets(jobs, req.worker) : jobs;
  }

  /** The job's stand-ins (stand-in -> secret name) and where to open them, when its input names secrets. */
  private secretsOf(
    key: string,
  ): { organization: string; environment: Environment; byToken: Record<string, string> } | null {
    const ref = jobTarget(key);
    const held = ref && waitingJob(this.state, ref);
    const byToken = held?.wait.secrets;
    return byToken === undefined || !held
      ? null
      : { organization: held.inst.organization, environment: held.inst.environment, byToken };
  }

  /**
   * `jobs` with each input's stand-ins replaced by the secrets' values, opened now (never
   * kept). A job whose secret has no value, or cannot be opened, is failed at once, not retried
   * (SECRET_NOT_FOUND, SECRET_UNREADABLE), and left out.
   */
  private async withSecrets(jobs: readonly ActivatedJob[], worker: string): Promise<ActivatedJob[]> {
    const out: ActivatedJob[] = [];
    for (const job of jobs) {
      const refs = this.secretsOf(job.key);
      if (refs === null) {
        out.push(job);
        continue;
      }
      const opened = await this.options.secretValues.openRefs(refs.organization, refs.environment, refs.byToken);
      if (opened.ok) out.push({ ...job, input: withValuesIn(job.input, opened.values) as Record<string, unknown> });
      else
        await this.fail({
          organization: null,
          key: job.key,
          worker,
          errorCode: opened.code,
          errorMessage: opened.message,
          retry: false,
        });
    }
    return out;
  }

  /** `value` with the values of the job's secrets written `[secret NAME]` (a worker that echoes one). */
  private async scrubbed<T>(key: string, value: T): Promise<T> {
    const refs = this.secretsOf(key);
    if (refs === null) return value;
    const opened = await this.options.secretValues.openRefs(refs.organization, refs.environment, refs.byToken);
    return opened.ok ? (withNamesIn(value, opened.named) as T) : value;
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
        const job = jobTimes(this.options.executions, ref);
        if (job === null || (job.lockedUntil === null && job.notBefore === null)) continue;
        const at = Math.max(job.lockedUntil ?? -Infinity, job.notBefore ?? -Infinity);
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
    const output = await this.scrubbed(req.key, req.output);
    const refused = await this.options.step({ kind: 'job.complete', req: { ...req, output } });
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
  async fail(req: FailRequest): Promise<JobAnswer> {
    const errorMessage = req.errorMessage === undefined ? undefined : await this.scrubbed(req.key, req.errorMessage);
    return this.options.step({
      kind: 'job.fail',
      req: { ...req, ...(errorMessage !== undefined && { errorMessage }) },
    });
  }

  /** Extends the worker's lock by `lockDurationMs` from now (default: its activation's). Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  heartbeat(req: JobCall & { readonly lockDurationMs?: number }): Promise<JobAnswer> {
    return this.options.step({ kind: 'job.heartbeat', req });
  }

  /** Gives the job back unworked: available at once, no attempt counted. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  release(req: JobCall): Promise<JobAnswer> {
    return this.options.step({ kind: 'job.release', req });
  }

  /**
   * The waiting jobs (organization null: every one), oldest first, at most `limit`: chosen from
   * the index, then the page's executions made resident (no others) and rendered. A read.
   */
  async list(filter: {
    readonly organization: string | null;
    readonly domain?: string;
    readonly action?: string;
    readonly limit: number;
  }): Promise<{ items: JobView[]; more: boolean }> {
    const queues = JobQueues.of(this.state);
    const found: QueuedJob[] = [];
    for (const [org, domain] of queues.domains()) {
      if ((filter.organization !== null && org !== filter.organization) || (filter.domain ?? domain) !== domain)
        continue;
      for (const action of queues.actions(org, domain)) {
        if ((filter.action ?? action) !== action) continue;
        for (const ref of queues.queue(org, domain, action).values()) found.push(ref);
      }
    }
    found.sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
    const page = found.slice(0, filter.limit);
    await this.options.executions.ensure(page.map((ref) => ref.instanceId));
    const now = this.options.now().toISOString();
    const items: JobView[] = [];
    for (const ref of page) {
      const h = waitingJob(this.state, ref);
      if (h) items.push(viewOf({ ...h, ref }, now));
    }
    return { items, more: found.length > filter.limit };
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
