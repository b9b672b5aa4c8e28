/**
 * What a list of executions asks for, and whether an execution answers it: from the execution
 * itself (live, or read from history), or from its history tags alone (execution-tags.ts),
 * which may not be able to say (older history, a digest): then its document is read.
 */
import { STATE, STATUS, waitingFor, type Environment, type WaitingFor } from '../../shared/api/index.js';
import type { ExecutionSummary } from '../state/execution-summary.js';
import type { Execution } from '../state/state.js';
import { pairsOf, type TagEquals } from '../store/history-store.js';
import { failedNode, failureCode, searchValueTag, TAG, textTag } from './execution-tags.js';
import { searchMatches } from '../../shared/flow/search-attributes.js';
import { bucketOf } from '../state/ids.js';

/** A list of executions (GET /process/instances, and a flow's: GET /process/{id}/instances). */
export interface ExecutionQuery {
  /** Whose executions: one organization's, or every one's (null: a system caller's). */
  readonly organization: string | null;
  readonly processId?: string;
  /** The flow version (`processVersion`). */
  readonly version?: string;
  readonly environment?: Environment;
  readonly stateCd?: number;
  /** The failure code of a failed execution. */
  readonly errorCode?: string;
  /** The node a failed execution failed at (its error's nodeId): failed executions only. */
  readonly failedNode?: string;
  readonly correlationKey?: string;
  /** Running executions waiting for this at some node (`any`: for anything). */
  readonly waiting?: WaitingFor | 'any';
  /** Search attributes (name, value) an execution has, every one. */
  readonly search?: ReadonlyArray<readonly [string, string]>;
  /** Started at or after this instant (ms since the epoch). */
  readonly startedAfter?: number;
  /** Started before this instant (ms since the epoch). */
  readonly startedBefore?: number;
  /** Child executions too; default top-level ones only. */
  readonly children?: boolean;
  /** The direct children of this execution only (whatever `children` says). */
  readonly parentId?: string;
  /** This top-level execution and every one started under it (whatever `children` says). */
  readonly rootId?: string;
  readonly limit: number;
  /** The last id of the previous page: only older ids follow. */
  readonly cursor?: string;
}

/** What a tag list says of a filter: it matches, it does not, or only the document can say. */
export type Verdict = 'yes' | 'no' | 'maybe';

/**
 * A query made ready to test executions against: its text filters encoded as tags are, its
 * time and cursor bounds as id bounds (ids are UUIDv7: the start's millisecond first).
 */
export class ExecutionFilter {
  /** Only ids below this one (the cursor, started before); null: no bound. */
  readonly upper: string | null;
  /** Only ids at or above this one (started at or after, the parent's start); null: no bound. */
  readonly lower: string | null;
  private readonly want: {
    readonly organization: string | null;
    readonly version: string | null;
    readonly errorCode: string | null;
    readonly failedNode: string | null;
    readonly correlationKey: string | null;
    /** The search pairs with their values as searchTag keeps them. */
    readonly search: ReadonlyArray<readonly [string, string]> | null;
  };

  constructor(
    private readonly q: ExecutionQuery,
    /** The organization a flow belongs to (processIds are unique across organizations), if it is known. */
    private readonly flowOrganization: (processId: string) => string | undefined,
  ) {
    const uppers = [q.cursor, q.startedBefore === undefined ? undefined : msIdPrefix(q.startedBefore)];
    // Nothing under an execution started before it did.
    const startOf = (id: string | undefined) => (id !== undefined && bucketOf(id) !== null ? idMs(id) : undefined);
    const lowers = [q.startedAfter, startOf(q.parentId), startOf(q.rootId)].filter(
      (ms): ms is number => ms !== undefined,
    );
    this.upper = uppers.reduce<string | null>((m, u) => (u === undefined ? m : m === null || u < m ? u : m), null);
    this.lower = lowers.length === 0 ? null : msIdPrefix(Math.max(...lowers));
    const text = (s: string | undefined) => (s === undefined ? null : textTag(s));
    this.want = {
      organization: q.organization === null ? null : textTag(q.organization),
      version: text(q.version),
      errorCode: text(q.errorCode),
      failedNode: text(q.failedNode),
      correlationKey: text(q.correlationKey),
      search: q.search === undefined ? null : q.search.map(([name, value]) => [name, searchValueTag(value)] as const),
    };
  }

  /** Whether `id` is within the id bounds. Pure. */
  inBounds(id: string): boolean {
    return (this.upper === null || id < this.upper) && (this.lower === null || id >= this.lower);
  }

