import t from 'tap';
import { buildGraph } from '../../src/console/diagram/graph-model.js';
import {
  absoluteBoxes,
  clipToShape,
  layoutGraph,
  SIZES,
  type Box,
  type Layout,
} from '../../src/console/diagram/layout.js';
import { BIG_ORDER, FLOW, ITERATION } from './flow-fixture.js';

const overlap = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const inside = (inner: Box, outer: Box) =>
  inner.x >= outer.x &&
  inner.y >= outer.y &&
  inner.x + inner.width <= outer.x + outer.width &&
  inner.y + inner.height <= outer.y + outer.height;

const OPENED = { lines: { run: ITERATION, opened: {} }, check: { run: null, opened: {} } };

t.test('every node is placed, within the drawing, left to right from the start', async (t) => {
  const layout = layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER, OPENED));
  const all = absoluteBoxes(layout);
  t.equal(all.filter((b) => b.depth === 0).length, 11, 'every node of the flow');
  t.equal(all.filter((b) => b.depth === 1).length, 6, 'and of the two opened bodies');
  for (const { node, box } of all) {
    t.ok([box.x, box.y, box.width, box.height].every(Number.isFinite), `${node.node.id} placed`);
    t.ok(
      box.x >= 0 && box.y >= 0 && box.x + box.width <= layout.width && box.y + box.height <= layout.height,
      `${node.node.id} in the drawing`,
    );
  }
  const x = (id: string) => all.find((b) => b.node.node.id === id)!.box.x;
  t.ok(
    x('start') < x('route') && x('route') < x('lines') && x('lines') < x('check') && x('check') < x('approve'),
    'ranked left to right',
  );
});

/** A layout and the layouts of the bodies opened in it, each in its own coordinates. */
function layouts(l: Layout): Layout[] {
  return [l, ...l.nodes.flatMap((n) => (n.body ? layouts(n.body) : []))];
}

t.test('no two nodes of a graph overlap, opened or not', async (t) => {
  for (const opened of [{}, OPENED]) {
    for (const level of layouts(layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER, opened)))) {
      const nodes = level.nodes;
      for (let i = 0; i < nodes.length; i++)
        for (let j = i + 1; j < nodes.length; j++)
          t.notOk(overlap(nodes[i]!.box, nodes[j]!.box), `${nodes[i]!.node.id} and ${nodes[j]!.node.id}`);
    }
  }
});

t.test('an opened container encloses its body; a closed one is a box of its own size', async (t) => {
  const layout = layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER, OPENED));
  for (const container of layout.nodes.filter((n) => n.body)) {
    const shape = container.shape;
    const body = absoluteBoxes(container.body!, container.bodyOrigin!);
    t.equal(body.length, 3, `${container.node.id}'s body`);
    for (const b of body) t.ok(inside(b.box, shape), `${b.node.node.id} inside ${container.node.id}`);
    t.ok(shape.height >= container.body!.height + SIZES.header, 'room for the title and the body');
  }
  const closed = layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER)).nodes.find((n) => n.node.id === 'lines')!;
  t.equal(closed.body, null);
  t.equal(closed.shape.height, SIZES.containerHeight);
});

t.test("a boundary event sits on its node's lower border; its edge leaves from it", async (t) => {
  const layout = layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER));
  const approve = layout.nodes.find((n) => n.node.id === 'approve')!;
  const [b] = approve.boundaries;
  t.equal(b!.cy, approve.shape.y + approve.shape.height, 'on the lower border');
  t.ok(b!.cx > approve.shape.x && b!.cx < approve.shape.x + approve.shape.width, 'within its width');
  const e = layout.edges.find((x) => x.edge.boundary === 'wait')!;
  t.same(e.points[0], { x: b!.cx, y: b!.cy + SIZES.boundaryRadius }, 'the edge starts at the boundary event');
  t.ok(e.label && e.label.text === 'timer 8s', 'labelled');
});

t.test("edges end on the shapes' outlines: a circle's rim, a diamond's sides", async (t) => {
  const layout = layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER));
  const start = layout.nodes.find((n) => n.node.id === 'start')!;
  const out = layout.edges.find((e) => e.edge.from === 'start')!;
  const c = { x: start.shape.x + start.shape.width / 2, y: start.shape.y + start.shape.height / 2 };
  t.ok(Math.abs(Math.hypot(out.points[0]!.x - c.x, out.points[0]!.y - c.y) - SIZES.event / 2) < 0.01, 'on the circle');
  t.same(clipToShape('gateway', { x: 0, y: 0 }, 10, 10, { x: 20, y: 0 }), { x: 10, y: 0 }, 'a diamond, straight on');
  t.same(clipToShape('task', { x: 0, y: 0 }, 50, 20, { x: 100, y: 100 }), { x: 20, y: 20 }, 'a box, its nearer side');
});

t.test('the same graph is laid out the same way every time', async (t) => {
  const a = layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER, OPENED));
  const b = layoutGraph(buildGraph(FLOW.nodes, BIG_ORDER, OPENED));
  t.same(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
  t.same(layoutGraph({ nodes: [], edges: [] }).nodes, [], 'an empty graph');
});
