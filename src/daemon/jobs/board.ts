/**
 * The jobs API's side in the daemon beyond the engine: long polls of POST /jobs/activate that
 * wait for jobs, and the workers seen lately (worker health). Nothing here is state: a poll
 * that waits holds no job, and what workers were seen is kept in memory only (a restart
 * forgets them until they call again).
 */
import type { ActivatedJob, DomainHealth, WorkerSeen } from '../../shared/api/index.js';
import type { ActivateRequest } from '../engine/jobs.js';
import type { Engine, JobsWaiting } from '../engine/engine.js';
import { JobQueues, jobTarget, jobTimes } from '../state/job-queues.js';
import type { WfxState } from '../state/state.js';

/** A worker not seen for this long no longer makes its domain `active`. */
export const WORKER_STALE_MS = 60_000;
/** Workers not seen for this long are forgotten. */
const WORKER_FORGET_MS = 24 * 60 * 60 * 1000;

/** A long poll waiting for jobs of some actions of a domain. */
interface Waiter {
  readonly organization: string;
  readonly domain: string;
  /** null: every action. */
  readonly actions: ReadonlySet<string> | null;
  /** Set by a wake-up that came while the poll was not waiting (it then tries again at once). */
  woken: boolean;
  /** Ends the current wait. */
  resolve: (() => void) | null;
}

/** What the daemon knows of one worker of a domain. */
interface Seen {
  lastSeen: number;
  /** Long polls of it open now. */
  polling: number;
}

/** Long polls and worker health, over the engine's jobs operations (see the top of this file). */
export class JobBoard {
  private readonly waiters = new Set<Waiter>();
  /** organization -> domain -> worker -> when seen. */
  private readonly seen = new Map<string, Map<string, Map<string, Seen>>>();
  private closed = false;
  private readonly onJobs = (e: JobsWaiting): void => {
    for (const w of this.waiters)
      if (
        w.organization === e.organization &&
        w.domain === e.domain &&
        (w.actions === null || w.actions.has(e.action))
      ) {
        w.woken = true;
        w.resolve?.();
      }
  };

  constructor(
    /** Its executions are read through the seam: cold jobs by their summaries, never read back here. */
    private readonly engine: Pick<Engine, 'jobs' | 'executions' | 'on' | 'off'>,
    private readonly state: WfxState,
    /** Wall-clock time (ms) for poll deadlines and last-seen times. */
    private readonly clock: () => number = Date.now,
    /** The engine's clock (ms), that lock expiries are read by. */
    private readonly engineNow: () => number = Date.now,
  ) {
    engine.on('jobs', this.onJobs);
  }

  /**
   * Activates jobs for `req`, waiting up to `requestTimeoutMs` for some when none is available:
   * it answers as soon as a step leaves a job waiting (a new job, a retry, a release: the
   * engine's `jobs` event) or a lock or backoff it knows of runs out, never by polling the
   * state. `gone()` says the caller went away: the wait ends, as it does at once when `signal`
   * aborts (gone() must say so then too). Throws as JobOperations.activate.
   */
  async activate(
    req: ActivateRequest,
    requestTimeoutMs: number,
    gone: () => boolean,
    signal?: AbortSignal,
  ): Promise<ActivatedJob[]> {
    const deadline = this.clock() + requestTimeoutMs;
    const waiter: Waiter = {
      organization: req.organization,
      domain: req.domain,
      actions: req.actions ? new Set(req.actions) : null,
      woken: false,
      resolve: null,
    };
    const seen = this.workerSeen(req.organization, req.domain, req.worker);
    // Registered before the first try: a wake-up between a try and the wait is not lost.
    this.waiters.add(waiter);
    seen.polling++;
    let timer: NodeJS.Timeout | undefined;
    const abort = () => waiter.resolve?.();
    signal?.addEventListener('abort', abort);
    try {
      for (;;) {
        waiter.woken = false;
        if (gone()) return [];
        const jobs = await this.engine.jobs.activate(req);
        seen.lastSeen = this.clock();
        const left = deadline - this.clock();
        if (jobs.length > 0 || this.closed || left <= 0 || gone()) return jobs;
        if (waiter.woken) continue;
        const next = this.engine.jobs.nextAvailableAt(req.organization, req.domain, req.actions);
        const wait = next === null ? left : Math.min(left, Math.max(0, next - this.engineNow()) + 1);
        await new Promise<void>((resolve) => {
          waiter.resolve = resolve;
          timer = setTimeout(resolve, wait);
        });
        clearTimeout(timer);
        waiter.resolve = null;
      }
    } finally {
      signal?.removeEventListener('abort', abort);
      clearTimeout(timer);
      this.waiters.delete(waiter);
      seen.polling--;
      seen.lastSeen = this.clock();
    }
  }

