/**
 * Lists of executions, newest first, a page at a time: the live ones and those in history,
 * filtered by the live state's own fields, a cold execution's summary (state/executions.ts) or,
 * in history, by the tags each was archived with (execution-tags.ts), reading a document only
 * where these cannot say, and a cold execution's for the page that shows it.
 */
import { stateName, waitingFor, type InstanceSummary, type WaitingFor } from '../../shared/api/index.js';
import type { ExecutionSummary } from '../state/execution-summary.js';
import { STATE, STATUS, type Execution } from '../state/state.js';
import type { HistoryStore } from '../store/history-store.js';
import { ExecutionFilter, msIdPrefix, type ExecutionQuery } from './execution-filter.js';
import { failureCode } from './execution-tags.js';

/** Where executions are, for a list. */
export interface ExecutionSources {
  /** The live executions that are resident. */
  readonly live: () => Iterable<Execution>;
  /** The resident live execution `id`, whatever its state (one retried since history kept it failed). */
  readonly liveOne: (id: string) => Execution | undefined;
  /**
   * The ids of the live executions that are cold (Executions.coldIds), in no set order; with
   * `where`, at least those that have every search attribute of it (an index may leave out the rest).
   */
  readonly coldIds: (where?: ReadonlyArray<readonly [string, string]>) => Iterable<string>;
  /** What is kept of cold execution `id` (Executions.coldSummary); undefined: it is not cold. */
  readonly coldSummary: (id: string) => ExecutionSummary | undefined;
  /** Makes the trees of executions `ids` resident (Executions.ensure): null when they are. */
  readonly ensure: (ids: readonly string[]) => Promise<void> | null;
  readonly history: HistoryStore;
  /** An execution from history, or null. */
  readonly archived: (id: string) => Promise<Execution | null>;
  /** The organization a flow belongs to, if it is known. */
  readonly flowOrganization: (processId: string) => string | undefined;
  /** How many queued starts come before `inst` for its flow's concurrency slot, or null when it is not queued (absent: none is). */
  readonly queuedAhead?: (inst: Execution) => number | null;
}

/** A page of executions: `nextCursor` is the last id of the page when more follow, else null. */
export interface ExecutionPage {
  readonly items: InstanceSummary[];
  readonly nextCursor: string | null;
}

/** Ids a history listing reads at a time, at first and at most (a page stops the reading early). */
const FIRST_READ = 64;
const MOST_READ = 4096;

/** Cold executions read back at a time where their summaries cannot say (a failure's code or node). */
export const COLD_BATCH = 64;

/**
 * The executions `query` asks for, newest first (ids are UUIDv7: time-ordered), the page of
 * `query.limit` after `query.cursor`. Keyset pagination: a page starts below the last id of the
 * one before, so executions that start or finish meanwhile neither repeat nor skip one. The
 * work is bounded by the page, not by history: live executions are filtered in memory; history
 * is read bucket by bucket, newest first, a bucket wholly outside the id bounds (cursor, start
 * times) is never read, and reading stops once the page, and one more, is certain. Cold live
 * executions are filtered on their summaries and only the page's are read back to be shown.
 */
export async function listExecutions(src: ExecutionSources, query: ExecutionQuery): Promise<ExecutionPage> {
  // One more than the page says whether another page follows.
  const found = await findExecutions(src, query, query.limit + 1);
  const ids = [...found.keys()].sort().reverse();
  const page = ids.slice(0, query.limit);
  const reading = src.ensure(page.filter((id) => found.get(id) === null && src.coldSummary(id) !== undefined));
  if (reading !== null) await reading;
  const items: InstanceSummary[] = [];
  for (const id of page) {
    const inst = found.get(id) ?? (await liveNow(src, id)) ?? (await src.archived(id));
    if (inst) items.push(summarize(inst, src.queuedAhead));
  }
  return { items, nextCursor: ids.length > query.limit ? page.at(-1)! : null };
}

/**
 * The ids of the first `max` executions `query` asks for (its `limit` aside), newest first: what
 * a bulk operation selects. Read as a list is, but no document is read for an id its tags settle.
 */
export async function executionIds(
  src: ExecutionSources,
  query: Omit<ExecutionQuery, 'limit'>,
  max: number,
  /** Only ids this keeps (a daemon's own partitions). */
  keep?: (id: string) => boolean,
): Promise<string[]> {
  const found = await findExecutions(src, { ...query, limit: max }, max, keep);
  return [...found.keys()].sort().reverse().slice(0, max);
}

/**
 * Live execution `id` made resident if it is cold (its tree read back), else undefined. Tried a
 * few times: a bounded cache may let it go again before the read comes back.
 */
export async function liveNow(src: ExecutionSources, id: string): Promise<Execution | undefined> {
  for (let tries = 0; tries < 3; tries++) {
    const inst = src.liveOne(id);
    if (inst !== undefined) return inst;
    const reading = src.ensure([id]);
    if (reading === null) return undefined;
    await reading;
  }
  return src.liveOne(id);
}

/**
 * The executions `query` asks for, at least `want` of them where there are (more may come):
 * resident live ones with their object, cold ones and those of history with theirs where it was
 * read, else null.
 */
