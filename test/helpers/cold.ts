/**
 * A cold side in memory for engine tests (state/executions.ts, ColdExecutions): trees at rest
 * are taken off the resident state as JSON and read back when a step or a read names them, so
 * the engine suite runs with nothing resident between steps (`WFX_TEST_COLD=1`).
 */
import { InstanceTable } from '../../src/daemon/state/instance-table.js';
import { execution, treeOf, type ColdExecutions } from '../../src/daemon/state/executions.js';
import { STATE, STATUS, type Instance, type WfxState } from '../../src/daemon/state/state.js';

/** Whether engine harnesses evict every tree at rest before each read (`WFX_TEST_COLD=1`). */
export const COLD_BY_ENV = process.env.WFX_TEST_COLD === '1';

export class MemoryCold implements ColdExecutions {
  private readonly docs = new Map<string, string>();
  private readonly trees = new Map<string, Set<string>>();
  private readonly treeOfId = new Map<string, string>();
  evictions = 0;
  loads = 0;

  get size(): number {
    return this.docs.size;
  }

  coldTree(id: string): readonly string[] {
    const tree = this.treeOfId.get(id);
    return tree === undefined ? [] : [...this.trees.get(tree)!];
  }

  load(ids: readonly string[]): Promise<Instance[]> {
    const out: Instance[] = [];
    for (const id of ids) {
      const doc = this.docs.get(id);
      if (doc === undefined) continue;
      this.docs.delete(id);
      const tree = this.treeOfId.get(id)!;
      this.treeOfId.delete(id);
      const members = this.trees.get(tree)!;
      members.delete(id);
      if (members.size === 0) this.trees.delete(tree);
      out.push(JSON.parse(doc) as Instance);
    }
    this.loads += out.length;
    // Read back on a later turn, as a disk read would be.
    return new Promise((resolve) => setImmediate(() => resolve(out)));
  }

  /** Puts every cold execution back (before the store closes: its snapshot must hold them). */
  restoreAll(state: WfxState): void {
    const table = InstanceTable.of(state);
    for (const doc of this.docs.values()) table.put(JSON.parse(doc) as Instance);
    this.docs.clear();
    this.trees.clear();
    this.treeOfId.clear();
  }

  /**
   * Takes every tree at rest off the state: running executions none of whose nodes is active
   * (finished ones are on their way to history and stay).
   */
  evictAtRest(state: WfxState): void {
    const table = InstanceTable.of(state);
    const byTree = new Map<string, Instance[]>();
    for (const id of table.ids()) {
      const inst = execution(state, id);
      if (inst === undefined) continue;
      const tree = treeOf(inst);
      const members = byTree.get(tree) ?? [];
      members.push(inst);
      byTree.set(tree, members);
    }
    for (const [tree, members] of byTree) {
      const atRest = members.every(
        (m) => m.stateCd === STATE.RUNNING && Object.values(m.nodes).every((n) => n.statusCd !== STATUS.ACTIVE),
      );
      if (!atRest) continue;
      let set = this.trees.get(tree);
      if (set === undefined) this.trees.set(tree, (set = new Set()));
      for (const m of members) {
        const id = m.processInstanceId;
        this.docs.set(id, JSON.stringify(m));
        this.treeOfId.set(id, tree);
        set.add(id);
        table.archive(id);
        this.evictions++;
      }
    }
  }
}
