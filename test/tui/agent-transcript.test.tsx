import t from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import { AgentTranscript } from '../../src/tui/components/agent-transcript.js';
import { agentToShow, ExecutionView } from '../../src/tui/components/execution-view.js';
import { useExecution } from '../../src/tui/hooks/use-execution.js';
import type { AgentState } from '../../src/shared/api/index.js';
import type { Execution, NodeView } from '../../src/tui/types.js';
import { agentDaemon, FOUR_CALLS } from '../helpers/agent-daemon.js';
import { frameMatching, renderAt, widerThan } from '../helpers/ink.js';

const NOW = new Date('2026-11-21T10:05:00.000Z');
const LOOKUP_RUN = '01a1fe31-0000-7000-8000-0000000000a1';
const APPROVE_RUN = '01a1fe31-0000-7000-8000-0000000000a2';

const AGENT: AgentState = {
  messages: [
    { role: 'system', content: 'You handle refund requests for the shop. Refunds over 100 EUR need a supervisor.' },
    { role: 'user', content: 'Customer C7 writes: my order A1 never came, I want my 250 EUR back.' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"A1"}' },
        { id: 'call_2', name: 'ask_supervisor', arguments: '{"reason":"refund 250 EUR for order A1"}' },
        { id: 'call_3', name: 'refund', arguments: '{"amount":"lots"}' },
      ],
    },
    {
      role: 'tool',
      toolCallId: 'call_3',
      name: 'refund',
      content: '{"error":"invalid arguments: arguments.amount must be number"}',
    },
    {
      role: 'tool',
      toolCallId: 'call_1',
      name: 'look_up_order',
      content: '{"status":"lost","orderId":"A1","total":250}',
    },
  ],
  steps: 1,
  calls: [
    {
      id: 'call_1',
      name: 'look_up_order',
      arguments: '{"orderId":"A1"}',
      processId: 'p1',
      step: 1,
      childInstanceId: LOOKUP_RUN,
      ok: true,
    },
    {
      id: 'call_2',
      name: 'ask_supervisor',
      arguments: '{}',
      processId: 'p2',
      step: 1,
      childInstanceId: APPROVE_RUN,
      ok: null,
    },
    { id: 'call_3', name: 'refund', arguments: '{}', processId: 'p3', step: 1, childInstanceId: null, ok: false },
  ],
  usage: { inputTokens: 310, outputTokens: 42 },
};

const agentNode = (agent: AgentState, statusCd: NodeView['statusCd'] = 1): NodeView & { agent: AgentState } => ({
  nodeInstanceId: 'n2',
  nodeId: 'agent',
  nodeName: 'Refund agent',
  nodeType: 'callAgent',
  statusCd,
  startTime: NOW.toISOString(),
  endTime: null,
  wait: { kind: 'tools', dueAt: null },
  agent,
});

const execution = (nodes: NodeView[]): Execution => ({
  processInstanceId: '01a1fe30-edc6-7617-bd1f-84feb7474dfd',
  processId: '0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11',
  processName: 'Refunds',
  processVersion: '2',
  stateCd: 0,
  state: 'RUNNING',
  startTime: '2026-11-21T10:04:00.000Z',
  endTime: null,
  correlationKey: null,
  organization: 'default',
  data: { customerId: 'C7' },
  output: null,
  parentInstanceId: null,
  environment: 'PRODUCTION',
  nodes,
  usage: { inputTokens: 310, outputTokens: 42, calls: 1 },
});

const LOGS = Array.from({ length: 6 }, (_, i) => ({
  id: i + 1,
  nodeId: 'agent',
  nodeName: 'Refund agent',
  level: 'INFO' as const,
  message: `log line ${i + 1}`,
  timestamp: NOW.toISOString(),
}));

