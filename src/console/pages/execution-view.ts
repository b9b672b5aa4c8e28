/* What the execution page derives from its state: the node a deep link names, and where it is. Pure. */
import type { InstanceView } from '../../shared/api/process.js';
import type { NodePath } from '../diagram/diagram.js';
import type { GraphModel, Opened } from '../diagram/graph-model.js';
import type { PanelTarget } from '../components/node-panel.js';

/** The `node` query parameter as a node path (`each.task`: node `task` in the body of `each`); null when absent or malformed. */
export function parseNodeParam(value: string | undefined): NodePath | null {
  if (!value || !/^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*$/.test(value)) return null;
  const parts = value.split('.');
  return { scope: parts.slice(0, -1), id: parts.at(-1)! };
}

/** A node path as the `node` query parameter. */
export function nodeParam(p: NodePath): string {
  return [...p.scope, p.id].join('.');
}

/** The node at `p`: its panel's target, the graph it is in, and the run its instances belong to; null if not drawn. */
export function locate(
  graph: GraphModel,
  opened: Opened,
  run: InstanceView | null,
  p: NodePath,
): { target: PanelTarget; graph: GraphModel; run: InstanceView | null } | null {
  let g = graph;
  let o = opened;
  let r = run;
  for (const id of p.scope) {
    const body = g.nodes.find((n) => n.id === id)?.body;
    const open = o[id];
    if (!body || !open) return null;
    g = body;
    r = open.run;
    o = open.opened;
  }
  const node = g.nodes.find((n) => n.id === p.id);
  if (node) return { target: { kind: 'node', node }, graph: g, run: r };
  for (const on of g.nodes) {
    const boundary = on.boundaries.find((b) => b.id === p.id);
    if (boundary) return { target: { kind: 'boundary', boundary, on }, graph: g, run: r };
  }
  return null;
}
