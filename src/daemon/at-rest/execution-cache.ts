/**
 * The bounded cache of executions (decision 068, step 7): at most `capacity` live executions
 * stay resident; the others, whole trees at rest that a durable checkpoint wrote and nothing
 * changed since, leave memory and are read back from the store's files (their segments) when
 * a step or a read names them (state/executions.ts, `Executions.ensure`). What lists a cold
 * execution is its summary, kept in an ExecutionIndex (typed arrays, no object each); its
 * earliest timer is the directory's due heap, not an armed timer of its own (the engine arms
 * one timer for the earliest, `nextDue`, and reads back those due, `takeDue`); its event waits
 * and input tasks are the directory's too (WfxState.coldSubscriptions, coldTasks), not entries
 * of the state's indexes.
 *
 * Which trees leave: the clock algorithm over the resident ones in the table's order, a tree
 * read back or changed since the last pass passed over once (one changed since the last
 * checkpoint cannot leave before the next: the pass asks for one). A tree leaves only whole and
 * only at rest: running, no Active node, every member clean (EvictableEntries.clean). Eviction
 * writes nothing: a crash at any point of it recovers the same state from the same files.
 */
import { ELSEWHERE, ExecutionIndex } from '../state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../state/execution-summary.js';
import { execution, treeOf, type ColdEvents, type ColdExecutions, type ColdLive } from '../state/executions.js';
import { ExecutionTable } from '../state/execution-table.js';
import { indexEventWait, unsubscribe } from '../state/records/subscription-index.js';
import type { ColdSubscriptions, Subscription } from '../state/subscriptions.js';
import { TaskIndex, type ColdTasks, type TaskRef } from '../state/task-index.js';
import { STATE, STATUS, type Execution, type WfxState } from '../state/state.js';
import type { EvictableEntries } from '../store/durable-store.js';

/** Live executions a daemon keeps in memory at most by default (`--execution-cache`). */
export const DEFAULT_EXECUTION_CACHE = 10_000;

/** Tests: the cache every daemon they spawn keeps, whatever its default (`WFX_TEST_EXECUTION_CACHE=n`). */
export const EXECUTION_CACHE_BY_ENV: number | undefined = /^\d+$/.test(process.env.WFX_TEST_EXECUTION_CACHE ?? '')
  ? Number(process.env.WFX_TEST_EXECUTION_CACHE)
  : undefined;

/** Trees a pass evicts in one turn of the event loop, at most: a pass over many is sliced. */
const EVICT_SLICE = 64;

/** How soon a pass that left recently read trees over the capacity comes round again (ms). */
const CLOCK_TURN_MS = 1000;
/** Executions touched since the last pass kept beyond twice the capacity before those gone are forgotten. */
const RECENT_SLACK = 64;

/** What the cache is built on. */
export interface ExecutionCacheOptions {
  readonly state: WfxState;
  readonly store: EvictableEntries;
  /** Live executions kept resident at most (trees at rest beyond it leave memory). */
  readonly capacity: number;
  /** The summary a listing reads of a cold execution (engine/executions-at-rest.ts). */
  readonly summarize: (inst: Execution, state: object) => ExecutionSummary;
  /** Asks the store for a checkpoint (executions changed since the last cannot leave before one). */
  readonly checkpoint: () => Promise<void>;
  readonly onError: (err: unknown, what: string) => void;
}

/** The cache: the cold side of the engine's Executions (see the top of this file). */
export class ExecutionCache implements ColdExecutions {
  /** The cold executions' summaries: the store's own when its open left executions unread. */
  private readonly directory: ExecutionIndex;
  /** Executions touched since the last pass: their trees are passed over once. */
  private recent = new Set<string>();
  private scheduled = false;
  private again: NodeJS.Timeout | null = null;
  private closed = false;
  /** Told of evictions (the engine's timers and indexes of what leaves memory). */
  private events: ColdEvents | null = null;
  /** The store's hold on each execution `load` read back, when the read started (EvictableEntries.epoch). */
  private readonly readUnder = new WeakMap<Execution, number | null>();
  /** Trees evicted and executions read back since the start (metrics, tests). */
  readonly stats = { evicted: 0, loaded: 0, passes: 0 };

  constructor(private readonly o: ExecutionCacheOptions) {
    this.directory = o.store.unread ?? new ExecutionIndex();
    // The cold executions' event waits: the directory's, the state's index holding the resident ones'.
    o.state.coldSubscriptions = directorySubscriptions(this.directory);
    o.state.coldTasks = directoryTasks(this.directory);
    o.store.onCheckpoint(() => this.schedule());
    o.store.guard((key) => {
      if (this.directory.has(key))
        throw new Error(`a record reached execution ${key}, which is not resident: its step did not name it`);
    });
  }

  get size(): number {
    return this.directory.size;
  }

  /** How many live executions are resident now. */
  get resident(): number {
    return ExecutionTable.of(this.o.state).size;
  }

