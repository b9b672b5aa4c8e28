/**
 * The order to publish several flows in: a flow an agent calls as a tool is published before
 * the agent (publish checks that each tool is published with inputs), whatever the order of
 * the files. Otherwise the given order is kept; flows that call each other in a cycle keep it too.
 */
import { toolProcessId } from './agent-tools.js';
import type { FlowDefinition, FlowNode } from './types.js';

/** `items` reordered so that each flow's tools come before it (a stable sort by dependency). Pure. */
export function publishOrder<T>(items: readonly T[], flowOf: (item: T) => FlowDefinition | null): T[] {
  const byProcessId = new Map<string, number>();
  items.forEach((item, i) => {
    const flow = flowOf(item);
    if (flow && !byProcessId.has(flow.processId)) byProcessId.set(flow.processId, i);
  });
  const out: T[] = [];
  const state = new Array<'new' | 'visiting' | 'done'>(items.length).fill('new');
  const visit = (i: number): void => {
    if (state[i] !== 'new') return; // done, or a cycle: keep the order it came in
    state[i] = 'visiting';
    const flow = flowOf(items[i]!);
    for (const processId of flow ? toolsOf(flow.nodes) : []) {
      const j = byProcessId.get(processId);
      if (j !== undefined && j !== i) visit(j);
    }
    state[i] = 'done';
    out.push(items[i]!);
  };
  items.forEach((_, i) => visit(i));
  return out;
}

/** The processIds the callAgent nodes of `nodes` (and of their bodies) call as tools. */
function toolsOf(nodes: Readonly<Record<string, FlowNode>>): string[] {
  const out: string[] = [];
  for (const node of Object.values(nodes)) {
    if (node.type === 'callAgent') out.push(...node.tools.map(toolProcessId));
    if ((node.type === 'loopNode' || node.type === 'subProcess') && node.nodes) out.push(...toolsOf(node.nodes));
  }
  return out;
}
