// What each node type decides, driven through the step in memory. Input nodes and user tasks
// are in answers.test.ts, catch and throw events in events.test.ts, work nodes in
// work.test.ts, domainTask in jobs.test.ts, timers and timer boundary events in timers.test.ts.
import t from 'tap';
import { STATE, STATUS, type Execution } from '../../../../src/daemon/state/state.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

const flow = (nodes: string) => `processId: AUTO
name: Nodes
nodes:
${nodes}`;

async function run(nodes: string, data: Record<string, unknown> = {}): Promise<{ m: MemoryStep; inst: Execution }> {
  const m = new MemoryStep();
  const pid = await m.publish(flow(nodes));
  const id = m.start(pid, data).answer.processInstanceId;
  return { m, inst: m.instance(id) };
}

/** The node ids an execution ran, in order. */
const trail = (inst: Execution) => Object.values(inst.nodes).map((n) => n.nodeId);

t.test('startEvent, task, setVariable, outputNode and endEvent complete at once, as node.ran', async (t) => {
  const { inst } = await run(
    `  start: { type: startEvent, next: work }
  work: { type: task, next: set }
  set: { type: setVariable, variables: { label: "order {id}" }, next: out }
  out: { type: outputNode, outputs: { label: "{label}" }, next: done }
  done: { type: endEvent }
`,
    { id: 7 },
  );
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(trail(inst), ['start', 'work', 'set', 'out', 'done']);
  t.equal(inst.variables.label, 'order 7');
  t.same(inst.output, { label: 'order 7' });
});

t.test('an endEvent that terminates ends the execution, cancelling what still waits', async (t) => {
  const { inst } = await run(`  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [ask, stop] }
  ask: { type: inputNode, inputType: textbox, next: done }
  stop: { type: endEvent, terminate: true }
  done: { type: endEvent }
`);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(Object.values(inst.nodes).find((n) => n.nodeId === 'ask')?.statusCd, STATUS.CANCELLED);
});

t.test('ifElse and exclusiveGateway take the branch their condition picks', async (t) => {
  const gates = `  start: { type: startEvent, next: check }
  check: { type: ifElse, condition: "\${amount > 100}", then: route, else: small }
  route:
    type: exclusiveGateway
    branches: [{ condition: "\${amount > 1000}", next: huge }]
    default: big
  huge: { type: setVariable, variables: { size: huge }, next: done }
  big: { type: setVariable, variables: { size: big }, next: done }
  small: { type: setVariable, variables: { size: small }, next: done }
  done: { type: endEvent }
`;
  for (const [amount, size] of [
    [5, 'small'],
    [500, 'big'],
    [5000, 'huge'],
  ] as const) {
    const { inst } = await run(gates, { amount });
    t.equal(inst.variables.size, size, `${amount}: ${size}`);
  }
});

t.test('a parallel split runs every branch; its join waits for all of them', async (t) => {
  const { m, inst } = await run(`  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [a, ask] }
  a: { type: setVariable, variables: { a: 1 }, next: join }
  ask: { type: inputNode, inputType: textbox, next: join }
  join: { type: parallelGateway, next: done }
  done: { type: endEvent }
`);
  t.equal(inst.stateCd, STATE.RUNNING, 'the join waits for the input');
  t.same(inst.joins.join, { 'a>next': 1 });
  const id = inst.processInstanceId;
  const r = m.run({ kind: 'answer', instanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x' } });
  t.same(typesOf(r.records), [
    'node.completed',
    'join.updated',
    'join.updated',
    'node.ran',
    'node.ran',
    'instance.finished',
  ]);
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test('an inclusive split takes every true branch; its join fires once no token can reach it', async (t) => {
  const { inst } = await run(
    `  start: { type: startEvent, next: split }
  split:
    type: inclusiveGateway
    branches:
      - { condition: "\${x}", next: a }
      - { condition: "\${y}", next: b }
  a: { type: setVariable, variables: { a: 1 }, next: join }
  b: { type: setVariable, variables: { b: 1 }, next: join }
  join: { type: inclusiveGateway, next: done }
  done: { type: endEvent }
`,
    { x: true, y: false },
  );
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(trail(inst), ['start', 'split', 'a', 'join', 'done']);
});

t.test('a subProcess runs its body as a child execution in the same step; its output comes back', async (t) => {
  const { m, inst } = await run(
    `  start: { type: startEvent, next: sub }
  sub:
    type: subProcess
    input: { n: "{n}" }
    output: [doubled]
    nodes:
      s: { type: startEvent, next: calc }
      calc: { type: setVariable, variables: { doubled: "{n}{n}" }, next: e }
      e: { type: endEvent }
  done: { type: endEvent }
`.replace('output: [doubled]', 'output: [doubled]\n    next: done'),
    { n: 4 },
  );
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(inst.variables.doubled, '44');
  const child = Object.values(m.state.instances).find((i) => i?.parentInstanceId === inst.processInstanceId);
  t.equal(child?.stateCd, STATE.COMPLETED, 'the child ran in the same step');
  t.same(child?.scope, ['sub']);
});

t.test('a loopNode runs its body once per item and collects one value per iteration', async (t) => {
  const { inst } = await run(
    `  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    collect: square
    nodes:
      s: { type: startEvent, next: calc }
      calc: { type: setVariable, variables: { square: "{item}" }, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`,
    { items: [3, 1, 2] },
  );
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(inst.variables.square, [3, 1, 2]);
});

t.test('a memoryAction writes memory right before its completion, in the same step', async (t) => {
  const m = new MemoryStep();
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: put }
  put: { type: memoryAction, action: store, namespace: values, key: "{k}", value: "{v}", next: get }
  get: { type: memoryAction, action: retrieve, namespace: values, key: "{k}", resultVariable: got, next: done }
  done: { type: endEvent }
`),
  );
  const r = m.start(pid, { k: 'a', v: 'one' });
  t.same(typesOf(r.records).slice(0, 4), ['instance.started', 'node.ran', 'memory.written', 'node.ran']);
  t.equal(m.instance(r.answer.processInstanceId).variables.got, 'one');
});

t.test('a callAgent asks a model for its first turn as work', async (t) => {
  const m = new MemoryStep();
  const tool = await m.publish(
    flow(`  start: { type: startEvent, next: done }
  done: { type: endEvent }
`).replace(
      'name: Nodes',
      'name: Lookup\ndescription: Looks up an order\ninputs: { type: object, required: [orderId], properties: { orderId: { type: string } } }',
    ),
  );
  const pid = await m.publish(
    flow(`  start: { type: startEvent, next: agent }
  agent: { type: callAgent, prompt: "Help with {orderId}", tools: [{ processId: ${tool}, name: lookup, description: Looks up }], next: done }
  done: { type: endEvent }
`),
  );
  const r = m.start(pid, { orderId: 'o1' });
  const work = r.effects.find((e) => e.kind === 'work');
  t.equal(work?.kind === 'work' && work.request.kind, 'ai');
  t.equal(m.node(r.answer.processInstanceId, 'agent').statusCd, STATUS.ACTIVE);
});
