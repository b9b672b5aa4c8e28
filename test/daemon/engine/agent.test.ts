import t, { type Test } from 'tap';
import { waitingTasks } from '../../../src/daemon/engine/tasks.js';
import { logEntries } from '../../../src/daemon/state/log-line.js';
import { STATE, STATUS, type AgentState, type Execution } from '../../../src/daemon/state/state.js';
import { crashImage, ended, engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { FakeAiRunner, saveProvider, type FakeTurn } from '../../helpers/fake-ai.js';

const LOOKUP = '11111111-1111-4111-8111-111111111111';
const REFUND = '22222222-2222-4222-8222-222222222222';
const APPROVE = '33333333-3333-4333-8333-333333333333';

/** A tool: finds an order (output {status, orderId, verbose}); `verbose` has a default. */
const LOOKUP_FLOW = `processId: ${LOOKUP}
name: Look up order
description: Finds an order by its id
inputs:
  type: object
  required: [orderId]
  additionalProperties: false
  properties:
    orderId: { type: string, description: the order id }
    verbose: { type: boolean, default: false }
nodes:
  start: { type: startEvent, next: out }
  out: { type: outputNode, outputs: { status: shipped, orderId: "{orderId}", verbose: "{verbose}" }, next: done }
  done: { type: endEvent }
`;
/** A tool that fails (NO_BRANCH_MATCHED) unless the amount is over 1000. */
const REFUND_FLOW = `processId: ${REFUND}
name: Refund
inputs: { type: object, required: [amount], properties: { amount: { type: number } } }
nodes:
  start: { type: startEvent, next: check }
  check:
    type: exclusiveGateway
    branches: [{ condition: "\${amount > 1000}", next: done }]
  done: { type: endEvent }
`;
/** A tool that asks a person (an input node) before it completes. */
const APPROVE_FLOW = `processId: ${APPROVE}
name: Ask a supervisor
description: Asks a person to approve
inputs: { type: object, properties: { reason: { type: string } } }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, formTitle: "Approve: {reason}", next: out }
  out: { type: outputNode, outputs: { approved: "{inputValue}" }, next: done }
  done: { type: endEvent }
`;

const AGENT = (props = '') => `processId: AUTO
name: Support agent
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    systemPrompt: You help customers.
    prompt: "Help with order {orderId}"
    tools:
      - ${LOOKUP}
      - { processId: ${REFUND}, name: refund, description: Refunds an amount }
      - ${APPROVE}
${props
  .trim()
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => `    ${l}`)
  .join('\n')}
    next: done
  done: { type: endEvent }
`;

/** An engine with `ai` as its model runner, the tool flows published, a default provider. */
async function agentHarness(t: Test, ai: FakeAiRunner, dir?: string, h?: EngineHarness): Promise<EngineHarness> {
  const harness = await engineHarness(t, dir, h?.clock, { ai });
  if (dir) return harness;
  await saveProvider(harness.store, 'default');
  for (const flow of [LOOKUP_FLOW, REFUND_FLOW, APPROVE_FLOW]) await harness.publish(flow);
  return harness;
}

/** Scripted turns in order; past the end, a final answer. */
function turns(...list: FakeTurn[]): FakeAiRunner {
  return new FakeAiRunner((_call, n) => list[n - 1] ?? { text: 'final answer' });
}

const agentOf = (inst: Execution): AgentState => Object.values(inst.nodes).find((n) => n.nodeId === 'agent')!.agent!;
const messagesOf = (inst: Execution) => logEntries(inst).map((e) => e.message);

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

t.test('a tool call starts a child execution of the tool flow; its output goes back to the model', async (t) => {
  const ai = turns(
    {
      toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'A1' } }],
      usage: { inputTokens: 30, outputTokens: 8 },
    },
    { text: 'Order A1 has shipped.', usage: { inputTokens: 50, outputTokens: 6 } },
  );
  const h = await agentHarness(t, ai);
  const pid = await h.publish(AGENT());
  const inst = await ended(h, (await h.start(pid, { orderId: 'A1' })).processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);

  t.same(
    ai.calls[0]!.tools!.map((x) => [x.name, x.description]),
    [
      ['look_up_order', 'Finds an order by its id'],
      ['refund', 'Refunds an amount'],
      ['ask_a_supervisor', 'Asks a person to approve'],
    ],
    'tools named and described from their flows',
  );
  t.match(ai.calls[0]!.tools![0]!.parameters, { required: ['orderId'] }, "a tool's parameters are its flow's inputs");
  t.same(ai.calls[0]!.messages, [
    { role: 'system', content: 'You help customers.' },
    { role: 'user', content: 'Help with order A1' },
  ]);
  const second = ai.calls[1]!.messages;
  t.equal(second.length, 4, 'the second turn sends the answer with its call and the tool result');
  t.same(second[2], {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'call_1_1', name: 'look_up_order', arguments: '{"orderId":"A1"}' }],
  });
  t.same(second[3], {
    role: 'tool',
    toolCallId: 'call_1_1',
    name: 'look_up_order',
    content: '{"status":"shipped","orderId":"A1","verbose":false}',
  });

  const result = inst.variables.agent as Record<string, unknown>;
  const childId = (result.toolCalls as Array<{ childInstanceId: string }>)[0]!.childInstanceId;
  t.same(result, {
    text: 'Order A1 has shipped.',
    model: 'fake-model',
    finishReason: 'stop',
    steps: 2,
    toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'A1' }, childInstanceId: childId, ok: true }],
    usage: { inputTokens: 80, outputTokens: 14 },
  });
  t.same(inst.usage, { inputTokens: 80, outputTokens: 14, calls: 2 }, "each turn counts in the execution's usage");
  const child = await h.get(childId);
  t.equal(child.parentInstanceId, inst.processInstanceId);
  t.equal(child.toolCallId, 'call_1_1');
  t.equal(child.processId, LOOKUP);
  t.match(child.variables, { orderId: 'A1', verbose: false }, 'the validated arguments, defaults filled in');

  const agent = agentOf(inst);
  t.equal(agent.steps, 2);
  t.equal(agent.messages.length, 5, 'the whole conversation, answer included, is the node state');
  t.same(agent.calls, [
    {
      id: 'call_1_1',
      name: 'look_up_order',
      arguments: '{"orderId":"A1"}',
      processId: LOOKUP,
      step: 1,
      childInstanceId: childId,
      ok: true,
    },
  ]);
  const log = messagesOf(inst);
  for (const line of [
    'turn 1: asks for tool look_up_order',
    `tool look_up_order (call_1_1): runs as execution ${childId}`,
    `tool look_up_order (call_1_1): done in ${childId}`,
    'turn 2: answered',
  ])
    t.ok(log.includes(line), line);
});