  /** Notes that `worker` called about job `key` (complete, fail, heartbeat, release). */
  touched(key: string, worker: string): void {
    const ref = jobTarget(key);
    const job = ref && jobTimes(this.engine.executions, ref);
    if (job) this.workerSeen(job.organization, job.domain, worker).lastSeen = this.clock();
  }

  /**
   * Every registered domain, and any other with jobs, of `organization` (null: every one), by
   * organization then name: its jobs waiting and locked, its workers seen, and a state that
   * says when jobs wait with no worker seen lately (`stalled`).
   */
  health(organization: string | null): DomainHealth[] {
    const now = this.clock();
    const at = this.engineNow();
    const keys = new Map<string, readonly [string, string]>();
    const add = (org: string, domain: string) => keys.set(`${org}\u0000${domain}`, [org, domain]);
    for (const [org, domains] of Object.entries(this.state.domains)) for (const d of Object.keys(domains)) add(org, d);
    const queues = JobQueues.of(this.state);
    for (const [org, d] of queues.domains()) add(org, d);
    const out: DomainHealth[] = [];
    for (const [org, domain] of keys.values()) {
      if (organization !== null && org !== organization) continue;
      let waiting = 0;
      let locked = 0;
      let oldest: string | null = null;
      for (const action of queues.actions(org, domain))
        for (const ref of queues.queue(org, domain, action).values()) {
          const job = jobTimes(this.engine.executions, ref);
          if (!job) continue;
          if (job.lockedUntil !== null && job.lockedUntil > at) locked++;
          else {
            waiting++;
            if (oldest === null || ref.since < oldest) oldest = ref.since;
          }
        }
      const workers: WorkerSeen[] = [];
      for (const [worker, s] of this.seen.get(org)?.get(domain) ?? []) {
        if (now - s.lastSeen > WORKER_FORGET_MS && s.polling === 0) continue;
        workers.push({ worker, lastSeen: new Date(s.lastSeen).toISOString(), polling: s.polling > 0 });
      }
      workers.sort((a, b) => (a.lastSeen < b.lastSeen ? 1 : -1));
      const lastSeen = workers[0]?.lastSeen ?? null;
      const alive = workers.some((w) => w.polling || now - Date.parse(w.lastSeen) <= WORKER_STALE_MS);
      out.push({
        organization: org,
        domain,
        state: alive ? 'active' : waiting > 0 ? 'stalled' : 'idle',
        waiting,
        locked,
        oldestWaiting: oldest,
        workers,
        lastSeen,
      });
    }
    return out.sort((a, b) => a.organization.localeCompare(b.organization) || a.domain.localeCompare(b.domain));
  }

  /** Ends every long poll (each answers what it has: nothing) and takes no more waits: the daemon stops. */
  close(): void {
    this.closed = true;
    this.engine.off('jobs', this.onJobs);
    for (const w of this.waiters) w.resolve?.();
  }

  private workerSeen(organization: string, domain: string, worker: string): Seen {
    let domains = this.seen.get(organization);
    if (!domains) this.seen.set(organization, (domains = new Map()));
    let workers = domains.get(domain);
    if (!workers) domains.set(domain, (workers = new Map()));
    let s = workers.get(worker);
    if (!s) workers.set(worker, (s = { lastSeen: this.clock(), polling: 0 }));
    return s;
  }
}
