/**
 * domainTask jobs in the state: the job key (the wire's name of a waiting node's job), the
 * derived index of waiting jobs by organization, domain and action (what an activation reads),
 * and the reducer's part of the `job.locked` record. A job is its node's wait (`JobWait`): the
 * index only points at such nodes, so it is rebuilt from them after a start, never journaled.
 */
import { STATUS, type JobLock, type JobWait } from '../../shared/api/index.js';
import { execution } from './executions.js';
import type { ExecutionSummary } from './execution-summary.js';
import type { Execution, NodeInstance } from './execution-document.js';
import { ExecutionTable } from './execution-table.js';
import { ownIndex, StateIndex } from './state-index.js';
import { commitCow, CowMap } from './draft/cow-map.js';

/**
 * What the job index belongs to: the state's executions and the index kept beside them
 * (JobQueuesHolder.jobQueues). Named here so that this module needs nothing of state.ts: the state's
 * shape imports the index, not the other way round.
 */
export interface JobQueuesHolder {
  instances: Record<string, Execution | undefined>;
  instanceTable?: ExecutionTable<Execution> | undefined;
  jobQueues?: JobQueues | undefined;
}

declare const jobKeyBrand: unique symbol;

/**
 * A job's key: `<execution id>.<node instance id>`, made and read back only here. Execution ids
 * are UUIDs and node instance ids `n1`, `n2`, ..., neither holding a `.`, so the parts are read
 * back exactly; a key of a node that waits for no job names no job (JOB_NOT_FOUND).
 */
export type JobKey = string & { readonly [jobKeyBrand]: true };

/** Where a job's node is. */
export interface JobRef {
  readonly instanceId: string;
  readonly nodeInstanceId: string;
}

/** A job in the index: where its node is, and when the node began waiting (the job's `createdAt`, the list's order). */
export interface QueuedJob extends JobRef {
  readonly since: string;
}

/** The key of the job node instance `nodeInstanceId` of execution `instanceId` waits with. Pure. */
export function jobKey(instanceId: string, nodeInstanceId: string): JobKey {
  return `${instanceId}.${nodeInstanceId}` as JobKey;
}

const KEY = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(n[1-9][0-9]{0,8})$/;

/** What a key from outside names, or null when it cannot be a job key. Pure. */
export function jobTarget(key: string): JobRef | null {
  const m = KEY.exec(key);
  return m ? { instanceId: m[1]!, nodeInstanceId: m[2]! } : null;
}

/** The job node instance `ref` names, when that node waits for a job now; else null. */
export function waitingJob(
  state: JobQueuesHolder,
  ref: JobRef,
): { readonly inst: Execution; readonly node: NodeInstance; readonly wait: JobWait } | null {
  const inst = execution(state, ref.instanceId);
  const node = inst?.nodes[ref.nodeInstanceId];
  if (!inst || !node || node.statusCd !== STATUS.WAITING || node.wait?.kind !== 'job') return null;
  return { inst, node, wait: node.wait };
}

/**
 * The waiting jobs, by organization, domain and action, each action's by its executions'
 * priority (highest first), then in the order they became waiting or were last locked (so a scan
 * for available jobs meets the locked ones last). Kept by the reducer from node waits; derived
 * (DERIVED in state.ts), so a start builds it again from the live executions in its recovery
 * walk (or on first use, where no walk made it).
 *
 * Invariant: a key is here exactly while its node waits with a job wait (added by
 * `node.waiting`, moved by `job.locked`, removed when the node leaves the wait); the reducer
 * keeps up only an index that exists, and `of()` makes a new one from the state whenever the
 * state's own is missing (a snapshot loaded and no recovery walk since).
 */
export class JobQueues extends StateIndex<JobQueuesHolder> {
  /**
   * Each action's jobs, by priority: a key to when its node began waiting. Only that: a million
   * jobs of executions not in memory cost a key and a time each, and a queued job's parts are
   * read back from its key when a reader walks the queue (`queue`).
   */
  private byOrg = new Map<string, Map<string, Map<string, Map<number, Map<JobKey, string>>>>>();

