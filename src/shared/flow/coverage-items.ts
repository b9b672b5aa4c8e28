/**
 * The parts of a flow that its tests can cover, as `wfx test --coverage` counts them and the
 * console's flow page draws them: every node, and every branch: each ifElse's then and else,
 * each gateway branch and default, each errorFlow and timeoutFlow, each loop entered and
 * skipped. Nested bodies (loops, embedded subprocesses) are parts of their flow, their nodes
 * named by path (`loop/inner`). Pure.
 */
import type { EdgeKind } from './graph.js';
import type { FlowNode } from './types.js';

/** One part of a flow to cover. */
export interface CoverageItem {
  /** The node it belongs to, with the path of the bodies it is in (`loop/inner`). */
  readonly node: string;
  /** `node`, or which branch: `then`, `else`, `branch 2`, `default`, `errorFlow`, `timeoutFlow`, `loop entered`, `loop skipped`. */
  readonly part: string;
  /** Where it goes, for a branch. */
  readonly to?: string;
}

/** The key an item is known by in sets and maps. */
export function coverageKey(node: string, part: string): string {
  return `${node}|${part}`;
}

/**
 * Which branch of its node an edge is, as coverage names it: `then`, `else`, `branch 2` (the
 * second of `branches`), `default`, `errorFlow`, `timeoutFlow`; null for a plain next (and a
 * boundary event's, which is covered when the event fires). `path` is the edge's (graph.ts).
 */
export function branchPart(kind: EdgeKind, path: readonly (string | number)[]): string | null {
  switch (kind) {
    case 'then':
    case 'else':
    case 'default':
    case 'errorFlow':
    case 'timeoutFlow':
      return kind;
    case 'branch':
      return typeof path[1] === 'number' ? `branch ${path[1] + 1}` : null;
    default:
      return null;
  }
}

/** Every part of the flow whose nodes are `nodes`, in the flow's order (a node, then its branches, then its body's). */
export function coverageItems(nodes: Readonly<Record<string, FlowNode>>, prefix = ''): CoverageItem[] {
  const items: CoverageItem[] = [];
  const add = (node: string, part: string, to?: string) => items.push({ node, part, ...(to !== undefined && { to }) });
  for (const [id, def] of Object.entries(nodes)) {
    const node = prefix + id;
    add(node, 'node');
    if (def.type === 'ifElse') {
      add(node, 'then', def.then);
      add(node, 'else', def.else);
    } else if (def.type === 'exclusiveGateway' || def.type === 'inclusiveGateway') {
      def.branches?.forEach((b, i) => add(node, branchPart('branch', ['branches', i, 'next'])!, b.next));
      if (def.default !== undefined) add(node, 'default', def.default);
    }
    if (def.errorFlow !== undefined) add(node, 'errorFlow', def.errorFlow);
    if ('timeoutFlow' in def && def.timeoutFlow !== undefined) add(node, 'timeoutFlow', def.timeoutFlow);
    if (def.type === 'loopNode') {
      add(node, 'loop entered');
      add(node, 'loop skipped');
    }
    if ((def.type === 'loopNode' || def.type === 'subProcess') && def.nodes !== undefined)
      items.push(...coverageItems(def.nodes, `${node}/`));
  }
  return items;
}
