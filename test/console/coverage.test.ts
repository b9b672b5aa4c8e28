import t from 'tap';
import { buildGraph } from '../../src/console/diagram/graph-model.js';
import { coverageModel, missedWords, nodeAt } from '../../src/console/model/coverage.js';
import { coverageItems } from '../../src/shared/flow/coverage-items.js';
import { FLOW } from './flow-fixture.js';

/** A run of FLOW's tests that took the big branch, priced the lines, and was approved in time. */
const VIEW = {
  processId: FLOW.processId,
  version: '3',
  file: 'flows/demo.yaml',
  measuredAt: '2026-01-01T12:00:00.000Z',
  cases: { passed: 2, failed: 0 },
  covered: [
    'start',
    'route',
    'lines',
    'lines/s',
    'lines/calc',
    'lines/e',
    'check',
    'check/s2',
    'check/look',
    'check/e2',
    'approve',
    'decide',
    'done',
  ]
    .map((node) => ({ node, part: 'node' }))
    .concat([
      { node: 'route', part: 'branch 1' },
      { node: 'lines', part: 'loop entered' },
      { node: 'decide', part: 'then' },
    ]),
};

t.test("the items: every node, its body's by path, and each branch with where it goes", async (t) => {
  const items = coverageItems(FLOW.nodes);
  t.same(
    items.filter((i) => i.part !== 'node').map((i) => `${i.node} ${i.part} → ${i.to ?? ''}`),
    [
      'route branch 1 → lines',
      'route default → small',
      'lines loop entered → ',
      'lines loop skipped → ',
      'check errorFlow → failed',
      'decide then → done',
      'decide else → failed',
    ],
  );
  t.ok(
    items.some((i) => i.node === 'check/look' && i.part === 'node'),
    "an embedded subprocess's body counts",
  );
  t.ok(
    items.some((i) => i.node === 'wait' && i.part === 'node'),
    'a boundary event is a node to reach',
  );
});

t.test('the model: counts, verdicts per node, edges taken, in bodies too', async (t) => {
  const m = coverageModel(FLOW.nodes, VIEW);
  t.same(
    [m.nodes, m.branches],
    [
      [13, 18],
      [3, 7],
    ],
  );
  t.equal(m.percent.toFixed(1), '64.0', 'nodes and branches together: 16 of 25');
  t.equal(m.node('route'), 'partial', 'reached, its default not taken');
  t.same(m.branchesOf('route'), { taken: ['branch 1'], missed: ['default'] });
  t.equal(m.node('small'), 'missed');
  t.equal(m.node('lines/calc'), 'reached');
  t.equal(m.node('approve'), 'reached', 'no branch of its own: its boundary event is a node');
  t.equal(m.node('wait'), 'missed');
  t.equal(m.node('nowhere'), null, 'a node the version does not have');

  const g = buildGraph(FLOW.nodes, null);
  const edge = (from: string, to: string) => g.edges.find((e) => e.from === from && e.to === to)!;
  t.equal(m.edgeTaken(edge('route', 'lines'), []), true, 'a branch taken');
  t.equal(m.edgeTaken(edge('route', 'small'), []), false, 'the default not taken');
  t.equal(m.edgeTaken(edge('start', 'route'), []), true, 'a plain next between two nodes reached');
  t.equal(m.edgeTaken(edge('small', 'done'), []), false, 'one from a node not reached');
  t.equal(m.edgeTaken(edge('approve', 'escalate'), []), false, 'a boundary event that never fired');
  t.equal(m.edgeTaken(edge('check', 'failed'), []), false, 'an errorFlow not taken');
  const body = buildGraph(FLOW.nodes, null, { lines: { run: null, opened: {} } });
  const inner = body.nodes.find((n) => n.id === 'lines')!.body!.edges.find((e) => e.from === 'calc')!;
  t.equal(m.edgeTaken(inner, ['lines']), true, "a body's edge, by its path");
});

t.test('what no case took, in words, named as the diagram names nodes', async (t) => {
  const m = coverageModel(FLOW.nodes, VIEW);
  t.same(
    m.missed.map((i) => missedWords(i, FLOW.nodes)),
    [
      'Big order?: default → Mark small not taken',
      'Mark small not reached',
      'Price each line: loop skipped not taken',
      'Check stock: errorFlow → Failed not taken',
      'Too slow not fired',
      'decide: else → Failed not taken',
      'Escalate not reached',
      'Escalated not reached',
      'Failed not reached',
    ],
  );
  t.equal(nodeAt(FLOW.nodes, 'check/look')?.type, 'setVariable');
  t.equal(nodeAt(FLOW.nodes, 'check/nowhere'), undefined);
  t.equal(nodeAt(FLOW.nodes, 'small/inner'), undefined, 'a node with no body has nothing under it');
});