  /**
   * This index for a step's draft (state/draft/): it reads it, and its changes stay in the fork
   * (copy-on-write maps, nested) until `commitFork` hands them over.
   */
  fork(holder: JobQueuesHolder): JobQueues {
    const f = new JobQueues(holder);
    f.byOrg = new CowMap(this.byOrg, 'nested');
    return f;
  }

  /** Writes the changes of `f` (this one's fork) into this index. */
  commitFork(f: JobQueues): void {
    commitCow(f.byOrg as CowMap<string, Map<string, Map<string, Map<number, Map<JobKey, string>>>>>);
  }

  /** The index of `state`: its own, or a new one built from its live executions. */
  static of(state: JobQueuesHolder): JobQueues {
    const held = ownIndex(state.jobQueues, state);
    if (held !== null) return held;
    const made = JobQueues.building(state);
    for (const inst of ExecutionTable.of(state).live())
      for (const id in inst.nodes) {
        const node = inst.nodes[id]!;
        if (node.statusCd === STATUS.WAITING && node.wait?.kind === 'job') made.put(inst, node, node.wait);
      }
    return made;
  }

  /** The index of `state` if it is made, else null (the reducer keeps up only an index that exists). */
  static held(state: JobQueuesHolder): JobQueues | null {
    return ownIndex(state.jobQueues, state);
  }

  /**
   * A new, empty index made the state's own, for a walk over every live execution to `put`
   * each waiting job in, in the executions' and their nodes' order (engine/recovery.ts).
   */
  static building(state: JobQueuesHolder): JobQueues {
    return (state.jobQueues = new JobQueues(state));
  }

  /** Puts the job of `node` last in its action's queue of its execution's priority (added, or moved there). */
  put(inst: Execution, node: NodeInstance, wait: JobWait): void {
    const { organization, processInstanceId: id, priority = 0 } = inst;
    this.putAt(organization, wait.domain, wait.action, id, node.id, node.startTime, priority);
  }

  /**
   * Puts the job of node `nodeInstanceId` of execution `instanceId`, waiting since `since`, last
   * in its action's queue of `priority` (a cold execution's, from its summary).
   */
  putAt(
    organization: string,
    domain: string,
    action: string,
    instanceId: string,
    nodeInstanceId: string,
    since: string,
    priority = 0,
  ): void {
    let domains = this.byOrg.get(organization);
    if (!domains) this.byOrg.set(organization, (domains = new Map()));
    let actions = domains.get(domain);
    if (!actions) domains.set(domain, (actions = new Map()));
    let levels = actions.get(action);
    if (!levels) actions.set(action, (levels = new Map()));
    let queue = levels.get(priority);
    if (!queue) levels.set(priority, (queue = new Map()));
    const key = jobKey(instanceId, nodeInstanceId);
    queue.delete(key);
    queue.set(key, since);
  }

  /** Forgets the job of `node` (it stopped waiting for it), whatever priority it was queued at. */
  remove(inst: Execution, node: NodeInstance, wait: JobWait): void {
    const domains = this.byOrg.get(inst.organization);
    const actions = domains?.get(wait.domain);
    const levels = actions?.get(wait.action);
    if (!levels) return;
    const key = jobKey(inst.processInstanceId, node.id);
    for (const [priority, queue] of levels) {
      if (!queue.delete(key)) continue;
      if (queue.size === 0) levels.delete(priority);
      break;
    }
    if (levels.size > 0) return;
    actions!.delete(wait.action);
    if (actions!.size > 0) return;
    domains!.delete(wait.domain);
    if (domains!.size === 0) this.byOrg.delete(inst.organization);
  }

  /** The jobs of one action, in queue order (a live view: do not change the index while reading it). */
  queue(organization: string, domain: string, action: string): JobQueue {
    return this.queueOf(organization, domain, [action]);
  }

