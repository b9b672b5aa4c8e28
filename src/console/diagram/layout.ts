/*
 * Where each node, boundary event, edge and label of a graph goes: dagre ranks and orders the
 * nodes left to right; an opened container is laid out from the inside out (its body first, then
 * the container sized to hold it), so a body never spills out of its box. Pure: no DOM (text
 * widths are estimated from character counts).
 */
import { graphlib, layout as dagreLayout } from '@dagrejs/dagre';
import type { GraphModel, ModelBoundary, ModelEdge, ModelNode, Shape } from './graph-model.js';

export interface Point {
  readonly x: number;
  readonly y: number;
}

/** A rectangle by its top-left corner. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A boundary event's circle, centred on its node's lower border. */
export interface PlacedBoundary {
  readonly boundary: ModelBoundary;
  readonly cx: number;
  readonly cy: number;
}

/** A node placed. */
export interface PlacedNode {
  readonly node: ModelNode;
  /** The room it takes (its shape and its label). */
  readonly box: Box;
  /** The shape drawn (a circle's or diamond's bounding square; a task's or container's box). */
  readonly shape: Box;
  /** An opened container's body, its coordinates relative to `bodyOrigin`. */
  readonly body: Layout | null;
  readonly bodyOrigin: Point | null;
  readonly boundaries: readonly PlacedBoundary[];
}

/** An edge placed: its polyline and its label's centre. */
export interface PlacedEdge {
  readonly edge: ModelEdge;
  readonly points: readonly Point[];
  readonly label: { readonly x: number; readonly y: number; readonly text: string } | null;
}

/** A graph laid out, in its own coordinates (0,0 at its top-left). */
export interface Layout {
  readonly width: number;
  readonly height: number;
  readonly nodes: readonly PlacedNode[];
  readonly edges: readonly PlacedEdge[];
}

/** Sizes the drawing uses (diagram.tsx draws with the same). */
export const SIZES = {
  event: 36,
  gateway: 44,
  taskHeight: 56,
  containerHeight: 64,
  /** Space for a line of label text under a circle or a diamond. */
  labelLine: 18,
  /** A container's title bar, and its inner padding. */
  header: 34,
  padding: 16,
  boundaryRadius: 11,
  edgeLabelHeight: 18,
  /** Estimated width of one character of 12px text. */
  charWidth: 7,
} as const;

/** Text longer than `max` characters, cut with an ellipsis (the full text is in the node's title). Pure. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const textWidth = (text: string) => text.length * SIZES.charWidth;
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Most characters of a node's name shown, by shape. */
export const NAME_CHARS: Record<Shape, number> = { event: 20, gateway: 20, task: 26, container: 28 };
/** Most characters of an edge's label shown. */
export const EDGE_LABEL_CHARS = 28;

/** The room a node takes and the shape in it, before placing. */
function measure(
  node: ModelNode,
  body: Layout | null,
): { width: number; height: number; shapeW: number; shapeH: number } {
  const name = clip(node.name, NAME_CHARS[node.shape]);
  switch (node.shape) {
    case 'event':
    case 'gateway': {
      const s = node.shape === 'event' ? SIZES.event : SIZES.gateway;
      // The label hangs under the shape; as much room above keeps the shape at the centre, where edges meet it.
      return { width: Math.max(s, textWidth(name)), height: s + 2 * SIZES.labelLine, shapeW: s, shapeH: s };
    }
    case 'task': {
      const w = clamp(textWidth(name) + 24, 120, 220);
      return { width: w, height: SIZES.taskHeight, shapeW: w, shapeH: SIZES.taskHeight };
    }
    case 'container': {
      const titleW = clamp(textWidth(name) + 84, 170, 290);
      if (!body) return { width: titleW, height: SIZES.containerHeight, shapeW: titleW, shapeH: SIZES.containerHeight };
      const w = Math.max(titleW, body.width + 2 * SIZES.padding);
      const h = body.height + SIZES.header + SIZES.padding;
      return { width: w, height: h, shapeW: w, shapeH: h };
    }
  }
}

/** Where the ray from `c` toward `p` leaves a shape of `shape` with half-sizes hw, hh centred on `c`. Pure. */
export function clipToShape(shape: Shape, c: Point, hw: number, hh: number, p: Point): Point {
  const dx = p.x - c.x;
  const dy = p.y - c.y;
  if (dx === 0 && dy === 0) return c;
  let t: number;
  if (shape === 'event') t = hw / Math.hypot(dx, dy);
  else if (shape === 'gateway') t = hw / (Math.abs(dx) + Math.abs(dy));
  else t = Math.min(dx === 0 ? Infinity : hw / Math.abs(dx), dy === 0 ? Infinity : hh / Math.abs(dy));
  return t >= 1 ? p : { x: c.x + dx * t, y: c.y + dy * t };
}

