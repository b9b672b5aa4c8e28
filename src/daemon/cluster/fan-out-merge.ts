/**
 * How the answers of the daemons sharing a database to a list merge into the answer one daemon
 * would give (fan-out.ts asks them; decision 042).
 */
import type { FastifyRequest } from 'fastify';
import { BULK_SAMPLE_MAX } from '../../shared/api/index.js';
import type {
  BulkDryRun,
  DomainHealth,
  DomainHealthList,
  FailureGroup,
  FailureGroups,
  FailureSort,
  JobList,
  WorkerSeen,
} from '../../shared/api/index.js';

/** Merges this daemon's answer (`mine`) with the others' (`theirs`, in the order asked). */
export type Merge = (request: FastifyRequest, mine: unknown, theirs: readonly unknown[]) => unknown;

interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

/**
 * Pages of items in one order (`key` ascending, or descending), each the first `limit` past
 * the same cursor: their union holds the first `limit` of all, and there are more when the
 * union has more than `limit` or a page said so. An item in two pages (an execution archived
 * between two answers: in one's history and another's live state) is listed once.
 */
function mergePages<T>(pages: readonly Page<T>[], limit: number, key: (item: T) => string, descending: boolean) {
  const byKey = new Map<string, T>();
  for (const page of pages) for (const item of page.items) if (!byKey.has(key(item))) byKey.set(key(item), item);
  const sorted = [...byKey.keys()].sort();
  if (descending) sorted.reverse();
  const page = sorted.slice(0, limit);
  const more = sorted.length > limit || pages.some((p) => p.nextCursor !== null);
  return { items: page.map((k) => byKey.get(k)!), last: page.at(-1) ?? null, more };
}

const limitOf = (request: FastifyRequest): number => (request.query as { limit: number }).limit;

/** Executions (every one, or a flow's), newest first by id (time-ordered). The holder's copy of one goes first. */
const mergeInstances: Merge = (request, mine, theirs) => {
  const pages = [...(theirs as Page<{ processInstanceId: string }>[]), mine as Page<{ processInstanceId: string }>];
  const merged = mergePages(pages, limitOf(request), (i) => i.processInstanceId, true);
  return { items: merged.items, nextCursor: merged.more ? merged.last : null };
};

interface TaskItem {
  readonly waitingSince: string;
  readonly processInstanceId: string;
  readonly nodeInstanceId: string;
}
/** Waiting tasks, oldest waiting first (engine/tasks.ts's order and cursor). */
const mergeTasks: Merge = (request, mine, theirs) => {
  const key = (t: TaskItem) => `${t.waitingSince}|${t.processInstanceId}|${t.nodeInstanceId}`;
  const merged = mergePages([mine as Page<TaskItem>, ...(theirs as Page<TaskItem>[])], limitOf(request), key, false);
  return { items: merged.items, nextCursor: merged.more ? merged.last : null };
};

/** Waiting jobs, oldest first (a job's key is its execution's and node's: unique). */
const mergeJobs: Merge = (request, mine, theirs) => {
  const lists = [mine as JobList, ...(theirs as JobList[])];
  const items = lists.flatMap((l) => l.items);
  items.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.key < b.key ? -1 : 1));
  const limit = limitOf(request);
  return { items: items.slice(0, limit), more: items.length > limit || lists.some((l) => l.more) };
};

/**
 * Each domain's health over every daemon: its jobs are counted where they are held, and a worker
 * is seen by the daemon it calls, so counts add up and workers are joined (the latest sighting
 * of each). A domain is active when a daemon saw a worker lately.
 */
const mergeWorkers: Merge = (_request, mine, theirs) => {
  const domains = new Map<string, DomainHealth>();
  for (const list of [mine as DomainHealthList, ...(theirs as DomainHealthList[])])
    for (const d of list.items) {
      const key = `${d.organization}\u0000${d.domain}`;
      const seen = domains.get(key);
      domains.set(key, seen ? joinHealth(seen, d) : d);
    }
  return { items: [...domains.values()] };
};

