import t from 'tap';
import type { AgentCall, AgentMessage, InstanceView, LogEntry, NodeView } from '../../src/shared/api/index.js';
import type { FlowDefinition } from '../../src/shared/flow/types.js';
import { recordedCase } from '../../src/cli/test-record.js';

// `wfx test record` of an agent's MCP calls: what each tool message says becomes the answer of
// the mock `AGENT.TOOL`, in the order the calls were made. (test/e2e/agent-approval.test.ts
// records a real daemon's execution and runs it again.)

const URL = 'http://127.0.0.1:9/mcp';
const call = (id: string, tool: string, ok: boolean | null, more: Partial<AgentCall> = {}): AgentCall => ({
  id,
  name: tool.replace('.', '_'),
  arguments: '{}',
  processId: '',
  step: 1,
  childInstanceId: null,
  ok,
  mcp: { url: URL, tool, entry: 0, idempotent: false },
  ...more,
});
const toolMessage = (id: string, content: string): AgentMessage => ({
  role: 'tool',
  toolCallId: id,
  name: id,
  content,
});

t.test("each MCP call becomes its tool's mock answer; refused and unknown calls are left out", (t) => {
  const calls = [
    call('a', 'search', true),
    call('b', 'search', true),
    call('c', 'close.ticket', false),
    call('d', 'search', false),
    call('e', 'search', false, { approval: 'refused' }),
    call('f', 'search', false),
    call('g', 'search', null),
  ];
  const messages: AgentMessage[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: '', toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: '{}' })) },
    toolMessage('a', '{"hits":2}'),
    toolMessage('b', 'two hits'),
    toolMessage('c', JSON.stringify({ error: 'MCP_UNAVAILABLE: MCP server http://127.0.0.1:9/mcp: fetch failed' })),
    toolMessage('d', JSON.stringify({ error: 'index offline' })),
    toolMessage('e', JSON.stringify({ error: 'a person refused this call' })),
    toolMessage(
      'f',
      JSON.stringify({ error: 'the daemon stopped while this call ran, so whether it took effect is unknown' }),
    ),
    { role: 'assistant', content: 'done' },
  ];
  const node: NodeView = {
    nodeInstanceId: 'n1',
    nodeId: 'agent',
    nodeName: 'agent',
    nodeType: 'callAgent',
    statusCd: 2,
    startTime: '2026-01-05T09:00:00.000Z',
    endTime: '2026-01-05T09:00:01.000Z',
    agent: { messages, steps: 2, calls, usage: { inputTokens: 0, outputTokens: 0 } },
  };
  const view = {
    processInstanceId: 'i1',
    processId: 'p1',
    state: 'COMPLETED',
    environment: 'PRODUCTION',
    correlationKey: null,
    startTime: '2026-01-05T09:00:00.000Z',
    endTime: '2026-01-05T09:00:01.000Z',
    nodes: [node],
    data: {},
  } as unknown as InstanceView;
  const flow = {
    processId: 'p1',
    name: 'Triage',
    nodes: {
      start: { type: 'startEvent', next: 'agent' },
      agent: { type: 'callAgent', prompt: 'go', tools: [{ mcp: { url: URL } }], next: 'end' },
      end: { type: 'endEvent' },
    },
  } as unknown as FlowDefinition;
  const logs: LogEntry[] = [];
  const recorded = recordedCase({ root: { view, logs }, under: [], flows: new Map([['p1', flow]]) }, 'triage');
  const mocks = recorded.case.mocks as Record<string, unknown>;
  t.same(mocks['agent.search'], [{ result: { hits: 2 } }, { text: 'two hits' }, { error: 'index offline' }]);
  t.same(mocks['agent.close.ticket'], {
    fail: { code: 'MCP_UNAVAILABLE', message: 'MCP server http://127.0.0.1:9/mcp: fetch failed' },
  });
  t.same(mocks.agent, [{ toolCalls: calls.map((c) => ({ name: c.name, arguments: {} })) }, { reply: 'done' }]);
  t.end();
});
