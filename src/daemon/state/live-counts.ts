/**
 * How many executions run, counted where the engine's breadth limits need them
 * (engine/limits.ts): per organization, per tree (a root and every execution started under it,
 * children and called ones alike), and per parent (its child executions). Derived from the
 * running executions, so never written to a snapshot (DERIVED in state.ts): made on first use,
 * kept up by the reducer's `instance.started` and `instance.finished`, and made again after a
 * store replaces executions (a partition taken or given up).
 *
 * A plain execution, with no child and started by no other, has no entry of its own: only its
 * organization's count moves, so the common start-and-finish costs no map entry that grows and
 * shrinks per execution (docs/decisions/005-no-long-lived-growing-collections.md).
 */
import { InstanceTable } from './instance-table.js';
import { STATE } from '../../shared/api/index.js';
import type { Instance } from './instance.js';

/**
 * What live counts belong to: the state's executions and the counts kept beside them
 * (LiveCountsHolder.liveCounts). Named here so that this module needs nothing of state.ts.
 */
export interface LiveCountsHolder {
  instances: Record<string, Instance | undefined>;
  instanceTable?: InstanceTable<Instance> | undefined;
  liveCounts?: LiveCounts | undefined;
}

/** The live counts of one state. */
export class LiveCounts {
  /** Running executions by organization. */
  private readonly orgs = new Map<string, number>();
  /** Running executions of each tree that has more than its root, by the root's id (the root counted while it runs). */
  private readonly trees = new Map<string, number>();
  /** Running child executions (subProcess, loop iterations, agent tools) by their parent's id, where there are any. */
  private readonly children = new Map<string, number>();

  private constructor(readonly state: LiveCountsHolder) {}

  /** The counts of `state`: its own, or new ones made from its running executions. */
  static of(state: LiveCountsHolder): LiveCounts {
    const held = state.liveCounts;
    if (held !== undefined && held.state === state) return held;
    const made = new LiveCounts(state);
    state.liveCounts = made;
    for (const inst of InstanceTable.of(state).live()) if (inst.stateCd === STATE.RUNNING) made.count(inst, 1);
    for (const root of made.trees.keys())
      if (state.instances[root]?.stateCd === STATE.RUNNING) made.trees.set(root, made.trees.get(root)! + 1);
    return made;
  }

  /** The counts of `state` if they are made, else null (the reducer keeps up only counts that exist). */
  static held(state: LiveCountsHolder): LiveCounts | null {
    const held = state.liveCounts;
    return held !== undefined && held.state === state ? held : null;
  }

  /** Running executions of `organization`. */
  organization(organization: string): number {
    return this.orgs.get(organization) ?? 0;
  }

  /** Running executions of the tree `inst` belongs to, `inst` and its root included. */
  tree(inst: Pick<Instance, 'processInstanceId' | 'root'>): number {
    return this.trees.get(inst.root ?? inst.processInstanceId) ?? 1;
  }

  /** Running child executions of `inst`. */
  childrenOf(instanceId: string): number {
    return this.children.get(instanceId) ?? 0;
  }

  /** `inst` started (the reducer, once it is in the state). */
  started(inst: Instance): void {
    if (inst.root !== undefined && !this.trees.has(inst.root)) {
      // The tree's first execution beside its root: the root counts while it runs.
      this.trees.set(inst.root, this.state.instances[inst.root]?.stateCd === STATE.RUNNING ? 1 : 0);
    }
    this.count(inst, 1);
  }

  /** `inst` finished (the reducer, as its state leaves Running). */
  finished(inst: Instance): void {
    this.count(inst, -1);
    // A root whose tree still runs (executions it called outlive it).
    const own = this.trees.get(inst.processInstanceId);
    if (own !== undefined) bump(this.trees, inst.processInstanceId, -1);
  }

  /** Left out of JSON as it is of snapshots: it is derived (and holds its state). */
  toJSON(): undefined {
    return undefined;
  }

  private count(inst: Instance, delta: 1 | -1): void {
    bump(this.orgs, inst.organization, delta);
    if (inst.root !== undefined) bump(this.trees, inst.root, delta);
    if (inst.parentInstanceId !== null && inst.parentNodeInstanceId !== undefined)
      bump(this.children, inst.parentInstanceId, delta);
  }
}

/** Adds `delta` to `key`'s count, dropping the entry at zero. */
function bump(map: Map<string, number>, key: string, delta: number): void {
  const n = (map.get(key) ?? 0) + delta;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}
