/*
 * A test run's coverage of a flow version, as the flow page draws it over the diagram: each
 * node reached or not, and for one with branches how many were taken; each edge taken or not
 * (a branch as the tests recorded it, a boundary event's when it fired, a plain next when both
 * its ends were reached). Pure.
 */
import type { FlowCoverageView } from '../../shared/api/index.js';
import { coverageItems, coverageKey, type CoverageItem } from '../../shared/flow/coverage-items.js';
import type { FlowNode } from '../../shared/flow/types.js';
import type { ModelEdge } from '../diagram/graph-model.js';

/** How a node was covered: reached with every branch taken, reached with some not, not reached. */
export type NodeCoverage = 'reached' | 'partial' | 'missed';

/** What a page shows of a coverage: counts, per-node verdicts, and what no case took. */
export interface CoverageModel {
  readonly nodes: readonly [number, number];
  readonly branches: readonly [number, number];
  /** Nodes and branches together, as `wfx test --coverage` prints it. */
  readonly percent: number;
  /** The items not covered, in the flow's order. */
  readonly missed: readonly CoverageItem[];
  /** A node's verdict by its path (`loop/inner`); null for a node the version does not have. */
  node(path: string): NodeCoverage | null;
  /** The parts of a node's (its branches) taken and not taken. */
  branchesOf(path: string): { readonly taken: readonly string[]; readonly missed: readonly string[] };
  /** Whether an edge drawn in the body at `scope` was taken. */
  edgeTaken(edge: ModelEdge, scope: readonly string[]): boolean;
}

/** The path of node `id` in the body at `scope`. */
export function nodePath(scope: readonly string[], id: string): string {
  return [...scope, id].join('/');
}

/** The coverage `view` of a version whose nodes are `nodes`. */
export function coverageModel(nodes: Readonly<Record<string, FlowNode>>, view: FlowCoverageView): CoverageModel {
  const items = coverageItems(nodes);
  const covered = new Set(view.covered.map((c) => coverageKey(c.node, c.part)));
  const isCovered = (i: CoverageItem) => covered.has(coverageKey(i.node, i.part));
  const branches = new Map<string, { taken: string[]; missed: string[] }>();
  const counts = { nodes: [0, 0] as [number, number], branches: [0, 0] as [number, number] };
  for (const i of items) {
    const c = i.part === 'node' ? counts.nodes : counts.branches;
    c[1]++;
    if (isCovered(i)) c[0]++;
    if (i.part === 'node') continue;
    let b = branches.get(i.node);
    if (b === undefined) branches.set(i.node, (b = { taken: [], missed: [] }));
    (isCovered(i) ? b.taken : b.missed).push(i.part);
  }
  const known = new Set(items.filter((i) => i.part === 'node').map((i) => i.node));
  const reached = (path: string) => covered.has(coverageKey(path, 'node'));
  const all = counts.nodes[1] + counts.branches[1];
  return {
    ...counts,
    percent: all === 0 ? 100 : ((counts.nodes[0] + counts.branches[0]) * 100) / all,
    missed: items.filter((i) => !isCovered(i)),
    node(path) {
      if (!known.has(path)) return null;
      if (!reached(path)) return 'missed';
      return (branches.get(path)?.missed.length ?? 0) > 0 ? 'partial' : 'reached';
    },
    branchesOf: (path) => branches.get(path) ?? { taken: [], missed: [] },
    edgeTaken(edge, scope) {
      if (edge.boundary !== null) return reached(nodePath(scope, edge.boundary));
      const from = nodePath(scope, edge.from);
      if (edge.branch !== null) return covered.has(coverageKey(from, edge.branch));
      return reached(from) && reached(nodePath(scope, edge.to));
    },
  };
}

/** The node at `path` (`loop/inner`) of a version whose nodes are `nodes`; undefined when it has none. */
export function nodeAt(nodes: Readonly<Record<string, FlowNode>>, path: string): FlowNode | undefined {
  let here: Readonly<Record<string, FlowNode>> | undefined = nodes;
  let node: FlowNode | undefined;
  for (const id of path.split('/')) {
    node = here !== undefined && Object.hasOwn(here, id) ? here[id] : undefined;
    if (node === undefined) return undefined;
    here = 'nodes' in node ? (node.nodes as Readonly<Record<string, FlowNode>> | undefined) : undefined;
  }
  return node;
}

/** How a missed item reads: `Review not reached`, `Timeout not fired`, `Route: default → Manual not taken`. */
export function missedWords(item: CoverageItem, nodes: Readonly<Record<string, FlowNode>>): string {
  const named = (path: string) => nodeAt(nodes, path)?.name ?? path.split('/').at(-1)!;
  if (item.part === 'node')
    return `${named(item.node)} ${nodeAt(nodes, item.node)?.type === 'boundaryEvent' ? 'not fired' : 'not reached'}`;
  const scope = item.node.includes('/') ? item.node.slice(0, item.node.lastIndexOf('/') + 1) : '';
  return `${named(item.node)}: ${item.part}${item.to !== undefined ? ` → ${named(scope + item.to)}` : ''} not taken`;
}