  /**
   * The jobs of `actions` of one domain, in the order an activation takes them: highest priority
   * first, then action by action in queue order (a live view, as `queue`'s).
   */
  queueOf(organization: string, domain: string, actions: readonly string[]): JobQueue {
    const byAction = this.byOrg.get(organization)?.get(domain);
    const levels: Array<readonly [number, ReadonlyMap<JobKey, string>]> = [];
    for (const action of actions) for (const level of byAction?.get(action) ?? EMPTY) levels.push(level);
    // Stable: within a priority the actions keep the caller's order.
    if (levels.length > 1) levels.sort((x, y) => y[0] - x[0]);
    return new JobQueue(levels.map((l) => l[1]));
  }

  /** The actions of `domain` that have jobs. */
  actions(organization: string, domain: string): string[] {
    return [...(this.byOrg.get(organization)?.get(domain)?.keys() ?? [])];
  }

  /** Every organization and domain with jobs, as [organization, domain] pairs. */
  domains(): Array<readonly [string, string]> {
    const out: Array<readonly [string, string]> = [];
    for (const [org, domains] of this.byOrg) for (const d of domains.keys()) out.push([org, d]);
    return out;
  }

  /** How many jobs wait (or are locked to a worker), in every organization and domain. */
  get size(): number {
    let n = 0;
    for (const [org, domains] of this.byOrg) for (const domain of domains.keys()) n += this.count(org, domain);
    return n;
  }

  /** How many jobs wait in `domain` (all of its actions). */
  count(organization: string, domain: string): number {
    let n = 0;
    for (const levels of this.byOrg.get(organization)?.get(domain)?.values() ?? [])
      for (const q of levels.values()) n += q.size;
    return n;
  }
}

const EMPTY: ReadonlyMap<number, ReadonlyMap<JobKey, string>> = new Map();

/** One action's queue, or several actions' (JobQueues.queueOf), as its readers walk it. */
export class JobQueue {
  /** `levels`: the queues of each priority, highest first. */
  constructor(private readonly levels: ReadonlyArray<ReadonlyMap<JobKey, string>>) {}

  /** How many jobs wait (or are locked to a worker). */
  get size(): number {
    let n = 0;
    for (const jobs of this.levels) n += jobs.size;
    return n;
  }

  /** The jobs' keys, in queue order. */
  *keys(): IterableIterator<JobKey> {
    for (const jobs of this.levels) yield* jobs.keys();
  }

  /** The jobs in queue order, each made as it is reached. */
  *values(): IterableIterator<QueuedJob> {
    for (const jobs of this.levels)
      for (const [key, since] of jobs) {
        // A key is `<execution id>.<node instance id>`, neither part holding a `.` (jobKey).
        const dot = key.indexOf('.');
        yield { instanceId: key.slice(0, dot), nodeInstanceId: key.slice(dot + 1), since };
      }
  }
}

/**
 * What the reads of queued jobs need of the executions (state/executions.ts, `Executions`):
 * the resident ones, and what is kept of the cold ones.
 */
export interface JobReads {
  get(id: string): Execution | undefined;
  coldSummary(id: string): ExecutionSummary | undefined;
}

/** The reads of `state` where every execution is resident (no cold side). */
export function residentReads(state: JobQueuesHolder): JobReads {
  return { get: (id) => execution(state, id), coldSummary: () => undefined };
}

/** A queued job's lock and backoff, in ms (null: none), and where it belongs. */
export interface JobTimes {
  readonly organization: string;
  readonly domain: string;
  readonly lockedUntil: number | null;
  readonly notBefore: number | null;
}

/**
 * The lock and backoff of the job `ref` names, from its resident node or, cold, from its
 * execution's summary (no document read). Null: neither says it waits with a job (an execution
 * being read back, or a node done).
 */
