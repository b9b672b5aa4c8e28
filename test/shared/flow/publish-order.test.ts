import t from 'tap';
import { publishOrder } from '../../../src/shared/flow/publish-order.js';
import type { FlowDefinition, FlowNode } from '../../../src/shared/flow/types.js';

/** A processId per letter: `pid('a')`. */
const pid = (letter: string) => `${letter.repeat(8)}-0000-4000-8000-000000000000`;

const agent = (tools: string[]): Record<string, FlowNode> => ({
  start: { type: 'startEvent', next: 'agent' },
  agent: { type: 'callAgent', prompt: 'hi', tools: tools.map(pid), next: 'done' },
  done: { type: 'endEvent' },
});
const plain: Record<string, FlowNode> = {
  start: { type: 'startEvent', next: 'done' },
  done: { type: 'endEvent' },
};

/** A flow `letter` whose nodes are `nodes` (default: no agent). */
const flow = (letter: string, nodes = plain): FlowDefinition => ({ processId: pid(letter), name: letter, nodes });

/** The letters of `flows` in publish order. */
const order = (flows: ReadonlyArray<FlowDefinition | null>): string[] =>
  publishOrder(flows, (f) => f).map((f) => (f === null ? '-' : f.name));

t.test('without agents the given order is kept', async (t) => {
  t.same(order([flow('c'), flow('a'), flow('b')]), ['c', 'a', 'b']);
  t.same(order([]), []);
});

t.test("an agent's tools come before it, whatever the file order", async (t) => {
  t.same(order([flow('a', agent(['t', 'u'])), flow('t'), flow('u')]), ['t', 'u', 'a']);
  t.same(order([flow('a', agent(['u', 't'])), flow('t'), flow('u')]), ['u', 't', 'a'], "in the agent's tool order");
  t.same(order([flow('t'), flow('a', agent(['t']))]), ['t', 'a'], 'already in order: unchanged');
  t.same(
    order([flow('a', agent(['b'])), flow('b', agent(['c'])), flow('c')]),
    ['c', 'b', 'a'],
    'a tool that is an agent itself: its tools first',
  );
  t.same(
    order([flow('x'), flow('a', agent(['t'])), flow('y'), flow('t'), flow('z')]),
    ['x', 't', 'a', 'y', 'z'],
    'only the tool moves; the others keep their places',
  );
  t.same(
    order([flow('a', agent(['t'])), flow('b', agent(['t'])), flow('t')]),
    ['t', 'a', 'b'],
    'a tool two agents share comes once',
  );
});

t.test('agents in loop and subProcess bodies count too', async (t) => {
  const inLoop: Record<string, FlowNode> = {
    start: { type: 'startEvent', next: 'each' },
    each: { type: 'loopNode', collection: '{items}', nodes: agent(['t']), next: 'done' },
    done: { type: 'endEvent' },
  };
  const inSub: Record<string, FlowNode> = {
    start: { type: 'startEvent', next: 'sub' },
    sub: {
      type: 'subProcess',
      nodes: {
        s: { type: 'startEvent', next: 'deeper' },
        deeper: { type: 'loopNode', collection: '{items}', nodes: agent(['u']), next: 'e' },
        e: { type: 'endEvent' },
      },
      next: 'done',
    },
    done: { type: 'endEvent' },
  };
  t.same(order([flow('a', inLoop), flow('t')]), ['t', 'a'], 'a loop body');
  t.same(order([flow('b', inSub), flow('u')]), ['u', 'b'], 'a loop inside an embedded subProcess');
});

t.test('flows calling each other in a cycle keep the given order', async (t) => {
  t.same(order([flow('a', agent(['b'])), flow('b', agent(['a']))]), ['a', 'b']);
  t.same(order([flow('b', agent(['a'])), flow('a', agent(['b']))]), ['b', 'a']);
  t.same(
    order([flow('a', agent(['b'])), flow('b', agent(['c'])), flow('c', agent(['a']))]),
    ['a', 'b', 'c'],
    'a cycle of three',
  );
  t.same(
    order([flow('a', agent(['b'])), flow('b', agent(['a', 't'])), flow('t')]),
    ['t', 'a', 'b'],
    "a cycle's tools outside it still come first",
  );
  t.same(order([flow('a', agent(['a']))]), ['a'], 'a flow naming itself');
});

t.test('tools that are not among the files, and files that are no flow, are left where they are', async (t) => {
  t.same(order([flow('a', agent(['z'])), flow('b')]), ['a', 'b'], 'a tool published before, or not at all');
  t.same(order([null, flow('a', agent(['t'])), null, flow('t')]), ['-', 't', 'a', '-'], 'files that do not validate');
});

t.test('two files with one processId: the first is the one an agent waits for', async (t) => {
  const first = { ...flow('t'), name: 't1' };
  const second = { ...flow('t'), name: 't2' };
  t.same(order([flow('a', agent(['t'])), first, second]), ['t1', 'a', 't2']);
});

t.test('the items themselves come back, each once', async (t) => {
  const items = [flow('a', agent(['t'])), flow('t')].map((f, i) => ({ file: `${i}.yaml`, f }));
  const out = publishOrder(items, (x) => x.f);
  t.equal(out.length, 2);
  t.equal(out[0], items[1]);
  t.equal(out[1], items[0]);
});