  /** Whether execution `inst` answers the query (its id within bounds too). */
  matches(inst: Execution): boolean {
    const q = this.q;
    // First: a search leaves out nearly every execution, and this test is the cheapest.
    if (q.search !== undefined && !searchMatches(inst.search, q.search)) return false;
    return (
      this.fieldsMatch({
        id: inst.processInstanceId,
        startMs: Date.parse(inst.startTime),
        organization: inst.organization,
        processId: inst.processId,
        processVersion: inst.processVersion,
        environment: inst.environment,
        stateCd: inst.stateCd,
        correlationKey: inst.correlationKey,
        parent: inst.parentInstanceId,
        root: inst.root ?? null,
      }) &&
      (q.errorCode === undefined || failureCode(inst) === q.errorCode) &&
      (q.failedNode === undefined || failedNode(inst) === q.failedNode) &&
      (q.waiting === undefined || (inst.stateCd === STATE.RUNNING && waitsFor(inst, q.waiting)))
    );
  }

  /**
   * What cold execution `s`'s summary says of the query (its id within bounds too): a failure
   * code and a failed node are in a failed one's document only, so there it can only say maybe. Pure.
   */
  summary(s: ExecutionSummary): Verdict {
    if (!this.fieldsMatch(s)) return 'no';
    if (this.q.search !== undefined && !searchMatches(s.search, this.q.search)) return 'no';
    const waiting = this.q.waiting;
    if (waiting !== undefined && (s.stateCd !== STATE.RUNNING || !s.waits.some((w) => wanted(w.kind, waiting))))
      return 'no';
    if (this.q.errorCode === undefined && this.q.failedNode === undefined) return 'yes';
    return s.stateCd === STATE.FAILED ? 'maybe' : 'no';
  }

  /** Whether an execution's own fields, all but its failure's, answer the query. Pure. */
  private fieldsMatch(
    f: Omit<ExecutionSummary, 'dueMs' | 'active' | 'waits' | 'triggered' | 'child' | 'search'>,
  ): boolean {
    const q = this.q;
    const within = bucketOf(f.id) === null ? this.startedWithin(f.startMs, f.id) : this.inBounds(f.id);
    return (
      within &&
      (q.organization === null || f.organization === q.organization) &&
      (q.processId === undefined || f.processId === q.processId) &&
      (q.version === undefined || f.processVersion === q.version) &&
      (q.environment === undefined || f.environment === q.environment) &&
      (q.stateCd === undefined || f.stateCd === q.stateCd) &&
      (q.correlationKey === undefined || f.correlationKey === q.correlationKey) &&
      (q.rootId === undefined || f.root === q.rootId || (f.id === q.rootId && f.root === null)) &&
      (q.parentId !== undefined ? f.parent === q.parentId : this.children || f.parent === null)
    );
  }

  /** Whether child executions are listed: asked for, or a tree's. */
  private get children(): boolean {
    return this.q.children === true || this.q.rootId !== undefined;
  }

  /** For an id that is not a UUIDv7 (never archived): its start time against the bounds. */
  private startedWithin(ms: number, id: string): boolean {
    const q = this.q;
    return (
      (q.cursor === undefined || id < q.cursor) &&
      (q.startedBefore === undefined || ms < q.startedBefore) &&
      (q.startedAfter === undefined || ms >= q.startedAfter)
    );
  }

  /**
   * The tags an execution the query keeps has (or lacks, archived before they were): the
   * narrowing a history may do where it reads (HistoryStore.list's `tags`). Never narrower than
   * `tags()`: an entry it drops, `tags()` says no to. Pure.
   */
  narrowing(): TagEquals[] {
    const q = this.q;
    const want: TagEquals[] = [];
    if (q.processId !== undefined) want.push([TAG.processId, q.processId]);
    if (q.stateCd !== undefined) want.push([TAG.stateCd, String(q.stateCd)]);
    else if (q.errorCode !== undefined || q.failedNode !== undefined) want.push([TAG.stateCd, String(STATE.FAILED)]);
    else if (q.waiting !== undefined) want.push([TAG.stateCd, String(STATE.RUNNING)]);
    if (q.parentId !== undefined || !this.children) want.push([TAG.parent, q.parentId ?? '']);
    if (this.want.organization !== null) want.push([TAG.organization, this.want.organization]);
    if (this.want.version !== null) want.push([TAG.version, this.want.version]);
    if (q.environment !== undefined) want.push([TAG.environment, q.environment]);
    if (this.want.errorCode !== null) want.push([TAG.errorCode, this.want.errorCode]);
    if (this.want.failedNode !== null) want.push([TAG.failedNode, this.want.failedNode]);
    if (this.want.correlationKey !== null) want.push([TAG.correlationKey, this.want.correlationKey]);
    return want;
  }