async function findExecutions(
  src: ExecutionSources,
  query: ExecutionQuery,
  want: number,
  keep: (id: string) => boolean = () => true,
): Promise<Map<string, Execution | null>> {
  const filter = new ExecutionFilter(query, src.flowOrganization);
  const narrowing = filter.narrowing();
  const pairs = filter.pairs();
  const found = new Map<string, Execution | null>(); // null: cold or in history, read for its page
  const live: string[] = [];
  for (const inst of src.live())
    if (filter.matches(inst) && keep(inst.processInstanceId)) {
      found.set(inst.processInstanceId, inst);
      live.push(inst.processInstanceId);
    }
  const unsure: string[] = [];
  for (const id of src.coldIds(query.search)) {
    const summary = src.coldSummary(id);
    if (summary === undefined || found.has(id) || !keep(id)) continue;
    const verdict = filter.summary(summary);
    if (verdict === 'maybe') unsure.push(id);
    else if (verdict === 'yes') {
      found.set(id, null);
      live.push(id);
    }
  }
  live.sort().reverse();
  if (unsure.length > 0) {
    for (const [id, inst] of await settleCold(src, filter, unsure, live, want)) {
      found.set(id, inst);
      live.push(id);
    }
    live.sort().reverse();
  }
  let liveAbove = 0;
  let archived = 0;
  /** Whether `want` executions found are at or above `id`: nothing below it can make the page. */
  const certain = (id: string): boolean => {
    while (liveAbove < live.length && live[liveAbove]! >= id) liveAbove++;
    return archived + liveAbove >= want;
  };
  let bucketsRead = 0;
  scan: for (const bucket of await src.history.buckets()) {
    const start = msIdPrefix(Date.parse(`${bucket}T00:00:00Z`));
    const end = msIdPrefix(Date.parse(`${bucket}T00:00:00Z`) + DAY_MS);
    if (filter.upper !== null && start >= filter.upper) continue; // newer than the page
    if ((filter.lower !== null && end <= filter.lower) || certain(end)) break;
    let below = filter.upper ?? undefined;
    // Past its first bucket a list is a search: what history keeps of the buckets read before stays.
    const passing = bucketsRead++ > 0;
    for (let read = FIRST_READ; ; read = Math.min(MOST_READ, read * 4)) {
      const ids = await src.history.list(bucket, {
        ...(below !== undefined && { below }),
        limit: read,
        passing,
        tags: narrowing,
        ...(pairs !== undefined && { pairs }),
      });
      for (const { id, tags } of ids) {
        if ((filter.lower !== null && id < filter.lower) || certain(id)) break scan;
        // Live still (found there if it matches): history's copy is older, as a retried one's is; or not wanted.
        if (found.has(id) || isLive(src, id) || !keep(id)) continue;
        const verdict = filter.tags(tags, id);
        if (verdict === 'no') continue;
        if (verdict === 'maybe') {
          const inst = await src.archived(id);
          if (!inst || !filter.matches(inst)) continue;
          found.set(id, inst);
        } else found.set(id, null);
        archived++;
      }
      if (ids.length < read) break;
      below = ids.at(-1)!.id;
    }
  }
  return found;
}

const DAY_MS = 86_400_000;

/** Whether execution `id` is live, resident or cold (history's copy of it is older). */
export function isLive(src: ExecutionSources, id: string): boolean {
  return src.liveOne(id) !== undefined || src.coldSummary(id) !== undefined;
}

/**
 * The cold executions of `unsure` (their summaries could not say) that answer `filter`, read
 * back COLD_BATCH at a time, newest first, and only while they could make the first `want`
 * with the matching live ids `live` (sorted newest first).
 */
async function settleCold(
  src: ExecutionSources,
  filter: ExecutionFilter,
  unsure: string[],
  live: readonly string[],
  want: number,
): Promise<Map<string, Execution>> {
  unsure.sort().reverse();
  const matched = new Map<string, Execution>();
  let liveAbove = 0;
  for (let from = 0; from < unsure.length; from += COLD_BATCH) {
    while (liveAbove < live.length && live[liveAbove]! >= unsure[from]!) liveAbove++;
    if (liveAbove + matched.size >= want) break;
    const batch = unsure.slice(from, from + COLD_BATCH);
    const reading = src.ensure(batch);
    if (reading !== null) await reading;
    for (const id of batch) {
      const inst = src.liveOne(id);
      if (inst !== undefined && filter.matches(inst)) matched.set(id, inst);
    }
  }
  return matched;
}

/**
 * An execution as lists show it. Its children are those its nodes started (each node lists its
 * own); a start queued by its flow's concurrency limit says its place (`queuedAhead` counts those before it).
 */
export function summarize(i: Execution, queuedAhead?: (inst: Execution) => number | null): InstanceSummary {
  const waitingNodeIds: string[] = [];
  let waits: Array<{ nodeId: string; nodeName: string; for: WaitingFor }> | undefined;
  let childCount = 0;
  for (const id in i.nodes) {
    const node = i.nodes[id]!;
    if (i.stateCd === STATE.RUNNING && node.statusCd === STATUS.WAITING) {
      waitingNodeIds.push(node.nodeId);
      if (node.wait !== null)
        (waits ??= []).push({ nodeId: node.nodeId, nodeName: node.nodeName, for: waitingFor(node.wait.kind) });
    }
    childCount += node.children?.length ?? 0;
  }
  const summary: InstanceSummary = {
    processInstanceId: i.processInstanceId,
    processId: i.processId,
    processName: i.processName,
    processVersion: i.processVersion,
    environment: i.environment,
    stateCd: i.stateCd,
    state: stateName(i.stateCd),
    errorCode: failureCode(i),
    startTime: i.startTime,
    endTime: i.endTime,
    correlationKey: i.correlationKey,
    parentInstanceId: i.parentInstanceId,
    childCount,
    waitingNodeIds,
  };
  if (waits !== undefined) (summary as { waits?: typeof waits }).waits = waits;
  if (i.search !== undefined) (summary as { search?: typeof i.search }).search = i.search;
  const ahead = i.concurrency === undefined || queuedAhead === undefined ? null : queuedAhead(i);
  if (ahead !== null) (summary as { queuePosition?: number }).queuePosition = ahead + 1;
  return summary;
}