  coldTree(id: string): readonly string[] {
    const entry = this.directory.get(id);
    return entry === null ? [] : this.directory.tree(entry.summary.root ?? id);
  }

  summary(id: string): ExecutionSummary | undefined {
    return this.directory.get(id)?.summary;
  }

  ids(): Iterable<string> {
    return this.directory.list({ limit: Infinity });
  }

  idsWithSearch(where: ReadonlyArray<readonly [string, string]>): string[] {
    return this.directory.withSearch(where);
  }

  page(after: string | null, limit: number): string[] {
    return this.directory.list({ after, limit });
  }

  live(): ColdLive {
    return directoryLive(this.directory);
  }

  nextDue(): number | null {
    return this.directory.nextDue();
  }

  takeDue(nowMs: number, max: number): string[] {
    return this.directory.takeDue(nowMs, max);
  }

  untake(ids: readonly string[], atMs: number): void {
    for (const id of ids) this.directory.untake(id, atMs);
    this.events?.dueChanged();
  }

  get dueCount(): number {
    return this.directory.dueCount;
  }

  listen(events: ColdEvents): void {
    this.events = events;
  }

  /** Reads cold executions `ids` back, all or none: one that cannot be read leaves them all cold. */
  async load(ids: readonly string[]): Promise<Execution[]> {
    const { epoch } = this.o.store;
    // On a store whose partitions move: the hold each read starts under, which `loaded` checks.
    const at = epoch && ids.map((id) => epoch.call(this.o.store, id));
    const insts = await this.read(ids);
    if (at) insts.forEach((inst, i) => this.readUnder.set(inst, at[i]!));
    return insts;
  }

  /** Reads the documents of cold executions `ids`, which stay cold. */
  async read(ids: readonly string[]): Promise<Execution[]> {
    return (await Promise.all(ids.map((id) => this.o.store.read(id)))) as Execution[];
  }

  /**
   * Executions read back, made resident in this same turn: they leave the directory, and their
   * event waits and tasks go to the state's indexes (what the directory answered for them).
   */
  loaded(read: readonly Execution[]): readonly Execution[] {
    const { state, store } = this.o;
    // Its partition given up while it was read (and maybe taken again since, its row read
    // afresh into the directory): this copy may be stale, and it stays out.
    const insts = store.epoch ? read.filter((inst) => this.stillHeld(inst)) : read;
    for (const inst of insts) {
      const id = inst.processInstanceId;
      this.directory.remove(id);
      this.recent.add(id);
      if (inst.stateCd !== STATE.RUNNING) continue;
      for (const nid in inst.nodes) indexEventWait(state, inst, inst.nodes[nid]!);
      TaskIndex.held(state)?.addExecution(inst);
    }
    this.stats.loaded += insts.length;
    this.scheduleIfOver();
    return insts;
  }

  /** Whether `inst`, read back by `load`, was read under the hold its store has now. */
  private stillHeld(inst: Execution): boolean {
    const at = this.readUnder.get(inst);
    this.readUnder.delete(inst);
    return at !== undefined && at !== null && this.o.store.epoch!(inst.processInstanceId) === at;
  }

  /** Marks executions a step changed as recently used (their trees pass the next eviction over). */
  touched(ids: Iterable<string>): void {
    for (const id of ids) this.recent.add(id);
    this.scheduleIfOver();
  }

  /** Evicts down to the capacity on a later turn (after the engine's recovery: the state is whole). */
  trim(): void {
    this.schedule();
  }

  /** Stops evicting (the engine closes; the store writes what is resident, the rest is on disk already). */
  close(): void {
    this.closed = true;
    if (this.again !== null) clearTimeout(this.again);
  }

  /** Executions touched since the last pass (tests). */
  get recentCount(): number {
    return this.recent.size;
  }

  /**
   * An eviction pass once the resident executions are past the capacity by a tenth. Else, once
   * the executions touched since the last pass are twice the capacity, those that left memory
   * since (archived, as fast as others were read back: no pass comes) are forgotten.
   */
  private scheduleIfOver(): void {
    const { capacity } = this.o;
    if (this.resident > capacity + Math.ceil(capacity / 10)) this.schedule();
    else if (this.recent.size > 2 * capacity + RECENT_SLACK)
      for (const id of this.recent) if (execution(this.o.state, id) === undefined) this.recent.delete(id);
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    // On a later turn: a checkpoint's own settling, and a read just made resident, come first.
    setImmediate(() => {
      this.scheduled = false;
      try {
        this.pass();
      } catch (err) {
        this.o.onError(err, 'an eviction of executions');
      }
    });
  }