t.test('two tool calls of one answer run at once; both results go back before the next turn', async (t) => {
  const ai = turns({
    toolCalls: [
      { name: 'ask_a_supervisor', arguments: { reason: 'first' } },
      { name: 'ask_a_supervisor', arguments: { reason: 'second' } },
    ],
  });
  const h = await agentHarness(t, ai);
  const started = await h.start(await h.publish(AGENT()), { orderId: 'A2' });
  await h.waitFor((e) => e.processInstanceId === started.processInstanceId && e.type === 'NODE_WAITING');
  const waiting = (await waitingTasks(h.store.state, h.engine.executions, { organization: null, limit: 10 })).items;
  t.equal(waiting.length, 2, 'both children started and wait at once');
  t.same(
    waiting.map((w) => w.agent),
    [0, 1].map(() => ({
      processInstanceId: started.processInstanceId,
      nodeId: 'agent',
      nodeName: 'agent',
      tool: 'ask_a_supervisor',
    })),
    'each task names the agent that waits for it',
  );
  t.same(waiting.map((w) => w.formTitle).sort(), ['Approve: first', 'Approve: second']);
  for (const [i, w] of waiting.entries()) {
    await h.engine.submitTask({
      organization: 'default',
      processInstanceId: w.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: `yes ${i}` },
    });
    if (i === 0) t.equal(ai.calls.length, 1, 'no turn while a call still runs');
  }
  const inst = await ended(h, started.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(ai.calls.length, 2);
  t.same(
    ai.calls[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content),
    ['{"approved":"yes 0"}', '{"approved":"yes 1"}'],
  );
});

