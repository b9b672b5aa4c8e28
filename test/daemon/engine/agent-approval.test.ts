import t, { type Test } from 'tap';
import { waitingTasks } from '../../../src/daemon/engine/tasks.js';
import { STATE, type AgentState, type Execution } from '../../../src/daemon/state/state.js';
import { ended, engineHarness } from '../../helpers/engine.js';
import { FakeAiRunner, saveProvider, type FakeTurn } from '../../helpers/fake-ai.js';

// Issue #89: `approve: true` on a flow tool: each call waits as a task on the agent's node;
// COMPLETE starts the flow (with the arguments as the person edited them), CANCEL is a refusal
// the model reads. Other tools of the same turn wait for the approval too.

const REFUND = '22222222-2222-4222-8222-222222222222';
const LOOKUP = '11111111-1111-4111-8111-111111111111';
const flow = (processId: string, name: string) => `processId: ${processId}
name: ${name}
inputs: { type: object, required: [amount], properties: { amount: { type: number, maximum: 500 } } }
nodes:
  start: { type: startEvent, next: out }
  out: { type: outputNode, outputs: { done: "{amount}" }, next: done }
  done: { type: endEvent }
`;
const AGENT = `processId: AUTO
name: Refunds
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    prompt: Refund the customer.
    tools:
      - { processId: ${REFUND}, approve: true }
      - ${LOOKUP}
    next: done
  done: { type: endEvent }
`;

const agentOf = (inst: Execution): AgentState => Object.values(inst.nodes).find((n) => n.nodeId === 'agent')!.agent!;

async function setup(t: Test, turns: FakeTurn[]) {
  const ai = new FakeAiRunner((_call, n) => turns[n - 1] ?? { text: 'final answer' });
  const h = await engineHarness(t, undefined, undefined, { ai });
  await saveProvider(h.store, 'default');
  await h.publish(flow(REFUND, 'Refund'));
  await h.publish(flow(LOOKUP, 'Check'));
  const pid = await h.publish(AGENT);
  const id = (await h.start(pid, {})).processInstanceId;
  await h.waitFor((e) => e.processInstanceId === id && e.type === 'NODE_WAITING');
  return { h, ai, id };
}

t.test("COMPLETE with edited arguments starts the flow with them; the turn's other tool waited", async (t) => {
  const { h, ai, id } = await setup(t, [
    {
      text: 'The customer was charged twice.',
      toolCalls: [
        { name: 'refund', arguments: { amount: 400 }, id: 'r1' },
        { name: 'check', arguments: { amount: 1 }, id: 'k1' },
      ],
    },
  ]);
  const { items } = await waitingTasks(h.store.state, h.engine.executions, { organization: null, limit: 10 });
  t.equal(items.length, 1);
  t.match(items[0], {
    nodeId: 'agent',
    nodeType: 'callAgent',
    approval: {
      callId: 'r1',
      tool: 'refund',
      arguments: { amount: 400 },
      reasoning: 'The customer was charged twice.',
      processId: REFUND,
    },
  });
  t.equal(
    Object.values((await h.get(id)).nodes).flatMap((n) => n.children ?? []).length,
    0,
    'nothing started before the approval',
  );
  await t.rejects(
    h.engine.submitTask({
      organization: 'default',
      processInstanceId: id,
      nodeId: 'agent',
      action: 'COMPLETE',
      data: { arguments: 'nope' },
    }),
    { code: 'VALIDATION_ERROR' },
  );
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: id,
    nodeId: 'agent',
    action: 'COMPLETE',
    data: { arguments: '{"amount": 450}' },
  });
  const inst = await ended(h, id);
  t.equal(inst.stateCd, STATE.COMPLETED);
  const agent = agentOf(inst);
  t.same(
    agent.calls.map((c) => [c.id, c.approval ?? null, JSON.parse(c.arguments) as unknown, c.ok]),
    [
      ['r1', 'approved', { amount: 450 }, true],
      ['k1', null, { amount: 1 }, true],
    ],
  );
  t.same(
    ai.calls[1]!.messages.filter((m) => m.role === 'tool').map((m) => [m.name, JSON.parse(m.content) as unknown]),
    [
      ['refund', { done: 450 }],
      ['check', { done: 1 }],
    ],
  );
});

t.test('CANCEL is a refusal the model reads; with a reason, the reason too', async (t) => {
  const { h, ai, id } = await setup(t, [{ toolCalls: [{ name: 'refund', arguments: { amount: 10 }, id: 'r1' }] }]);
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: id,
    nodeId: 'agent',
    action: 'CANCEL',
    data: { reason: 'not without a receipt' },
  });
  const inst = await ended(h, id);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(JSON.parse(agentOf(inst).messages.find((m) => m.role === 'tool')!.content), {
    error: 'a person refused this call: not without a receipt',
  });
  t.equal(ai.calls.length, 2, 'the model went on');
  t.equal(Object.values(inst.nodes).flatMap((n) => n.children ?? []).length, 0, 'no flow ran');
});