/** Layout of an empty graph. */
const EMPTY: Layout = { width: 2 * SIZES.padding, height: 2 * SIZES.padding, nodes: [], edges: [] };

/**
 * Lays out `graph` left to right: every node placed without overlapping another, every opened
 * container holding its body's layout, boundary events on their node's lower border, edges as
 * polylines meeting each shape's outline, labels centred on their edge. Pure and deterministic.
 */
export function layoutGraph(graph: GraphModel): Layout {
  if (graph.nodes.length === 0) return EMPTY;
  const g = new graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'LR', nodesep: 32, ranksep: 36, edgesep: 16, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const bodies = new Map<string, Layout | null>();
  const sizes = new Map<string, ReturnType<typeof measure>>();
  for (const node of graph.nodes) {
    const body = node.body ? layoutGraph(node.body) : null;
    const size = measure(node, body);
    bodies.set(node.id, body);
    sizes.set(node.id, size);
    g.setNode(node.id, { width: size.width, height: size.height });
  }
  graph.edges.forEach((edge, i) => {
    const text = edge.label === null ? null : clip(edge.label, EDGE_LABEL_CHARS);
    g.setEdge(
      edge.from,
      edge.to,
      text === null
        ? { minlen: 1 }
        : { minlen: 1, width: textWidth(text) + 10, height: SIZES.edgeLabelHeight, labelpos: 'c' },
      String(i),
    );
  });
  dagreLayout(g);

  const nodes: PlacedNode[] = graph.nodes.map((node) => {
    const p = g.node(node.id);
    const size = sizes.get(node.id)!;
    const box = { x: p.x - size.width / 2, y: p.y - size.height / 2, width: size.width, height: size.height };
    const shape = { x: p.x - size.shapeW / 2, y: p.y - size.shapeH / 2, width: size.shapeW, height: size.shapeH };
    const body = bodies.get(node.id) ?? null;
    const bottom = shape.y + shape.height;
    // Boundary events sit along the lower border from the right, a circle and a gap apart.
    const step = 2 * SIZES.boundaryRadius + 8;
    const right = shape.x + shape.width - (node.shape === 'task' || node.shape === 'container' ? 20 : shape.width / 2);
    return {
      node,
      box,
      shape,
      body,
      bodyOrigin: body ? { x: shape.x + (shape.width - body.width) / 2, y: shape.y + SIZES.header } : null,
      boundaries: node.boundaries.map((boundary, i) => ({ boundary, cx: right - i * step, cy: bottom })),
    };
  });
  const placed = new Map(nodes.map((n) => [n.node.id, n]));

  const edges: PlacedEdge[] = graph.edges.map((edge, i) => {
    const e = g.edge({ v: edge.from, w: edge.to, name: String(i) }) as {
      points?: Point[];
      x?: number;
      y?: number;
    };
    const from = placed.get(edge.from)!;
    const to = placed.get(edge.to)!;
    const raw = e.points && e.points.length >= 2 ? e.points : [centre(from.shape), centre(to.shape)];
    const points = raw.slice();
    const start = edge.boundary === null ? undefined : from.boundaries.find((b) => b.boundary.id === edge.boundary);
    if (start) points[0] = { x: start.cx, y: start.cy + SIZES.boundaryRadius };
    else points[0] = meet(from, points[1]!);
    points[points.length - 1] = meet(to, points[points.length - 2]!);
    const text = edge.label === null ? null : clip(edge.label, EDGE_LABEL_CHARS);
    return {
      edge,
      points,
      label: text === null || e.x === undefined || e.y === undefined ? null : { x: e.x, y: e.y, text },
    };
  });
  const size = g.graph();
  return { width: size.width ?? 0, height: size.height ?? 0, nodes, edges };
}

function centre(b: Box): Point {
  return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
}

/** Where an edge toward `toward` meets node `n`'s outline. */
function meet(n: PlacedNode, toward: Point): Point {
  return clipToShape(n.node.shape, centre(n.shape), n.shape.width / 2, n.shape.height / 2, toward);
}

/** Every node of a layout with its box in the outer layout's coordinates, bodies included (depth-first). Pure. */
export function absoluteBoxes(
  layout: Layout,
  origin: Point = { x: 0, y: 0 },
): { node: PlacedNode; box: Box; depth: number }[] {
  const out: { node: PlacedNode; box: Box; depth: number }[] = [];
  const walk = (l: Layout, o: Point, depth: number) => {
    for (const n of l.nodes) {
      out.push({ node: n, box: { ...n.box, x: n.box.x + o.x, y: n.box.y + o.y }, depth });
      if (n.body && n.bodyOrigin) walk(n.body, { x: o.x + n.bodyOrigin.x, y: o.y + n.bodyOrigin.y }, depth + 1);
    }
  };
  walk(layout, origin, 0);
  return out;
}