t.test('parallelToolCalls false: the calls of one answer run one after another', async (t) => {
  const ai = turns({
    toolCalls: [
      { name: 'ask_a_supervisor', arguments: { reason: 'first' } },
      { name: 'look_up_order', arguments: { orderId: 'B' } },
    ],
  });
  const h = await agentHarness(t, ai);
  const started = await h.start(await h.publish(AGENT('parallelToolCalls: false')), { orderId: 'A3' });
  await h.waitFor((e) => e.processInstanceId === started.processInstanceId && e.type === 'NODE_WAITING');
  t.equal(ai.calls[0]!.parallelToolCalls, false, 'the provider is asked for one call at a time');
  let inst = await h.get(started.processInstanceId);
  t.same(
    agentOf(inst).calls.map((c) => [c.name, c.childInstanceId !== null, c.ok]),
    [
      ['ask_a_supervisor', true, null],
      ['look_up_order', false, null],
    ],
    'the second waits for the first',
  );
  const task = (await waitingTasks(h.store.state, h.engine.executions, { organization: null, limit: 10 })).items[0]!;
  await h.engine.submitTask({
    organization: 'default',
    processInstanceId: task.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'ok' },
  });
  inst = await ended(h, started.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.same(
    agentOf(inst).calls.map((c) => [c.name, c.ok]),
    [
      ['ask_a_supervisor', true],
      ['look_up_order', true],
    ],
  );
  t.equal(ai.calls.length, 2);
});

t.test('invalid arguments and unknown tools go back to the model as errors; no child starts', async (t) => {
  const ai = turns({
    toolCalls: [
      { name: 'look_up_order', arguments: { order: 'A1' } },
      { name: 'look_up_order', arguments: '{not json' },
      { name: 'delete_everything', arguments: {} },
    ],
  });
  const h = await agentHarness(t, ai);
  const inst = await ended(h, (await h.start(await h.publish(AGENT()), { orderId: 'A4' })).processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(ai.calls.length, 2, 'the model is asked again at once');
  const errors = ai.calls[1]!.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content).error);
  t.match(errors, [
    /invalid arguments: arguments.orderId is required/,
    /the arguments are not JSON/,
    /no tool named "delete_everything"; the tools are: look_up_order, refund, ask_a_supervisor/,
  ]);
  t.same(
    agentOf(inst).calls.map((c) => [c.childInstanceId, c.ok]),
    [
      [null, false],
      [null, false],
      [null, false],
    ],
  );
  t.notOk(
    Object.values(inst.nodes).some((n) => n.children?.length),
    'no child execution',
  );
  t.ok(
    messagesOf(inst).includes(
      'tool look_up_order (call_1_1): refused: invalid arguments: arguments.orderId is required',
    ),
  );
});

