import { useCallback } from 'react';
import { childTree, TUI_TREE_LIMITS, type ChildGroup } from '../../client/child-tree.js';
import type { WfxClient } from '../../client/client.js';
import type { Execution } from '../types.js';
import { usePolled } from './use-polled.js';

/** How often the children of a running execution are read again: they change without a line in its log. */
const RUNNING_POLL_MS = 2000;

/**
 * The child executions of `execution` (each with its state and flow) under the node instance
 * that started each, bounded (TUI_TREE_LIMITS); null until first read, [] without any. Read
 * again when the execution changes (a child started, a node moved, it ended) and, while it runs,
 * every 2 s; never for an execution that has no children.
 */
export function useChildren(client: WfxClient, execution: Execution | null): readonly ChildGroup[] | null {
  const nodes = execution?.nodes ?? [];
  const count = nodes.reduce((sum, n) => sum + (n.childInstanceIds?.length ?? 0), 0);
  const running = execution?.stateCd === 0;
  // A number that moves whenever what the tree shows may have: usePolled reads again then.
  const changes = count * 1_000_000 + nodes.length * 10 + (execution?.stateCd ?? 9);
  const load = useCallback(
    () => (execution && count > 0 ? childTree(client, execution, TUI_TREE_LIMITS) : Promise.resolve([])),
    [client, execution, count],
  );
  return usePolled(load, changes, running && count > 0 ? RUNNING_POLL_MS : null).data;
}
