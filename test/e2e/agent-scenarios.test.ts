import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { AgentState, InstanceView, WaitingTask } from '../../src/shared/api/index.js';
import { approveFlow, refundFlow, strictLookupFlow } from '../helpers/agent-daemon.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { reply, startOpenAiServer, type OpenAiServer, type ScriptedReply } from '../helpers/openai-server.js';

// callAgent's cases on one real daemon over real HTTP, each against its own scripted
// OpenAI-compatible server (a provider of its own): a tool refused for its arguments, a tool
// flow that fails, the limits, cancel in the middle, a retried turn, a userTask in a tool, and
// the example agent of flows/ from the first tool call to the final answer.

const LOOKUP = '0a5c7e21-4b3d-4c8e-9f1a-2b3c4d5e6f70';
const REFUND = '1b6d8f32-5c4e-4d9f-8a2b-3c4d5e6f7081';
const APPROVE = '2c7e9043-6d5f-4eaf-9b3c-4d5e6f708192';
const REVIEW = '3d8fa154-7e6a-4fb0-8c4d-5e6f708192a3';

const TOOLS = {
  'lookup.yaml': strictLookupFlow(LOOKUP),
  'refund.yaml': refundFlow(REFUND),
  'approve.yaml': approveFlow(APPROVE),
  'review.yaml': `processId: ${REVIEW}
name: Review order
inputs: { type: object, required: [orderId], properties: { orderId: { type: string } } }
nodes:
  start: { type: startEvent, next: review }
  review:
    type: userTask
    name: "Review {orderId}"
    assignee: supervisor
    fields: [{ name: ok, type: boolean, required: true }]
    next: out
  out: { type: outputNode, outputs: { ok: "{formData.ok}" }, next: done }
  done: { type: endEvent }
`,
};

const cwd = t.testdir(TOOLS);
const daemon = await startDaemon(t, { cwd });
const client = await adminClient(cwd, daemon.url);
const published = await wfxIn(['flow', 'publish', ...Object.keys(TOOLS)], { cwd });
if (published.code !== 0) throw new Error(`publishing the tool flows failed: ${published.stderr}`);

/** Scenarios so far: each one's provider and agent flow are named by its number. */
let scenarios = 0;

/** One agent flow with its own scripted model, published: start it, read it back. */
interface Scenario {
  readonly server: OpenAiServer;
  /** Starts the agent with `{orderId}`; resolves to the execution id. */
  start(orderId?: string): Promise<string>;
}

/**
 * A scripted server registered as a provider of its own, and an agent flow on it with `tools`
 * and the callAgent properties `props` (YAML lines), published.
 */
async function scenario(t: Test, tools: readonly string[], props: readonly string[] = []): Promise<Scenario> {
  const server = await startOpenAiServer();
  t.teardown(() => server.close());
  const provider = `scripted-${++scenarios}`;
  await client.aiProviders.create({ name: provider, kind: 'openai-compatible', baseUrl: server.baseUrl, model: 'm' });
  const processId = randomUUID();
  await client.flows.publish({
    source: `processId: ${processId}
name: Agent ${scenarios}
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    provider: ${provider}
    prompt: "Order {orderId}: what now?"
    tools: [${tools.join(', ')}]
${props.map((p) => `    ${p}\n`).join('')}    next: done
  done: { type: endEvent }
`,
  });
  return {
    server,
    start: async (orderId = 'A-1') => (await client.process.start({ processId, data: { orderId } })).processInstanceId,
  };
}

/** The execution once it has ended. */
function ended(id: string): Promise<InstanceView> {
  return eventually(`execution ${id} ends`, async () => {
    const inst = await client.instances.get(id);
    return inst.stateCd !== 0 ? inst : undefined;
  });
}

/** The one task waiting in an execution that runs a tool call of agent execution `agentId`. */
function taskOf(agentId: string): Promise<WaitingTask> {
  return eventually(`a tool of ${agentId} waits for a person`, async () =>
    (await client.tasks.list()).items.find((w) => w.agent?.processInstanceId === agentId),
  );
}