t.test(
  'a tool flow that fails: its error goes back to the model, or fails the node with failOnToolError',
  async (t) => {
    const ai = turns({ toolCalls: [{ name: 'refund', arguments: { amount: 5 } }] });
    const h = await agentHarness(t, ai);
    const inst = await ended(h, (await h.start(await h.publish(AGENT()), { orderId: 'A5' })).processInstanceId);
    t.equal(inst.stateCd, STATE.COMPLETED);
    const result = JSON.parse(ai.calls[1]!.messages.at(-1)!.content) as { error: string };
    t.match(result.error, /^NO_BRANCH_MATCHED: /);
    t.same(
      (inst.variables.agent as { toolCalls: Array<{ ok: boolean }> }).toolCalls.map((c) => c.ok),
      [false],
    );

    const strict = turns({ toolCalls: [{ name: 'refund', arguments: { amount: 5 } }] });
    const h2 = await agentHarness(t, strict);
    const failed = await ended(
      h2,
      (await h2.start(await h2.publish(AGENT('failOnToolError: true')), { orderId: 'A6' })).processInstanceId,
    );
    t.equal(failed.stateCd, STATE.FAILED);
    t.match(failed.error, { code: 'NO_BRANCH_MATCHED', nodeId: 'agent', message: /^tool refund \(call_1_1\): / });
    t.equal(strict.calls.length, 1);
    t.match((failed.variables.agent as { transcript: unknown[] }).transcript.at(-1), { role: 'tool', name: 'refund' });
  },
);

t.test('maxSteps: a model that keeps asking for tools fails the node, never passes as an answer', async (t) => {
  const ai = new FakeAiRunner(() => ({ toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'X' } }] }));
  const h = await agentHarness(t, ai);
  const inst = await ended(
    h,
    (await h.start(await h.publish(AGENT('maxSteps: 3')), { orderId: 'A7' })).processInstanceId,
  );
  t.equal(inst.stateCd, STATE.FAILED);
  t.match(inst.error, { code: 'AGENT_MAX_STEPS', message: /after 3 turns \(maxSteps 3\)/ });
  t.equal(ai.calls.length, 3, 'three turns, no fourth');
  const partial = inst.variables.agent as { text: null; steps: number; toolCalls: unknown[]; transcript: unknown[] };
  t.equal(partial.text, null);
  t.equal(partial.steps, 3);
  t.equal(partial.toolCalls.length, 2, 'the tools of turns 1 and 2 ran; the third turn asked in vain');
  t.equal(partial.transcript.length, 2 + 2 * 2 + 1, 'the transcript is kept for inspection');
  t.equal(agentOf(inst).steps, 3);
});

t.test('budgets: maxToolCalls and maxTotalTokens fail with AGENT_BUDGET_EXCEEDED', async (t) => {
  const calls = new FakeAiRunner(() => ({
    toolCalls: [
      { name: 'look_up_order', arguments: { orderId: 'X' } },
      { name: 'look_up_order', arguments: { orderId: 'Y' } },
    ],
  }));
  const h = await agentHarness(t, calls);
  const inst = await ended(
    h,
    (await h.start(await h.publish(AGENT('maxToolCalls: 3')), { orderId: 'B1' })).processInstanceId,
  );
  t.match(inst.error, { code: 'AGENT_BUDGET_EXCEEDED', message: /asks for 4 tool calls; maxToolCalls is 3/ });
  t.equal(calls.calls.length, 2);
  const partial = inst.variables.agent as { text: null; steps: number; toolCalls: unknown[]; transcript: unknown[] };
  t.equal(partial.text, null);
  t.equal(partial.steps, 2);
  t.equal(partial.toolCalls.length, 2, "turn 1's calls ran; turn 2's were over the budget");
  t.same(
    (partial.transcript as Array<{ role: string }>).map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'tool', 'assistant'],
    'the transcript is kept for inspection, the answer over the budget included',
  );
  t.equal(agentOf(inst).messages.length, 6);

  const tokens = new FakeAiRunner(() => ({
    toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'X' } }],
    usage: { inputTokens: 60, outputTokens: 10 },
  }));
  const h2 = await agentHarness(t, tokens);
  const spent = await ended(
    h2,
    (await h2.start(await h2.publish(AGENT('maxTotalTokens: 100')), { orderId: 'B2' })).processInstanceId,
  );
  t.match(spent.error, { code: 'AGENT_BUDGET_EXCEEDED', message: /140 tokens used in 2 turns; maxTotalTokens is 100/ });
  t.same(spent.usage, { inputTokens: 120, outputTokens: 20, calls: 2 });
  const kept = spent.variables.agent as { steps: number; usage: unknown; transcript: unknown[] };
  t.equal(kept.steps, 2);
  t.same(kept.usage, { inputTokens: 120, outputTokens: 20 });
  t.same(
    (kept.transcript as Array<{ role: string }>).map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
    'the transcript is kept for inspection',
  );
});

