/**
 * How many executions run, counted where the engine's breadth limits need them
 * (engine/limits.ts): per organization, per tree (a root and every execution started under it,
 * children and called ones alike), and per parent (its child executions); and per flow, those
 * that only wait apart (the metrics' `wfx_executions_running`). Derived from the running
 * executions, so never written to a snapshot (DERIVED in state.ts): made by the recovery walk
 * (engine/recovery.ts, at a start and after a store replaces executions), else on first use;
 * kept up by the reducer's `instance.started`, `instance.finished` and node status changes.
 *
 * A plain execution, with no child and started by no other, has no entry of its own: only its
 * organization's count moves, so the common start-and-finish costs no map entry that grows and
 * shrinks per execution (docs/decisions/005-no-long-lived-growing-collections.md).
 */
import { ExecutionTable } from './execution-table.js';
import { execution } from './executions.js';
import { STATE, STATUS, type StatusCd } from '../../shared/api/index.js';
import type { Execution } from './execution-document.js';
import type { WalkRow } from './execution-index/row.js';
import { FLAG_CHILD } from './execution-summary.js';
import { ownIndex, StateIndex } from './state-index.js';
import { commitCow, CowMap } from './draft/cow-map.js';

/** What `addCold` reads of a cold execution (the directory walk's row). */
type ColdCounted = Readonly<Pick<WalkRow, 'stateCd' | 'root' | 'parent' | 'flags' | 'active'>>;

/**
 * What live counts belong to: the state's executions and the counts kept beside them
 * (LiveCountsHolder.liveCounts). Named here so that this module needs nothing of state.ts.
 */
export interface LiveCountsHolder {
  instances: Record<string, Execution | undefined>;
  instanceTable?: ExecutionTable<Execution> | undefined;
  liveCounts?: LiveCounts | undefined;
}

/** The live counts of one state. */
export class LiveCounts extends StateIndex<LiveCountsHolder> {
  private constructor(
    state: LiveCountsHolder,
    /** Running executions by organization. */
    private orgs = new Map<string, number>(),
    /** Running executions of each tree that has more than its root, by the root's id (the root counted while it runs). */
    private trees = new Map<string, number>(),
    /** Running child executions (subProcess, loop iterations, agent tools) by their parent's id, where there are any. */
    private children = new Map<string, number>(),
    /** Running executions by flow: [running, only waiting] (see `waitingOnly`). */
    private flows = new Map<string, [number, number]>(),
    /**
     * Active node instances of each running execution that has any, by its id: transient (an
     * execution at rest only waits), so a waiting execution holds no entry.
     */
    private active = new Map<string, number>(),
  ) {
    super(state);
  }

  /** The counts of `state`: its own, or new ones made from its running executions. */
  static of(state: LiveCountsHolder): LiveCounts {
    const held = ownIndex(state.liveCounts, state);
    if (held !== null) return held;
    const made = LiveCounts.building(state);
    for (const inst of ExecutionTable.of(state).live()) made.add(inst);
    return made.built();
  }

  /**
   * New, empty counts made the state's own, for a walk over every live execution to `add` each
   * and then call `built` (engine/recovery.ts: the walk a start makes anyway).
   */
  static building(state: LiveCountsHolder): LiveCounts {
    return (state.liveCounts = new LiveCounts(state));
  }

