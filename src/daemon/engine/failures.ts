/**
 * Failures at a glance (GET /process/failures): the failed executions a query selects, live and
 * in history, grouped by flow, failure code and the node they failed at, each group counted
 * with its newest execution. History is grouped from its tags (execution-tags.ts), reading a
 * document only where the tags cannot say (archived before the failed node was a tag, a
 * digest) and, for each group shown, its newest execution's (for its message).
 */
import type { FailureGroup, FailureGroups, FailureSort, InstanceFailure } from '../../shared/api/index.js';
import { nodesAt, type FlowNode } from '../../shared/flow/types.js';
import { STATE, type Flow, type Execution } from '../state/state.js';
import { ExecutionFilter, msIdPrefix, type ExecutionQuery } from './execution-filter.js';
import { COLD_BATCH, isLive, type ExecutionSources } from './execution-list.js';
import { TAG } from './execution-tags.js';

/** Which failed executions are grouped, and how the groups come back. */
export interface FailureQuery extends Pick<
  ExecutionQuery,
  'organization' | 'processId' | 'version' | 'environment' | 'startedAfter' | 'startedBefore' | 'children'
> {
  readonly sort: FailureSort;
  /** At most this many groups; null: every one (an answer merged with other daemons' after). */
  readonly limit: number | null;
  /** The live executions only (a daemon sharing the database answers another that reads history). */
  readonly liveOnly?: boolean;
}

/** Where failures are: a list's sources, and the live state's flows by id. */
export interface FailureSources extends ExecutionSources {
  /** The flow `processId`, if the daemon has it. */
  readonly flow: (processId: string) => Flow | undefined;
}

/** A group as it is counted: its newest execution's id, and the execution itself when it is live. */
interface Tally {
  readonly processId: string;
  readonly errorCode: string;
  readonly nodeId: string | null;
  count: number;
  newestId: string;
  newestLive: Execution | null;
}

/**
 * The failed executions `q` selects (stateCd 2, currently failed), grouped. The work is that of
 * a list filtered on tags that reads every bucket within the start bounds (no document but those
 * said above): live executions in memory, then history bucket by bucket. An execution live again
 * (retried) counts as it is live, never as its archived copy says.
 */
export async function groupFailures(src: FailureSources, q: FailureQuery): Promise<FailureGroups> {
  const query: ExecutionQuery = { ...q, stateCd: STATE.FAILED, limit: 0 };
  const filter = new ExecutionFilter(query, src.flowOrganization);
  const tallies = new Map<string, Tally>();
  const add = (processId: string, errorCode: string, nodeId: string | null, id: string, live: Execution | null) => {
    const key = JSON.stringify([processId, errorCode, nodeId]);
    const t = tallies.get(key);
    if (!t) tallies.set(key, { processId, errorCode, nodeId, count: 1, newestId: id, newestLive: live });
    else {
      t.count++;
      if (id > t.newestId) {
        t.newestId = id;
        t.newestLive = live;
      }
    }
  };
  const addExecution = (inst: Execution, live: boolean) =>
    add(inst.processId, inst.error?.code ?? '', inst.error?.nodeId ?? null, inst.processInstanceId, live ? inst : null);

  for (const inst of src.live()) if (inst.stateCd === STATE.FAILED && filter.matches(inst)) addExecution(inst, true);
  // Cold failed ones (kept until history has them): their failure is in their document only.
  const cold: string[] = [];
  for (const id of src.coldIds()) {
    const summary = src.coldSummary(id);
    if (summary !== undefined && filter.summary(summary) !== 'no') cold.push(id);
  }
  for (let from = 0; from < cold.length; from += COLD_BATCH) {
    const batch = cold.slice(from, from + COLD_BATCH);
    const reading = src.ensure(batch);
    if (reading !== null) await reading;
    for (const id of batch) {
      const inst = src.liveOne(id);
      if (inst !== undefined && inst.stateCd === STATE.FAILED && filter.matches(inst)) addExecution(inst, true);
    }
  }
  if (q.liveOnly !== true) {
    const narrowing = filter.narrowing();
    let bucketsRead = 0;
    for (const bucket of await src.history.buckets()) {
      const dayStart = Date.parse(`${bucket}T00:00:00Z`);
      if (filter.upper !== null && msIdPrefix(dayStart) >= filter.upper) continue; // newer than the bounds
      if (filter.lower !== null && msIdPrefix(dayStart + DAY_MS) <= filter.lower) break;
      // Past the first bucket, what history caches stays (a search: see ListRange.passing).
      const entries = await src.history.list(bucket, { tags: narrowing, passing: bucketsRead++ > 0 });
      for (const { id, tags } of entries) {
        if (!filter.inBounds(id) || isLive(src, id)) continue;
        const verdict = filter.tags(tags, id);
        if (verdict === 'no') continue;
        const errorCode = tagText(tags[TAG.errorCode]);
        const node = tags[TAG.failedNode];
        const nodeId = node === '' ? null : tagText(node);
        if (verdict === 'yes' && errorCode !== undefined && nodeId !== undefined) {
          add(tags[TAG.processId]!, errorCode, nodeId, id, null);
          continue;
        }
        // Tags that cannot say: older history, or a digest. Its document settles it.
        const inst = await src.archived(id);
        if (inst && filter.matches(inst)) addExecution(inst, false);
      }
    }
  }

  let total = 0;
  for (const t of tallies.values()) total += t.count;
  const sorted = [...tallies.values()].sort(q.sort === 'count' ? byCount : byNewest);
  const shown = q.limit === null ? sorted : sorted.slice(0, q.limit);
  const groups: FailureGroup[] = [];
  for (const t of shown) groups.push(await describe(src, t));
  return { groups, total, groupCount: tallies.size };
}