t.test('cancelling the execution in the middle cancels the tool executions; no further turn', async (t) => {
  const ai = turns({ toolCalls: [{ name: 'ask_a_supervisor', arguments: { reason: 'x' } }] });
  const h = await agentHarness(t, ai);
  const started = await h.start(await h.publish(AGENT()), { orderId: 'C1' });
  await h.waitFor((e) => e.processInstanceId === started.processInstanceId && e.type === 'NODE_WAITING');
  const childId = agentOf(await h.get(started.processInstanceId)).calls[0]!.childInstanceId!;
  await h.engine.cancel({ organization: null, processInstanceId: started.processInstanceId });
  const inst = await h.get(started.processInstanceId);
  t.equal(inst.stateCd, STATE.CANCELLED);
  t.equal((await h.get(childId)).stateCd, STATE.CANCELLED, 'the tool execution is cancelled with it');
  t.equal(ai.calls.length, 1);
});

t.test('an interrupting timer boundary on the agent cancels its tool executions', async (t) => {
  const ai = turns({ toolCalls: [{ name: 'ask_a_supervisor', arguments: { reason: 'slow' } }] });
  const h = await agentHarness(t, ai);
  const pid = await h.publish(`processId: AUTO
name: Agent with a deadline
nodes:
  start: { type: startEvent, next: agent }
  agent: { type: callAgent, prompt: go, tools: [${APPROVE}], next: done }
  late: { type: boundaryEvent, attachedTo: agent, event: timer, duration: 10m, next: expired }
  expired: { type: endEvent }
  done: { type: endEvent }
`);
  const started = await h.start(pid);
  await h.waitFor((e) => e.processInstanceId === started.processInstanceId && e.type === 'NODE_WAITING');
  const childId = agentOf(await h.get(started.processInstanceId)).calls[0]!.childInstanceId!;
  h.advance(10 * 60_000);
  const inst = await ended(h, started.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED, 'the boundary path ran');
  t.equal(
    Object.values(inst.nodes).find((n) => n.nodeId === 'agent')!.statusCd,
    STATUS.CANCELLED,
    'the agent is cancelled',
  );
  t.equal((await h.get(childId)).stateCd, STATE.CANCELLED, 'and its tool execution with it');
  t.equal(ai.calls.length, 1, 'no further turn');
});

t.test(
  'a failure that leads back into the agent through its errorFlow starts a new run: a fresh conversation and budget',
  async (t) => {
    const ai = turns(
      { toolCalls: [{ name: 'look_up_order', arguments: { orderId: 'R1' } }] },
      { failure: { code: 'AI_HTTP_500', message: 'the model server failed' } },
      { text: 'answered on the second run' },
    );
    const h = await agentHarness(t, ai);
    const pid = await h.publish(`processId: AUTO
name: Agent that starts over
nodes:
  start: { type: startEvent, next: agent }
  agent: { type: callAgent, prompt: "Help with {orderId}", tools: [${LOOKUP}], errorFlow: again, next: done }
  again: { type: setVariable, variables: { startedOver: true }, next: agent }
  done: { type: endEvent }
`);
    const inst = await ended(h, (await h.start(pid, { orderId: 'R1' })).processInstanceId);
    t.equal(inst.stateCd, STATE.COMPLETED);
    t.same(ai.calls[2]!.messages, [{ role: 'user', content: 'Help with R1' }], 'the new run starts from its prompt');
    const runs = Object.values(inst.nodes).filter((n) => n.nodeId === 'agent');
    t.same(
      runs.map((n) => [n.statusCd, n.agent?.steps]),
      [
        [STATUS.FAILED, 1],
        [STATUS.COMPLETED, 1],
      ],
      'two node instances: the failed run keeps its conversation, the new one counts from zero',
    );
    t.equal(runs[0]!.agent!.calls.length, 1);
    t.match(inst.variables, {
      startedOver: true,
      error: { code: 'AI_HTTP_500' },
      agent: { text: 'answered on the second run', steps: 1, toolCalls: [] },
    });
  },
);