const agentNode = (inst: InstanceView) => inst.nodes.find((n) => n.nodeId === 'agent')!;
const agentOf = (inst: InstanceView): AgentState => agentNode(inst).agent!;

/** What the agent's result variable holds after a failure: the run so far, its transcript kept. */
interface PartialRun {
  readonly text: null;
  readonly steps: number;
  readonly toolCalls: ReadonlyArray<{ name: string; childInstanceId: string | null; ok: boolean | null }>;
  readonly usage: { inputTokens: number; outputTokens: number };
  readonly transcript: ReadonlyArray<{ role: string; content: string; name?: string }>;
}
const partialOf = (inst: InstanceView) => inst.data.agent as PartialRun;

/** The tool messages a request sent the model. */
function toolResults(server: OpenAiServer, request: number): string[] {
  const messages = server.requests[request]!.body.messages as Array<{ role: string; content: string }>;
  return messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

const lookupCall = (orderId: string, id = `c-${orderId}`): ScriptedReply =>
  reply.toolCalls([{ id, name: 'look_up_order', arguments: { orderId } }]);

t.test('a tool call with invalid arguments goes back to the model as an error; no child starts', async (t) => {
  const s = await scenario(t, [LOOKUP]);
  s.server.script(
    reply.toolCalls([
      { id: 'c1', name: 'look_up_order', arguments: { orderId: 'Z-9' } },
      { id: 'c2', name: 'look_up_order', arguments: '{"orderId": ' },
    ]),
    reply.text('I could not find that order.'),
  );
  const inst = await ended(await s.start());
  t.equal(inst.stateCd, 1, 'the agent completed');
  t.equal(s.server.requestCount(), 2, 'the refusals went back to the model at once');
  t.same(
    toolResults(s.server, 1).map((c) => (JSON.parse(c) as { error: string }).error),
    [
      'invalid arguments: arguments.orderId must be one of: "A-1", "A-2"',
      'the arguments are not JSON: it ends before the JSON is complete',
    ],
    "each refusal says why, as the tool's result",
  );
  t.same(
    agentOf(inst).calls.map((c) => [c.childInstanceId, c.ok]),
    [
      [null, false],
      [null, false],
    ],
    'both refused',
  );
  t.same(agentNode(inst).childInstanceIds ?? [], [], 'no child execution');
  t.match(inst.data.agent, { text: 'I could not find that order.', steps: 2 });
});

t.test('a tool flow that fails: the model reads its error; with failOnToolError the agent fails', async (t) => {
  const lenient = await scenario(t, [REFUND]);
  lenient.server.script(
    reply.toolCalls([{ id: 'r1', name: 'refund', arguments: { amount: 5 } }]),
    reply.text('The refund did not go through.'),
  );
  const inst = await ended(await lenient.start());
  t.equal(inst.stateCd, 1, 'the agent completed');
  const childId = agentOf(inst).calls[0]!.childInstanceId!;
  t.match(await client.instances.get(childId), { stateCd: 2, data: { error: { code: 'NO_BRANCH_MATCHED' } } });
  t.match(toolResults(lenient.server, 1), [/^\{"error":"NO_BRANCH_MATCHED: /], 'the error went back to the model');
  t.match(inst.data.agent, { steps: 2, toolCalls: [{ name: 'refund', childInstanceId: childId, ok: false }] });

  const strict = await scenario(t, [REFUND], ['failOnToolError: true']);
  strict.server.script(reply.toolCalls([{ id: 'r1', name: 'refund', arguments: { amount: 5 } }]));
  const failed = await ended(await strict.start());
  t.match(failed, {
    stateCd: 2,
    data: { error: { code: 'NO_BRANCH_MATCHED', nodeId: 'agent', message: /^tool refund \(r1\): / } },
  });
  t.equal(strict.server.requestCount(), 1, 'no further turn');
  const partial = partialOf(failed);
  t.same(
    partial.transcript.map((m) => m.role),
    ['user', 'assistant', 'tool'],
    "the transcript is kept in the node's variables",
  );
  t.match(partial.transcript[2], { name: 'refund', content: /NO_BRANCH_MATCHED/ });
  t.equal((await client.instances.get(partial.toolCalls[0]!.childInstanceId!)).stateCd, 2, 'the tool execution failed');
});

t.test('AGENT_MAX_STEPS: a model that keeps asking for tools fails the agent; the transcript is kept', async (t) => {
  const s = await scenario(t, [LOOKUP], ['maxSteps: 2']);
  s.server.script(lookupCall('A-1', 'c1'), lookupCall('A-2', 'c2'));
  const inst = await ended(await s.start());
  t.match(inst, {
    stateCd: 2,
    data: { error: { code: 'AGENT_MAX_STEPS', nodeId: 'agent', message: /after 2 turns \(maxSteps 2\)/ } },
  });
  t.equal(s.server.requestCount(), 2, 'two turns, no third');
  const partial = partialOf(inst);
  t.match(partial, { text: null, steps: 2, usage: { inputTokens: 18, outputTokens: 8 } });
  t.same(
    partial.transcript.map((m) => m.role),
    ['user', 'assistant', 'tool', 'assistant'],
    'the transcript up to the turn that asked in vain',
  );
  t.equal(partial.toolCalls.length, 1, "turn 2's call never started");
  t.equal((await client.instances.get(partial.toolCalls[0]!.childInstanceId!)).stateCd, 1, "turn 1's tool ran");
  t.equal(agentOf(inst).messages.length, 4, 'the node state holds the same conversation');
});

t.test(
  'AGENT_BUDGET_EXCEEDED: tool calls or tokens over the budget fail the agent; the transcript is kept',
  async (t) => {
    const calls = await scenario(t, [LOOKUP], ['maxToolCalls: 1']);
    calls.server.script(
      reply.toolCalls([
        { id: 'c1', name: 'look_up_order', arguments: { orderId: 'A-1' } },
        { id: 'c2', name: 'look_up_order', arguments: { orderId: 'A-2' } },
      ]),
    );
    const overCalls = await ended(await calls.start());
    t.match(overCalls.data.error, {
      code: 'AGENT_BUDGET_EXCEEDED',
      message: /asks for 2 tool calls; maxToolCalls is 1/,
    });
    t.equal(calls.server.requestCount(), 1);
    t.same(agentNode(overCalls).childInstanceIds ?? [], [], 'no tool started');
    const kept = partialOf(overCalls);
    t.same(
      kept.transcript.map((m) => m.role),
      ['user', 'assistant'],
      'the transcript is kept, the answer that asked too much included',
    );
    t.equal(kept.steps, 1);

    const tokens = await scenario(t, [LOOKUP], ['maxTotalTokens: 20']);
    tokens.server.script(lookupCall('A-1'), lookupCall('A-2')); // 13 tokens each
    const overTokens = await ended(await tokens.start());
    t.match(overTokens.data.error, {
      code: 'AGENT_BUDGET_EXCEEDED',
      message: /26 tokens used in 2 turns; maxTotalTokens is 20/,
    });
    t.equal(tokens.server.requestCount(), 2);
    const spent = partialOf(overTokens);
    t.match(spent, { steps: 2, usage: { inputTokens: 18, outputTokens: 8 } });
    t.same(
      spent.transcript.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
      'the transcript is kept',
    );
    t.match(overTokens.usage, { inputTokens: 18, outputTokens: 8, calls: 2 });
  },
);

t.test('cancelling the execution in the middle cancels the tool executions; no further turn', async (t) => {
  const s = await scenario(t, [APPROVE, LOOKUP]);
  s.server.script(
    reply.toolCalls([
      { id: 'a1', name: 'ask_a_supervisor', arguments: { reason: 'refund' } },
      { id: 'l1', name: 'look_up_order', arguments: { orderId: 'A-1' } },
    ]),
  );
  const id = await s.start();
  const task = await taskOf(id);
  t.match(task.agent, { processInstanceId: id, nodeId: 'agent', tool: 'ask_a_supervisor' });
  await client.instances.cancel(id);
  const inst = await ended(id);
  t.equal(inst.stateCd, 3, 'cancelled');
  t.equal(agentNode(inst).statusCd, 4, 'the agent node is cancelled');
  const [asked, looked] = agentOf(inst).calls;
  t.equal((await client.instances.get(asked!.childInstanceId!)).stateCd, 3, 'the waiting tool execution is cancelled');
  t.equal((await client.instances.get(looked!.childInstanceId!)).stateCd, 1, 'the finished one stays completed');
  t.notOk(
    (await client.tasks.list()).items.some((w) => w.processInstanceId === task.processInstanceId),
    'its task no longer waits',
  );
  t.equal(s.server.requestCount(), 1, 'no further turn');
});

t.test(
  'a turn whose model call fails and is retried keeps the budget: steps, usage and tool calls go on',
  async (t) => {
    const retry = 'retry: { maxAttempts: 2, initialInterval: 10ms }';
    const script = (server: OpenAiServer) =>
      server.script(
        lookupCall('A-2', 'c1'), // 13 tokens
        reply.status(500, 'the model server had a hiccup'),
        reply.text('Order A-2 has shipped.'), // 10 tokens
      );
    const s = await scenario(t, [LOOKUP], [retry]);
    script(s.server);
    const inst = await ended(await s.start());
    t.equal(inst.stateCd, 1, 'completed');
    t.equal(s.server.requestCount(), 3, 'turn 2 asked twice');
    t.same(
      s.server.requests[2]!.body.messages,
      s.server.requests[1]!.body.messages,
      'the retry sends the same conversation, tool result included',
    );
    t.same(toolResults(s.server, 2), ['{"status":"shipped","orderId":"A-2"}']);
    t.match(inst.data.agent, {
      text: 'Order A-2 has shipped.',
      steps: 2,
      usage: { inputTokens: 16, outputTokens: 7 },
      toolCalls: [{ name: 'look_up_order', ok: true }],
    });
    t.equal(agentOf(inst).steps, 2, 'the retried turn counts once');
    const logs = (await client.instances.logs(inst.processInstanceId)).map((e) => e.message);
    t.ok(
      logs.some((m) => /^model m attempt 1: .*failed \(AI_HTTP_500: /.test(m)),
      'the failed attempt is logged',
    );

    // The same run under a budget only the two turns together exceed: the retry wiped nothing.
    const tight = await scenario(t, [LOOKUP], [retry, 'maxTotalTokens: 20']);
    script(tight.server);
    const over = await ended(await tight.start());
    t.match(over.data.error, {
      code: 'AGENT_BUDGET_EXCEEDED',
      message: /^23 tokens used in 2 turns; maxTotalTokens is 20/,
    });
    t.equal(tight.server.requestCount(), 3);
    t.match(partialOf(over), { steps: 2, toolCalls: [{ ok: true }], usage: { inputTokens: 16, outputTokens: 7 } });
  },
);

t.test('a tool flow with a userTask waits for a person; the answer goes back to the model', async (t) => {
  const s = await scenario(t, [REVIEW]);
  s.server.script(reply.toolCalls([{ id: 'v1', name: 'review_order', arguments: { orderId: 'A-7' } }]));
  const id = await s.start('A-7');
  const task = await taskOf(id);
  t.match(task, {
    nodeType: 'userTask',
    nodeId: 'review',
    assignee: 'supervisor',
    agent: { processInstanceId: id, nodeId: 'agent', tool: 'review_order' },
  });
  t.equal(s.server.requestCount(), 1, 'no turn while the tool waits');
  s.server.script(reply.text('Reviewed: fine.'));
  await client.tasks.answer({
    processInstanceId: task.processInstanceId,
    nodeId: 'review',
    action: 'COMPLETE',
    data: { ok: true },
  });
  const inst = await ended(id);
  t.equal(inst.stateCd, 1);
  t.same(toolResults(s.server, 1), ['{"ok":true}'], "the person's answer is the tool's result");
  t.match(inst.data.agent, { text: 'Reviewed: fine.', toolCalls: [{ name: 'review_order', ok: true }] });
});

t.test('the example agent of flows/ runs end to end: a lookup, a supervisor who answers, a decision', async (t) => {
  const file = (name: string) => fileURLToPath(new URL(`../../../flows/${name}`, import.meta.url));
  const sources = ['refund-order-lookup.yaml', 'refund-supervisor-approval.yaml', 'refund-assistant.yaml'];
  for (const name of sources) await client.flows.publish({ source: await readFile(file(name), 'utf8') });
  const server = await startOpenAiServer();
  t.teardown(() => server.close());
  // The example uses the organization's default provider.
  await client.aiProviders.create({
    name: 'example-model',
    kind: 'openai-compatible',
    baseUrl: server.baseUrl,
    model: 'm',
    isDefault: true,
  });
  server.script(
    reply.toolCalls([{ id: 't1', name: 'look_up_order', arguments: { orderId: 'A-1002' } }]),
    reply.toolCalls([
      { id: 't2', name: 'ask_supervisor', arguments: { orderId: 'A-1002', amount: 389, reason: 'arrived broken' } },
    ]),
  );
  const id = (
    await client.process.start({
      processId: 'e45e0a22-448d-497f-be58-08074764b61e',
      data: { customerId: 'c-42', message: 'Order A-1002 arrived broken, I want my money back.' },
    })
  ).processInstanceId;

  const task = await taskOf(id);
  t.match(task, {
    nodeId: 'approve',
    formTitle: 'Refund 389 on order A-1002? (arrived broken)',
    agent: { processInstanceId: id, nodeId: 'agent', nodeName: 'Handle the refund request', tool: 'ask_supervisor' },
  });
  t.same(
    (server.requests[0]!.body.tools as Array<{ function: { name: string } }>).map((x) => x.function.name),
    ['look_up_order', 'ask_supervisor'],
    'the two tool flows offered as functions',
  );
  t.same(
    toolResults(server, 1).map((c) => JSON.parse(c) as unknown),
    [{ orderId: 'A-1002', found: true, order: { status: 'delivered', amount: 389, customerId: 'c-42' } }],
    "the lookup tool's output went back to the model",
  );
  t.equal(server.requestCount(), 2, 'no turn while the supervisor has not answered');

  server.script(reply.text('{"decision":"refund","reply":"Your refund of 389 is on its way."}'));
  await client.tasks.answer({
    processInstanceId: task.processInstanceId,
    nodeId: 'approve',
    action: 'COMPLETE',
    data: { approve: true, note: 'regular customer' },
  });
  const inst = await ended(id);
  t.equal(inst.stateCd, 1, inst.data.error?.message ?? 'completed');
  t.same(inst.output, { decision: 'refund', reply: 'Your refund of 389 is on its way.', steps: 3 });
  t.same(toolResults(server, 2).slice(1), ['{"approved":true,"note":"regular customer"}']);
  t.equal(server.requestCount(), 3);
  const calls = agentOf(inst).calls;
  t.same(
    calls.map((c) => [c.name, c.ok]),
    [
      ['look_up_order', true],
      ['ask_supervisor', true],
    ],
  );
  for (const c of calls) t.equal((await client.instances.get(c.childInstanceId!)).stateCd, 1, `${c.name} completed`);
  const memory = await client.memory.get('refunds', 'c-42');
  t.match(memory.value, [{ role: 'user' }, { role: 'assistant', content: /"decision":"refund"/ }], 'remembered');
});