  /**
   * One slice of a pass of the clock: evicts trees at rest, oldest in the table first, until the
   * resident executions are at the capacity, EVICT_SLICE trees at most (the next slice runs on a
   * later turn: requests are answered between); asks for a checkpoint when too many are left
   * only because they changed since the last.
   */
  private pass(): void {
    const { state, store, capacity } = this.o;
    const table = ExecutionTable.of(state);
    let over = table.size - capacity;
    if (over <= 0 || this.closed) {
      this.recent.clear();
      return;
    }
    this.stats.passes++;
    const ids = table.ids();
    // The members of each tree but its root, for trees of several executions (rare): by root.
    const members = new Map<string, Execution[]>();
    for (const id of ids) {
      const inst = execution(state, id);
      if (inst === undefined || treeOf(inst) === id) continue;
      const group = members.get(treeOf(inst));
      if (group === undefined) members.set(treeOf(inst), [inst]);
      else group.push(inst);
    }
    const judged = new Set<string>();
    let dirty = 0;
    let passedOver = 0;
    let evicted = 0;
    for (const id of ids) {
      if (over <= 0 || evicted >= EVICT_SLICE) break;
      const inst = execution(state, id);
      if (inst === undefined) continue;
      const tree = treeOf(inst);
      if (judged.has(tree)) continue;
      const others = members.get(tree);
      let group = [inst];
      if (others !== undefined) {
        judged.add(tree);
        const root = execution(state, tree);
        group = root === undefined ? others : [root, ...others];
      }
      if (!group.every(mayBeEvicted)) continue;
      if (!group.every((m) => store.clean(m.processInstanceId))) {
        dirty += group.length;
        continue;
      }
      if (group.some((m) => this.recent.has(m.processInstanceId))) {
        passedOver += group.length;
        continue;
      }
      for (const m of group) this.evict(m);
      over -= group.length;
      evicted++;
    }
    this.stats.evicted += evicted;
    if (evicted > 0) this.events?.dueChanged();
    // The slice is spent with the executions still over: the pass goes on in the next turn.
    if (over > 0 && evicted >= EVICT_SLICE) {
      this.schedule();
      return;
    }
    this.recent.clear();
    if (over <= 0) return;
    // Still over with executions that only wait for a checkpoint: one makes them clean, and its
    // end passes again (onCheckpoint); one that had nothing to write, the clock's next turn.
    if (dirty > 0)
      void this.o.checkpoint().then(
        () => this.comeRound(),
        (err: unknown) => this.o.onError(err, 'a checkpoint'),
      );
    // Passed over as recently read: the clock comes round to them again, unless work does first.
    else if (passedOver > 0) this.comeRound();
  }

  /** A pass in CLOCK_TURN_MS, unless one is due by then already. */
  private comeRound(): void {
    if (this.again !== null || this.closed) return;
    this.again = setTimeout(() => {
      this.again = null;
      this.schedule();
    }, CLOCK_TURN_MS).unref();
  }

  /** Takes resident execution `m`, of a tree at rest and clean, out of memory: its summary to the directory, its waits out of the state's indexes. */
  private evict(m: Execution): void {
    const { state } = this.o;
    this.directory.put(this.o.summarize(m, state), ELSEWHERE);
    for (const nid in m.nodes) unsubscribe(state, m, m.nodes[nid]!);
    TaskIndex.held(state)?.removeExecution(m);
    this.events?.evicted(m);
    ExecutionTable.of(state).archive(m.processInstanceId);
  }
}

/** The executions of `directory` as the recovery walk reads them (ColdExecutions.live). */
export function directoryLive(directory: ExecutionIndex): ColdLive {
  return {
    walk: (visit) => directory.walk(visit),
    flowTotals: (visit) => directory.flowTotals(visit),
    idAt: (slot) => directory.idAt(slot),
    waitsAt: (slot) => directory.waitsAt(slot),
    stateOf: (id) => directory.get(id)?.summary.stateCd,
  };
}

/** The subscriptions of the executions in `directory`, as WfxState.coldSubscriptions reads them. */
export function directorySubscriptions(directory: ExecutionIndex): ColdSubscriptions {
  return {
    subscriptionsFor: (organization, eventType, correlationKey) =>
      directory
        .subscribers(organization, eventType, correlationKey)
        .map((s): Subscription => ({ instanceId: s.id, nodeInstanceId: s.node, nodeId: s.nodeId })),
  };
}

/** The input tasks of the executions in `directory`, as WfxState.coldTasks reads them. */
export function directoryTasks(directory: ExecutionIndex): ColdTasks {
  const isoTime = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    get size() {
      return directory.taskCount;
    },
    oldestSince: () => isoTime(directory.oldestTaskSince()),
    page: (organization, processId, cursor, limit) =>
      directory
        .taskPage(organization, processId, cursor, limit)
        .map((t): TaskRef => ({ since: isoTime(t.since)!, instanceId: t.id, nodeInstanceId: t.node })),
  };
}

/**
 * Whether the cache may evict it: running with no Active node, so its document is all there is,
 * and holding no concurrency slot (the slots' index reads only resident executions).
 */
function mayBeEvicted(inst: Execution): boolean {
  if (inst.stateCd !== STATE.RUNNING || inst.concurrency !== undefined) return false;
  for (const nid in inst.nodes) if (inst.nodes[nid]!.statusCd === STATUS.ACTIVE) return false;
  return true;
}