t.test('memory: the conversation continues from the remembered turns; the final answer is remembered', async (t) => {
  const ai = turns({ text: 'first answer' }, { text: 'second answer' });
  const h = await agentHarness(t, ai);
  const pid = await h.publish(AGENT('memory: { namespace: support, key: "{orderId}" }'));
  await ended(h, (await h.start(pid, { orderId: 'M1' })).processInstanceId);
  await ended(h, (await h.start(pid, { orderId: 'M1' })).processInstanceId);
  t.same(ai.calls[1]!.messages, [
    { role: 'system', content: 'You help customers.' },
    { role: 'user', content: 'Help with order M1' },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'Help with order M1' },
  ]);
  t.equal((h.store.state.memory.default!.support!.M1!.value as unknown[]).length, 4);
});

t.test('a final answer with a schema is checked JSON in result.data', async (t) => {
  const ai = turns({ text: '{"verdict":"ok"}', data: { verdict: 'ok' } });
  const h = await agentHarness(t, ai);
  const pid = await h.publish(
    AGENT('schema: { type: object, required: [verdict], properties: { verdict: { enum: [ok, no] } } }'),
  );
  const inst = await ended(h, (await h.start(pid, { orderId: 'S1' })).processInstanceId);
  t.equal(ai.calls[0]!.responseFormat, 'json');
  t.same((inst.variables.agent as { data: unknown }).data, { verdict: 'ok' });
});

t.test('a turn in flight at a crash is asked again once; no tool flow runs twice', async (t) => {
  // Turn 1 asks for a tool that waits for a person; crash while it waits (answer journaled, child running).
  const first = turns({ toolCalls: [{ name: 'ask_a_supervisor', arguments: { reason: 'crash' } }] });
  const h = await agentHarness(t, first);
  const started = await h.start(await h.publish(AGENT()), { orderId: 'K1' });
  await h.waitFor((e) => e.processInstanceId === started.processInstanceId && e.type === 'NODE_WAITING');
  const image1 = await crashImage(t, h);

  // After the crash: the child still waits; answering it asks for turn 2, which is in flight at the next crash.
  const held = gate();
  const second = new FakeAiRunner(() => ({ gate: held.promise }));
  const h2 = await agentHarness(t, second, image1, h);
  let inst = await h2.get(started.processInstanceId);
  t.equal(agentOf(inst).steps, 1, 'turn 1 is journaled');
  const childId = agentOf(inst).calls[0]!.childInstanceId!;
  t.equal(second.calls.length, 0, 'the journaled turn is not asked again');
  await h2.engine.submitTask({
    organization: 'default',
    processInstanceId: childId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'approved' },
  });
  await second.called(1);
  const working = Object.values((await h2.get(started.processInstanceId)).nodes).find((n) => n.nodeId === 'agent')!;
  t.equal(working.statusCd, STATUS.ACTIVE, 'the agent works on turn 2');
  const image2 = await crashImage(t, h2);

  const third = turns({ text: 'approved and done' });
  const h3 = await agentHarness(t, third, image2, h2);
  inst = await ended(h3, started.processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  t.equal(third.calls.length, 1, 'the turn in flight is asked once more');
  t.same(third.calls[0]!.messages, second.calls[0]!.messages, 'from the same journaled conversation');
  t.equal(
    first.calls.length + second.calls.length + third.calls.length,
    3,
    'a crash-free run (2) plus the one in flight',
  );
  const children = Object.values(inst.nodes).flatMap((n) => n.children ?? []);
  t.same(children, [childId], 'the tool flow ran once');
  held.open();
});