const DAY_MS = 86_400_000;

const byNewest = (a: Tally, b: Tally): number => (a.newestId < b.newestId ? 1 : a.newestId > b.newestId ? -1 : 0);
const byCount = (a: Tally, b: Tally): number => b.count - a.count || byNewest(a, b);

/** A text tag's text (execution-tags.ts's textTag read back); undefined when absent or a digest. Pure. */
function tagText(tag: string | undefined): string | undefined {
  if (tag === undefined || tag.startsWith('#')) return undefined;
  try {
    return decodeURIComponent(tag);
  } catch {
    return undefined;
  }
}

/** A tally as GET /process/failures gives it: names from the flow, the newest execution read. */
async function describe(src: FailureSources, t: Tally): Promise<FailureGroup> {
  const newest = t.newestLive ?? (await src.archived(t.newestId));
  const flow = src.flow(t.processId);
  const version = newest?.processVersion;
  const nodeName =
    t.nodeId === null || version === undefined ? undefined : nodeNamed(flow, version, t.nodeId, newest?.scope);
  return {
    processId: t.processId,
    ...(flow && { processName: flow.name }),
    errorCode: t.errorCode,
    nodeId: t.nodeId,
    ...(nodeName !== undefined && { nodeName }),
    count: t.count,
    newest: {
      processInstanceId: t.newestId,
      processVersion: version ?? '',
      message: newest?.error?.message ?? null,
      at: newest?.endTime ?? null,
    },
  };
}

/** The name of node `nodeId` in `flow`'s `version` (in the body `scope` names, for a child), if it has one. Pure. */
function nodeNamed(
  flow: Flow | undefined,
  version: string,
  nodeId: string,
  scope: readonly string[] | undefined,
): string | undefined {
  const definition = flow?.versions[version]?.definition;
  const nodes = definition && nodesAt(definition, scope);
  const node = nodes?.[nodeId] as (FlowNode & { readonly name?: string }) | undefined;
  return node?.name;
}

/**
 * A failed execution's error as its resource gives it (`data.error`), with `attempts`: each node
 * instance of the node it failed at (a retry runs the node again as a new one), counted with the
 * tries its work made. Null unless failed. Pure.
 */
export function failureView(inst: Execution): InstanceFailure | null {
  const error = inst.error;
  if (!error) return null;
  let attempts = 0;
  if (error.nodeId !== null)
    for (const id in inst.nodes) {
      const ni = inst.nodes[id]!;
      if (ni.nodeId === error.nodeId) attempts += ni.attempts ?? 1;
    }
  return { ...error, attempts };
}