export function jobTimes(reads: JobReads, ref: JobRef): JobTimes | null {
  const inst = reads.get(ref.instanceId);
  if (inst !== undefined) {
    const node = inst.nodes[ref.nodeInstanceId];
    const wait = node?.statusCd === STATUS.WAITING ? node.wait : null;
    if (wait?.kind !== 'job') return null;
    return {
      organization: inst.organization,
      domain: wait.domain,
      lockedUntil: wait.lock === null ? null : Date.parse(wait.lock.expiresAt),
      notBefore: wait.notBefore === null ? null : Date.parse(wait.notBefore),
    };
  }
  const summary = reads.coldSummary(ref.instanceId);
  const wait = summary?.waits.find((w) => w.node === ref.nodeInstanceId);
  if (summary === undefined || wait?.kind !== 'job') return null;
  return {
    organization: summary.organization,
    domain: wait.domain,
    lockedUntil: wait.lockedUntil,
    notBefore: wait.notBefore,
  };
}

/** Whether a job with `times` may be activated at `now` (ms): no lock or a lapsed one, and no backoff left. Pure. */
export function isFree(times: JobTimes, now: number): boolean {
  return (
    (times.lockedUntil === null || times.lockedUntil <= now) && (times.notBefore === null || times.notBefore <= now)
  );
}

/** Keeps the index as a node starts waiting with `wait` (a job, or anything else after one). */
export function indexJobWait(
  state: JobQueuesHolder,
  inst: Execution,
  node: NodeInstance,
  before: NodeInstance['wait'],
): void {
  const queues = JobQueues.held(state);
  if (queues === null) return; // made from the waits when first read
  if (before?.kind === 'job' && node.wait?.kind !== 'job') queues.remove(inst, node, before);
  if (node.wait?.kind === 'job') queues.put(inst, node, node.wait);
}

/** Drops a node's job from the index as it stops waiting (completed, left, back to work). */
export function unindexJob(state: JobQueuesHolder, inst: Execution, node: NodeInstance): void {
  if (node.wait?.kind === 'job') JobQueues.held(state)?.remove(inst, node, node.wait);
}

/** Why a `job.locked` record was written: it says what its log line says. */
export type JobLockReason = 'activated' | 'extended' | 'released';

/**
 * Applies a `job.locked` record to its node: the lock set (an activation counted) or cleared.
 * Returns the log line it stands for, or null (a heartbeat writes none: a long job would fill
 * its execution's log with them).
 */
export function applyJobLock(
  state: JobQueuesHolder,
  inst: Execution,
  node: NodeInstance,
  lock: JobLock | null,
  reason: JobLockReason,
): string | null {
  const wait = node.wait;
  if (wait?.kind !== 'job' || node.statusCd !== STATUS.WAITING) return null;
  const lapsed = reason === 'activated' && wait.lock !== null ? ` (the lock of ${wait.lock.worker} lapsed)` : '';
  const activations = reason === 'activated' ? wait.activations + 1 : wait.activations;
  node.wait = {
    kind: 'job',
    dueAt: wait.dueAt,
    domain: wait.domain,
    action: wait.action,
    input: wait.input,
    ...(wait.secrets !== undefined && { secrets: wait.secrets }),
    attempt: wait.attempt,
    maxAttempts: wait.maxAttempts,
    activations,
    notBefore: wait.notBefore,
    lock,
    lastError: wait.lastError,
  };
  if (reason === 'activated') JobQueues.held(state)?.put(inst, node, node.wait);
  switch (reason) {
    case 'activated':
      return `job activated by worker ${lock?.worker} until ${lock?.expiresAt}${lapsed} (attempt ${wait.attempt} of ${wait.maxAttempts})`;
    case 'released':
      return `job released by worker ${wait.lock?.worker ?? '?'}: waiting for a worker`;
    case 'extended':
      return null;
  }
}

/** The log line of a node that starts waiting with a job. */
export function jobWaitingLine(wait: JobWait): string {
  const attempt = wait.attempt > 1 ? ` (attempt ${wait.attempt} of ${wait.maxAttempts})` : '';
  const after = wait.notBefore === null ? '' : ` from ${wait.notBefore}`;
  return `waiting for a worker of ${wait.domain}/${wait.action}${after}${attempt}`;
}
