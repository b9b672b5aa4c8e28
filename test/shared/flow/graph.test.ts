import t from 'tap';
import { FlowGraph } from '../../../src/shared/flow/graph.js';
import type { FlowNode } from '../../../src/shared/flow/types.js';
import { chainFlow } from '../../fixtures/big-flows.js';

const graphOf = (nodes: Record<string, unknown>) => new FlowGraph(nodes as Record<string, FlowNode>);

t.test('canReach: along connections and boundary events, not backwards, itself only on a cycle', async (t) => {
  const g = graphOf({
    start: { type: 'startEvent', next: 'fork' },
    fork: { type: 'parallelGateway', next: ['a', 'b'] },
    a: { type: 'task', next: 'join' },
    b: { type: 'userTask', next: 'join' },
    timer: { type: 'boundaryEvent', attachedTo: 'b', event: 'timer', duration: '1m', next: 'late' },
    late: { type: 'task', next: 'join' },
    join: { type: 'inclusiveGateway', next: 'again' },
    again: { type: 'ifElse', condition: '${x}', then: 'join', else: 'end' },
    end: { type: 'endEvent' },
  });
  t.ok(g.canReach('start', 'join'));
  t.ok(g.canReach('b', 'late'), 'through the boundary event attached to b');
  t.ok(g.canReach('timer', 'join'));
  t.notOk(g.canReach('a', 'late'), 'a does not lead to the boundary event of b');
  t.notOk(g.canReach('join', 'a'), 'not backwards');
  t.notOk(g.canReach('end', 'join'));
  t.ok(g.canReach('join', 'join'), 'a node on a cycle reaches itself');
  t.notOk(g.canReach('a', 'a'), 'a node on no cycle does not');
  t.notOk(g.canReach('ghost', 'join'), 'an unknown node reaches nothing');
  t.notOk(g.canReach('start', 'ghost'));
  t.same([...g.reachableFrom('fork')].sort(), ['a', 'again', 'b', 'end', 'join', 'late', 'timer']);
});

t.test('canReach over a long chain answers from every node to the far end', async (t) => {
  const { nodes } = chainFlow(20_000);
  const g = graphOf(nodes);
  let reaching = 0;
  for (const id of Object.keys(nodes)) if (g.canReach(id, 'end')) reaching++;
  t.equal(reaching, 20_001, 'every node but end itself');
  t.notOk(g.canReach('end', 't0'));
  t.equal(g.reachableFrom('start').size, 20_001);
});