  /** The search pairs an execution the query keeps has, values as its tag keeps them (HistoryStore.list's `pairs`). Pure. */
  pairs(): ReadonlyArray<readonly [string, string]> | undefined {
    return this.want.search ?? undefined;
  }

  /** What the history tags of execution `id` say of the query (its id's bounds aside). Pure. */
  tags(tags: readonly string[], id: string): Verdict {
    const q = this.q;
    // History keeps ended executions: none waits.
    if (q.waiting !== undefined) return 'no';
    if (q.processId !== undefined && tags[TAG.processId] !== q.processId) return 'no';
    if (q.stateCd !== undefined && tags[TAG.stateCd] !== String(q.stateCd)) return 'no';
    // A failure code and a failed node are a failed execution's only.
    if ((q.errorCode !== undefined || q.failedNode !== undefined) && tags[TAG.stateCd] !== String(STATE.FAILED))
      return 'no';
    let verdict: Verdict = 'yes';
    const and = (v: Verdict): boolean => {
      if (v === 'maybe') verdict = 'maybe';
      return v === 'no';
    };
    if (q.rootId !== undefined) {
      const root = tags[TAG.root];
      const v = root === undefined ? 'maybe' : root === q.rootId || (root === '' && id === q.rootId) ? 'yes' : 'no';
      if (and(v)) return 'no';
    }
    const parent = tags[TAG.parent];
    if (q.parentId !== undefined || !this.children) {
      const want = q.parentId ?? '';
      if (and(parent === undefined ? 'maybe' : parent === want ? 'yes' : 'no')) return 'no';
    }
    if (this.want.organization !== null) {
      const org = tags[TAG.organization];
      const flowOrg = org === undefined ? this.flowOrganization(tags[TAG.processId] ?? '') : undefined;
      const v = flowOrg !== undefined ? (flowOrg === q.organization ? 'yes' : 'no') : text(org, this.want.organization);
      if (and(v)) return 'no';
    }
    if (this.want.version !== null && and(text(tags[TAG.version], this.want.version))) return 'no';
    if (q.environment !== undefined && and(text(tags[TAG.environment], q.environment))) return 'no';
    if (this.want.errorCode !== null && and(text(tags[TAG.errorCode], this.want.errorCode))) return 'no';
    if (this.want.failedNode !== null && and(text(tags[TAG.failedNode], this.want.failedNode))) return 'no';
    if (this.want.correlationKey !== null && and(text(tags[TAG.correlationKey], this.want.correlationKey))) return 'no';
    if (this.want.search !== null && and(searchVerdict(tags[TAG.search], this.want.search))) return 'no';
    return verdict;
  }
}

/** Whether a node waiting with `kind` waits for `want`. Pure. */
function wanted(kind: Parameters<typeof waitingFor>[0], want: WaitingFor | 'any'): boolean {
  return want === 'any' || waitingFor(kind) === want;
}

/** Whether some node of `inst` waits for `want`. Pure. */
function waitsFor(inst: Execution, want: WaitingFor | 'any'): boolean {
  for (const id in inst.nodes) {
    const node = inst.nodes[id]!;
    if (node.statusCd === STATUS.WAITING && node.wait !== null && wanted(node.wait.kind, want)) return true;
  }
  return false;
}

/**
 * A searchTag against the pairs wanted (values as the tag keeps them): absent, written before
 * search attributes when none had any, says no; a digest that matches, maybe. Pure.
 */
function searchVerdict(tag: string | undefined, want: ReadonlyArray<readonly [string, string]>): Verdict {
  if (tag === undefined || tag === '') return 'no';
  const pairs = pairsOf(tag);
  let verdict: Verdict = 'yes';
  for (const [name, value] of want) {
    if (pairs.get(name) !== value) return 'no';
    if (value.startsWith('#')) verdict = 'maybe';
  }
  return verdict;
}

/** A text tag against the tag wanted: absent (older history) or a digest that matches can only say maybe. */
function text(tag: string | undefined, want: string): Verdict {
  if (tag === undefined) return 'maybe';
  if (tag !== want) return 'no';
  return want.startsWith('#') ? 'maybe' : 'yes';
}

/** The millisecond a UUIDv7 names. Pure. */
export function idMs(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/**
 * The start of every UUIDv7 of millisecond `ms` (`xxxxxxxx-xxxx`): an id is below it exactly
 * when it names an earlier millisecond. Pure.
 */
export function msIdPrefix(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}
