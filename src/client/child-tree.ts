/* An execution's child executions as a tree, bounded: shared by `wfx instances get` and the TUI. */
import type { InstanceView } from '../shared/api/index.js';
import type { WfxClient } from './client.js';

/** A node that started child executions (subProcess, loopNode, callAgent's tools), and those shown. */
export interface ChildGroup {
  /** The node instance that started them (a node run twice has a group each time). */
  readonly nodeInstanceId: string;
  readonly nodeId: string;
  readonly nodeType: string;
  /** How many children the node started. */
  readonly total: number;
  /** The newest of them, oldest first: at most `perNode`; `total - shown.length` more were left out. */
  readonly shown: readonly ChildEntry[];
}

/** One child execution; `stateCd` and `processName` null when it could not be read (pruned from history). */
export interface ChildEntry {
  readonly id: string;
  readonly stateCd: number | null;
  readonly processName: string | null;
  /** Its own children (grandchildren), while the depth allows; [] past it. */
  readonly groups: readonly ChildGroup[];
  /** How many children it has that are not in `groups` (the depth ran out): 0 when all are shown as groups. */
  readonly unshown: number;
}

/** How much of the tree to read: levels below the execution, children per node, executions read in all. */
export interface ChildTreeLimits {
  readonly depth: number;
  readonly perNode: number;
  /** Most child executions read (GET /process/instance/{id}) for one tree. */
  readonly reads: number;
}

/** The limits `wfx instances get` uses: three levels, the newest 10 children of a node, 60 reads. */
export const CLI_TREE_LIMITS: ChildTreeLimits = { depth: 3, perNode: 10, reads: 60 };
/** The limits of the TUI's execution view (read again while the execution runs): one level, 5 a node, 20 reads. */
export const TUI_TREE_LIMITS: ChildTreeLimits = { depth: 1, perNode: 5, reads: 20 };

/** The node instances of `inst` that started children, oldest first. Pure. */
function starters(inst: Pick<InstanceView, 'nodes'>) {
  return inst.nodes.filter((n) => (n.childInstanceIds?.length ?? 0) > 0);
}

/**
 * The children of `inst` under the node that started each, to `limits.depth` levels, the newest
 * `limits.perNode` of a node (the ones still running, or the last to finish), reading at most
 * `limits.reads` executions (a child past that budget is listed by id only). A child that
 * cannot be read is listed with null state. A level's children are read before their own
 * children, so the budget goes to the upper levels first.
 */
export async function childTree(
  client: WfxClient,
  inst: Pick<InstanceView, 'nodes'>,
  limits: ChildTreeLimits,
): Promise<ChildGroup[]> {
  let reads = limits.reads;
  const level = async (of: Pick<InstanceView, 'nodes'>, depth: number): Promise<ChildGroup[]> => {
    // This level's children first, then theirs: the budget goes to the upper levels.
    const read = [];
    for (const n of starters(of)) {
      const ids = n.childInstanceIds!.slice(-limits.perNode);
      const views = await Promise.all(
        ids.map((id) => (reads-- > 0 ? client.instances.get(id).catch(() => null) : Promise.resolve(null))),
      );
      read.push({ n, ids, views });
    }
    const groups: ChildGroup[] = [];
    for (const { n, ids, views } of read) {
      const shown: ChildEntry[] = [];
      for (const [i, id] of ids.entries()) {
        const view = views[i] ?? null;
        const below = view ? starters(view).reduce((sum, s) => sum + s.childInstanceIds!.length, 0) : 0;
        const inner = view && depth < limits.depth && below > 0 ? await level(view, depth + 1) : [];
        shown.push({
          id,
          stateCd: view?.stateCd ?? null,
          processName: view?.processName ?? null,
          groups: inner,
          unshown: inner.length > 0 ? 0 : below,
        });
      }
      groups.push({
        nodeInstanceId: n.nodeInstanceId,
        nodeId: n.nodeId,
        nodeType: n.nodeType,
        total: n.childInstanceIds!.length,
        shown,
      });
    }
    return groups;
  };
  return level(inst, 1);
}