t.test(
  "the execution view shows an agent's conversation: roles, each call with its state and execution, results",
  async (t) => {
    const ui = renderAt(
      <ExecutionView execution={execution([agentNode(AGENT)])} logs={LOGS} now={NOW} logRows={16} width={80} />,
      80,
    );
    t.teardown(ui.unmount);
    const frame = ui.lastFrame();
    t.match(
      frame,
      /^conversation Refund agent · waiting · 1 turn · 310 input \+ 42 output tokens · 3…$/m,
      'the heading, cut to the width',
    );
    t.match(
      frame,
      /^  system     You handle refund requests for the shop\. Refunds over 100 EUR need\n {13}a supervisor\.$/m,
      'wrapped',
    );
    t.match(frame, /^  user       Customer C7 writes:/m);
    t.match(
      frame,
      /^  assistant  → look_up_order\(orderId: "A1"\) · done …0000000000a1$/m,
      'the execution id, its tail',
    );
    t.match(frame, /^ {13}→ ask_supervisor\(reason: "refund 250 EUR …\) · running …0000000000a2$/m);
    t.match(frame, /^ {13}→ refund\(amount: "lots"\) · refused$/m);
    t.match(frame, /^  tool       ← refund: error: invalid arguments: arguments\.amount must be number$/m);
    t.match(frame, /^  tool       ← look_up_order: \{status: "lost", orderId: "A1", total: 250\}$/m);
    t.match(frame, /Refund agent\s+callAgent\s+waiting\s+tool ask_supervisor/, 'the node table says which tool runs');
    t.match(frame, /log line 2\n[\s\S]*log line 6$/, 'the log tail still shows');
    t.notMatch(frame, /log line 1\n/, 'the conversation takes most of the rows');
    t.ok(frame.indexOf('conversation') < frame.indexOf('\nlog\n'), 'above the log');
    t.same(widerThan(frame, 80), [], 'no line wider than 80');
  },
);

t.test('a long conversation shows its newest lines, with the count of the earlier ones', async (t) => {
  const many: AgentState = {
    ...AGENT,
    messages: [
      ...AGENT.messages,
      ...Array.from({ length: 8 }, (_, i) => ({ role: 'user' as const, content: `follow-up ${i + 1}` })),
      { role: 'assistant' as const, content: `${'The refund needs a supervisor. '.repeat(6)}Waiting.` },
    ],
  };
  const ui = renderAt(<AgentTranscript node={agentNode(many, 0)} rows={6} width={80} />, 80);
  t.teardown(ui.unmount);
  const lines = ui.lastFrame().split('\n');
  t.equal(lines.length, 7, 'the heading and six rows');
  t.match(lines[1], /^  … 15 earlier lines \(wfx instances get shows them all\)$/);
  t.match(lines[2], /^  user       follow-up 8$/);
  t.match(lines[3], /^  assistant  The refund needs a supervisor\./);
  t.match(lines[6], /^ {13}… the model is answering \(turn 2\)$/, 'asking the model: said last');
  t.same(widerThan(ui.lastFrame(), 80), []);

  const cutMid = renderAt(<AgentTranscript node={agentNode(many, 0)} rows={4} width={80} />, 80);
  t.teardown(cutMid.unmount);
  t.match(
    cutMid.lastFrame().split('\n')[2],
    /^  assistant  /,
    "a message's continuation first: its role is carried (dimmed)",
  );
});

t.test('the view shows the agent still running, else the latest one; none without an agent', async (t) => {
  const done = { ...agentNode(AGENT, 2), nodeInstanceId: 'n1' };
  const running = agentNode(AGENT, 1);
  const later = { ...agentNode(AGENT, 2), nodeInstanceId: 'n3' };
  t.equal(agentToShow([done, running, later])?.nodeInstanceId, 'n2');
  t.equal(agentToShow([done, later])?.nodeInstanceId, 'n3');
  t.equal(agentToShow([{ ...running, agent: undefined }]), null);
  const plain = renderAt(<ExecutionView execution={execution([])} logs={LOGS} now={NOW} logRows={4} width={80} />, 80);
  t.teardown(plain.unmount);
  t.notMatch(plain.lastFrame(), /conversation/);
  t.match(plain.lastFrame(), /log line 3\n/, 'without an agent the log has every row');
});

t.test("a node's child executions hang under it: how many, and the heads of the last ids", async (t) => {
  const ids = Array.from({ length: 5 }, (_, i) => `01a1fe30-edc6-7${i}17-bd1f-84feb7474dfd`);
  const loop: NodeView = {
    nodeInstanceId: 'n9',
    nodeId: 'each',
    nodeName: 'each',
    nodeType: 'loopNode',
    statusCd: 1,
    startTime: NOW.toISOString(),
    endTime: null,
    childInstanceIds: ids,
  };
  const ui = renderAt(<ExecutionView execution={execution([loop])} logs={LOGS} now={NOW} logRows={4} width={80} />, 80);
  t.teardown(ui.unmount);
  t.match(
    ui.lastFrame(),
    /^each\s+loopNode\s+waiting.*\n {2}└─ 5 child executions: 3 more, 01a1fe30-edc6-73…, 01a1fe30-edc6-74…$/m,
  );
});

function Live({ client, id }: { readonly client: WfxClient; readonly id: string }) {
  const { execution, logs } = useExecution(client, id);
  return execution ? <ExecutionView execution={execution} logs={logs} now={NOW} logRows={14} width={100} /> : null;
}

t.test("against a daemon: the open execution shows its agent's conversation as the engine keeps it", async (t) => {
  const { client, startAgent } = await agentDaemon(t, [FOUR_CALLS]);
  const { agentId } = await startAgent();
  const ui = renderAt(<Live client={client} id={agentId} />, 100);
  t.teardown(ui.unmount);
  const frame = await frameMatching(ui.lastFrame, /conversation Support agent · waiting/);
  t.match(frame, /· 1 turn · 30 input \+ 8 output tokens · 4 tool calls/);
  t.match(frame, /→ refund\(amount: 5\) · failed …/);
  t.match(frame, /→ ask_a_supervisor\(reason: "refund 5 EUR"\) · running …/);
  t.match(frame, /← refund: error: NO_BRANCH_MATCHED: /);
  t.same(widerThan(frame, 100), []);
});