  /**
   * Counts live execution `inst` while building (a finished one counts nothing). `activeNodes`:
   * its Active node instances when the caller counted them, else counted here.
   */
  add(inst: Execution, activeNodes?: number): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    this.count(inst, 1);
    this.flowStarted(inst, activeNodes ?? activeIn(inst));
  }

  /**
   * Counts cold live execution `r` while building, from the directory's walk, as `add` counts a
   * resident one (a waiting node has a wait: the directory keeps every waiting node's); `id`
   * makes its id, asked only when it has Active nodes.
   */
  addCold(r: ColdCounted, id: () => string): void {
    if (r.stateCd !== STATE.RUNNING) return;
    // Its organization and flow are counted by `addColdFlow`: its tree, parent and Active nodes here.
    if (r.root !== null) bump(this.trees, r.root, 1);
    if ((r.flags & FLAG_CHILD) !== 0 && r.parent !== null) bump(this.children, r.parent, 1);
    if (r.active > 0) this.active.set(id(), r.active);
  }

  /**
   * Counts the cold executions of flow `processId` of `organization` while building: `running`
   * of them, `waitingOnly` with no Active node and a wait (the directory's per-flow counts).
   */
  addColdFlow(organization: string, processId: string, running: number, waitingOnly: number): void {
    bump(this.orgs, organization, running);
    let flow = this.flows.get(processId);
    if (flow === undefined) this.flows.set(processId, (flow = [0, 0]));
    flow[0] += running;
    flow[1] += waitingOnly;
  }

  /**
   * Ends a build: each tree counts its root while it runs; `coldState` answers for a root that is
   * not resident (its STATE, undefined: none). Returns the counts.
   */
  built(coldState?: (id: string) => number | undefined): LiveCounts {
    for (const root of this.trees.keys()) {
      const stateCd = execution(this.state, root)?.stateCd ?? coldState?.(root);
      if (stateCd === STATE.RUNNING) this.trees.set(root, this.trees.get(root)! + 1);
    }
    return this;
  }

  /** The counts of `state` if they are made, else null (the reducer keeps up only counts that exist). */
  static held(state: LiveCountsHolder): LiveCounts | null {
    return ownIndex(state.liveCounts, state);
  }

  /**
   * These counts for a step's draft (state/draft/): it reads them, and its changes stay in the
   * fork (copy-on-write maps) until `commitFork` hands them over.
   */
  fork(holder: LiveCountsHolder): LiveCounts {
    return new LiveCounts(
      holder,
      new CowMap(this.orgs),
      new CowMap(this.trees),
      new CowMap(this.children),
      new CowMap(this.flows, 'copy'), // its pairs are changed in place
      new CowMap(this.active),
    );
  }

  /** Writes the changes of `f` (this one's fork) into these counts. */
  commitFork(f: LiveCounts): void {
    for (const map of [f.orgs, f.trees, f.children, f.flows, f.active]) commitCow(map as CowMap<string, unknown>);
  }

  /** Running executions of `organization`. */
  organization(organization: string): number {
    return this.orgs.get(organization) ?? 0;
  }

  /** Running executions of the tree `inst` belongs to, `inst` and its root included. */
  tree(inst: Pick<Execution, 'processInstanceId' | 'root'>): number {
    return this.trees.get(inst.root ?? inst.processInstanceId) ?? 1;
  }

  /**
   * Whether anything of the tree rooted at `root` runs, its root or an execution started under
   * it; false for a root that never started one.
   */
  treeRuns(root: string): boolean {
    return this.trees.has(root);
  }

  /** Running child executions of `inst`. */
  childrenOf(instanceId: string): number {
    return this.children.get(instanceId) ?? 0;
  }

  /** `inst` started (the reducer, once it is in the state). */
  started(inst: Execution): void {
    if (inst.root !== undefined && !this.trees.has(inst.root)) {
      // The tree's first execution beside its root: the root counts while it runs.
      this.trees.set(inst.root, execution(this.state, inst.root)?.stateCd === STATE.RUNNING ? 1 : 0);
    }
    this.count(inst, 1);
    // A new execution has no node; a retried one (instance.revived) has its own.
    if (inst.stateCd === STATE.RUNNING) this.flowStarted(inst, activeIn(inst));
  }

  /** `inst` finished (the reducer, as its state leaves Running). */
  finished(inst: Execution): void {
    this.count(inst, -1);
    const id = inst.processInstanceId;
    const flow = this.flows.get(inst.processId);
    if (flow !== undefined) {
      if (!this.active.has(id) && liveNodes(inst) > 0) flow[1]--;
      if (--flow[0] === 0) this.flows.delete(inst.processId);
    }
    this.active.delete(id);
    // A root whose tree still runs (executions it called outlive it).
    const own = this.trees.get(inst.processInstanceId);
    if (own !== undefined) bump(this.trees, inst.processInstanceId, -1);
  }

  /**
   * A node instance of `inst` went from status `from` (null: it is new) to `to` (the reducer,
   * once the node and `inst.liveNodes` say so). Only a running execution's nodes count: a
   * retried one is counted again whole (`started`).
   */
  node(inst: Execution, from: StatusCd | null, to: StatusCd): void {
    if (inst.stateCd !== STATE.RUNNING || from === to) return;
    const id = inst.processInstanceId;
    const before = this.active.get(id) ?? 0;
    const after = before + (to === STATUS.ACTIVE ? 1 : 0) - (from === STATUS.ACTIVE ? 1 : 0);
    if (after > 0) this.active.set(id, after);
    else this.active.delete(id);
    const live = liveNodes(inst);
    const liveBefore = live - (isLive(to) ? 1 : 0) + (isLive(from) ? 1 : 0);
    const was = before === 0 && liveBefore > 0;
    const is = after === 0 && live > 0;
    if (was === is) return;
    const flow = this.flows.get(inst.processId);
    if (flow !== undefined) flow[1] += is ? 1 : -1;
  }

  /** Running executions per flow: `running` in all, `waiting` of them only waiting (no node active, one waiting). */
  perFlow(): IterableIterator<[flow: string, counts: readonly [running: number, waiting: number]]> {
    return this.flows.entries();
  }

  /** Counts running execution `inst`, with `activeNodes` Active node instances, in its flow. */
  private flowStarted(inst: Execution, activeNodes: number): void {
    if (activeNodes > 0) this.flowStartedAt(inst.processId, inst.processInstanceId, activeNodes, activeNodes);
    else this.flowStartedAt(inst.processId, inst.processInstanceId, 0, liveNodes(inst));
  }

  /** Counts running execution `id` of flow `processId`, with `activeNodes` Active and `live` live nodes. */
  private flowStartedAt(processId: string, id: string, activeNodes: number, live: number): void {
    let flow = this.flows.get(processId);
    if (flow === undefined) this.flows.set(processId, (flow = [0, 0]));
    flow[0]++;
    if (activeNodes > 0) this.active.set(id, activeNodes);
    else if (live > 0) flow[1]++;
  }

  private count(inst: Execution, delta: 1 | -1): void {
    const child = inst.parentNodeInstanceId !== undefined ? inst.parentInstanceId : null;
    this.countAt(inst.organization, inst.root ?? null, child, delta);
  }

  /** Counts an execution of `organization` in tree `root` (null: its own), child of `parent` (null: none). */
  private countAt(organization: string, root: string | null, parent: string | null, delta: 1 | -1): void {
    bump(this.orgs, organization, delta);
    if (root !== null) bump(this.trees, root, delta);
    if (parent !== null) bump(this.children, parent, delta);
  }
}

/** Whether a node of this status is live (a token: Active or Waiting). */
function isLive(s: StatusCd | null): boolean {
  return s === STATUS.ACTIVE || s === STATUS.WAITING;
}

/** The live node instances of `inst`: as the reducer keeps them (sizes.ts), or counted for a record written before. */
function liveNodes(inst: Execution): number {
  if (inst.liveNodes !== undefined) return inst.liveNodes;
  let n = 0;
  for (const id in inst.nodes) if (isLive(inst.nodes[id]!.statusCd)) n++;
  return n;
}

/** The Active node instances of `inst`. */
function activeIn(inst: Execution): number {
  let n = 0;
  for (const id in inst.nodes) if (inst.nodes[id]!.statusCd === STATUS.ACTIVE) n++;
  return n;
}

/** Adds `delta` to `key`'s count, dropping the entry at zero. */
function bump(map: Map<string, number>, key: string, delta: number): void {
  const n = (map.get(key) ?? 0) + delta;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}
