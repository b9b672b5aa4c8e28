import t from 'tap';
import { branchesTaken, buildGraph, type GraphModel } from '../../src/console/diagram/graph-model.js';
import { BIG_ORDER, FLOW, ITERATION, ni, run } from './flow-fixture.js';

const node = (g: GraphModel, id: string) => g.nodes.find((n) => n.id === id)!;
const edge = (g: GraphModel, from: string, to: string) => g.edges.find((e) => e.from === from && e.to === to)!;

t.test('a definition alone: every node drawn by its shape, no states, nothing taken', async (t) => {
  const g = buildGraph(FLOW.nodes, null);
  t.same(
    g.nodes.map((n) => [n.id, n.shape]),
    [
      ['start', 'event'],
      ['route', 'gateway'],
      ['small', 'task'],
      ['lines', 'container'],
      ['check', 'container'],
      ['approve', 'task'],
      ['decide', 'gateway'],
      ['escalate', 'task'],
      ['late', 'event'],
      ['failed', 'event'],
      ['done', 'event'],
    ],
    'the boundary event is not a node of its own',
  );
  t.ok(
    g.nodes.every((n) => n.state === null && n.instances.length === 0),
    'no states',
  );
  t.ok(
    g.edges.every((e) => !e.taken),
    'no edge taken',
  );
  t.same(
    node(g, 'approve').boundaries.map((b) => [b.id, b.event, b.fired]),
    [['wait', 'timer', false]],
    'on its node',
  );
  t.equal(node(g, 'lines').body, null, 'a closed container has no body drawn');
});

t.test('edges carry what they say: a condition, default, then, else, error, a boundary event', async (t) => {
  const g = buildGraph(FLOW.nodes, null);
  t.equal(edge(g, 'route', 'lines').label, 'total > 100', 'the condition without ${}');
  t.equal(edge(g, 'route', 'small').label, 'default');
  t.equal(edge(g, 'decide', 'done').label, 'then');
  t.equal(edge(g, 'decide', 'failed').label, 'else');
  t.match(edge(g, 'check', 'failed'), { kind: 'errorFlow', label: 'error' });
  t.match(edge(g, 'approve', 'escalate'), { kind: 'boundary', boundary: 'wait', label: 'timer 8s' });
  t.equal(edge(g, 'start', 'route').label, null, 'a plain next says nothing');
});

t.test(
  'an execution: states, the path taken, the branch the gateway took, loop counts, the boundary that fired',
  async (t) => {
    const g = buildGraph(FLOW.nodes, BIG_ORDER);
    t.equal(node(g, 'route').state, 'completed');
    t.equal(node(g, 'approve').state, 'cancelled', 'the boundary event cancelled its node');
    t.equal(node(g, 'small').state, null, 'not reached');
    t.equal(node(g, 'done').state, null);
    t.equal(node(g, 'lines').iterations, 3, 'one iteration per child');
    t.same(node(g, 'lines').children, ['it-1', 'it-2', 'it-3']);
    t.equal(node(g, 'check').iterations, null, 'a subprocess has no iterations');
    t.same(branchesTaken(g, 'route'), ['total > 100'], 'the branch taken, not the default');
    t.same(
      g.edges.filter((e) => e.taken).map((e) => `${e.boundary ?? e.from}>${e.to}`),
      ['start>route', 'route>lines', 'lines>check', 'check>approve', 'wait>escalate', 'escalate>late'],
      'the path taken, edge by edge',
    );
    t.notOk(edge(g, 'approve', 'decide').taken, 'a cancelled node does not go on');
    t.notOk(edge(g, 'check', 'failed').taken, 'no error, no errorFlow');
    const boundary = node(g, 'approve').boundaries[0]!;
    t.ok(boundary.fired, 'the boundary event fired');
    t.equal(boundary.state, 'completed');
  },
);

t.test('a failed node goes along its errorFlow; a node run twice counts its visits', async (t) => {
  const g = buildGraph(
    FLOW.nodes,
    run([
      ni('start', 2, 0, 0),
      ni('route', 2, 0, 0),
      ni('lines', 2, 0, 1),
      ni('check', 3, 1, 2),
      ni('failed', 2, 2, 2),
    ]),
  );
  t.equal(node(g, 'check').state, 'failed');
  t.ok(edge(g, 'check', 'failed').taken, 'errorFlow taken');
  t.notOk(edge(g, 'check', 'approve').taken, 'next not taken');

  const twice = buildGraph(FLOW.nodes, run([ni('approve', 2, 0, 1), ni('approve', 1, 5, null)]));
  t.equal(node(twice, 'approve').instances.length, 2);
  t.equal(node(twice, 'approve').state, 'waiting', "the latest instance's state");
});

t.test('a waiting collection loop says how many items it iterates', async (t) => {
  const waiting = ni('lines', 1, 0, null, {
    childInstanceIds: ['it-1'],
    wait: { kind: 'loop', dueAt: null, state: { items: [1, 2, 3, 4], started: 1, done: 0, running: 1, collected: [] } },
  });
  const g = buildGraph(FLOW.nodes, run([waiting]));
  t.equal(node(g, 'lines').iterations, 1);
  t.equal(node(g, 'lines').loopItems, 4);
});

t.test('an opened container draws its body with the states of the run it shows', async (t) => {
  const g = buildGraph(FLOW.nodes, BIG_ORDER, {
    lines: { run: ITERATION, opened: {} },
    check: { run: null, opened: {} },
  });
  const body = node(g, 'lines').body!;
  t.same(
    body.nodes.map((n) => [n.id, n.state]),
    [
      ['s', 'completed'],
      ['calc', 'active'],
      ['e', null],
    ],
  );
  t.ok(edge(body, 's', 'calc').taken);
  const plain = node(g, 'check').body!;
  t.ok(
    plain.nodes.every((n) => n.state === null),
    'a body whose run is not read shows no states',
  );
  t.equal(node(g, 'small').body, null, 'only containers open');
});