function joinHealth(a: DomainHealth, b: DomainHealth): DomainHealth {
  const workers = new Map<string, WorkerSeen>();
  for (const w of [...a.workers, ...b.workers]) {
    const seen = workers.get(w.worker);
    workers.set(
      w.worker,
      seen ? { worker: w.worker, lastSeen: later(seen.lastSeen, w.lastSeen)!, polling: seen.polling || w.polling } : w,
    );
  }
  const waiting = a.waiting + b.waiting;
  const oldest = [a.oldestWaiting, b.oldestWaiting].filter((t): t is string => t !== null).sort()[0] ?? null;
  return {
    ...a,
    state: a.state === 'active' || b.state === 'active' ? 'active' : waiting > 0 ? 'stalled' : 'idle',
    waiting,
    locked: a.locked + b.locked,
    oldestWaiting: oldest,
    workers: [...workers.values()].sort((x, y) => (x.lastSeen < y.lastSeen ? 1 : -1)),
    lastSeen: later(a.lastSeen, b.lastSeen),
  };
}

const later = (a: string | null, b: string | null): string | null => (a === null ? b : b === null || a > b ? a : b);

/**
 * Failures grouped (routes/failures.ts): this daemon's answer holds history and its live
 * failures, every group; the others' their live ones. Counts add up by flow, code and node,
 * the newest execution of each group is the one that started last; then sorted and cut to
 * `limit` as one daemon would.
 */
const mergeFailures: Merge = (request, mine, theirs) => {
  const groups = new Map<string, FailureGroup>();
  let total = 0;
  for (const answer of [mine as FailureGroups, ...(theirs as FailureGroups[])]) {
    total += answer.total;
    for (const g of answer.groups) {
      const key = JSON.stringify([g.processId, g.errorCode, g.nodeId]);
      const seen = groups.get(key);
      if (!seen) groups.set(key, g);
      else {
        const newer = g.newest.processInstanceId > seen.newest.processInstanceId ? g : seen;
        groups.set(key, { ...newer, count: seen.count + g.count });
      }
    }
  }
  const { sort, limit } = request.query as { sort: FailureSort; limit: number };
  const newest = (a: FailureGroup, b: FailureGroup) =>
    a.newest.processInstanceId < b.newest.processInstanceId
      ? 1
      : a.newest.processInstanceId > b.newest.processInstanceId
        ? -1
        : 0;
  const sorted = [...groups.values()].sort(sort === 'count' ? (a, b) => b.count - a.count || newest(a, b) : newest);
  return { groups: sorted.slice(0, limit), total, groupCount: groups.size };
};

/**
 * A bulk operation's dry run: each daemon counted and sampled the partitions it serves, so the
 * counts add up and the samples merge, newest first.
 */
const mergeDryRun: Merge = (request, mine, theirs) => {
  const runs = [mine as BulkDryRun, ...(theirs as BulkDryRun[])];
  const sample = (request.body as { sample?: number }).sample ?? 10;
  const items = runs.flatMap((r) => r.sample);
  items.sort((a, b) => (a.processInstanceId < b.processInstanceId ? 1 : -1));
  const refused = runs.flatMap((r) => r.refused ?? []);
  return {
    ...runs[0]!,
    count: runs.reduce((n, r) => n + r.count, 0),
    sample: items.slice(0, sample),
    // The earliest: applied with it, no daemon selects an execution started after its preview.
    startedBefore: runs.map((r) => r.startedBefore).reduce((a, b) => (b < a ? b : a)),
    ...(runs[0]!.refusedCount !== undefined && {
      refused: refused.slice(0, BULK_SAMPLE_MAX),
      refusedCount: runs.reduce((n, r) => n + (r.refusedCount ?? 0), 0),
    }),
  };
};

/** The lists asked of every daemon, by method and route, and how their answers merge. */
export const GATHERED = new Map<string, Merge>([
  ['GET /process/instances', mergeInstances],
  ['GET /process/:id/instances', mergeInstances],
  ['GET /process/tasks', mergeTasks],
  ['GET /process/failures', mergeFailures],
  ['GET /jobs', mergeJobs],
  ['GET /jobs/workers', mergeWorkers],
  ['POST /process/bulk', mergeDryRun],
]);

/** Routes of GATHERED asked of every daemon only for some requests: a bulk operation's dry run (its creation is the daemon asked's). */
export const GATHERED_WHEN = new Map<string, (request: FastifyRequest) => boolean>([
  ['POST /process/bulk', (request) => (request.body as { dryRun?: boolean } | null)?.dryRun === true],
]);
