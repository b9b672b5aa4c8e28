import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { wfxIn } from '../../helpers/cli.js';
import { startMcpServer } from '../../helpers/mcp-server.js';

/** The cases of the first test file of a `--reporter json` report. */
function casesOf(json: string): Array<{ name: string; ok: boolean; failure?: { message: string } }> {
  type Report = { files: Array<{ cases: Array<{ name: string; ok: boolean; failure?: { message: string } }> }> };
  return (JSON.parse(json) as Report).files[0]!.cases;
}

/** Where each case stands: ok, or its failure's message. */
const outcomes = (json: string) => casesOf(json).map((c) => [c.name, c.failure?.message ?? 'ok']);

/**
 * An agent with two MCP servers: a tickets server (its header takes a secret) offering `search`
 * and `close.ticket` (offered to the model as `close_ticket`), and a wiki server offering only
 * `read_page`, each call of which waits for a person's approval. The URLs are never reached
 * where a case mocks the tools.
 */
const agentFlow = (
  tickets: string,
  extra = '',
  wiki = 'http://127.0.0.1:9/wiki',
) => `processId: 0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b
name: Triage
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    prompt: "Triage {ticket}"${extra}
    tools:
      - mcp: { url: "${tickets}", headers: { Authorization: "Bearer {secret.TICKETS_TOKEN}" } }
        allow: [search, close.ticket]
      - mcp: { url: "${wiki}" }
        allow: [read_page]
        approve: true
    next: end
  end: { type: endEvent }
`;

t.test("wfx test mocks an agent's MCP tools as AGENT.TOOL, through the agent's own MCP code", async (t) => {
  const cwd = t.testdir({
    'triage.yaml': agentFlow('http://127.0.0.1:9/tickets'),
    'triage.test.yaml': `flow: triage.yaml
secrets: { TICKETS_TOKEN: test-token }
cases:
  - name: a structured result, then a text one, then the tool's own error
    start: { data: { ticket: T-1 } }
    mocks:
      agent:
        - toolCalls: [ { name: search, arguments: { q: crash } }, { name: close_ticket, arguments: { id: T-1 } } ]
        - toolCalls: [ { name: search, arguments: { q: again } } ]
        - reply: Closed T-1.
      agent.search: [ { result: { hits: 2 } }, { error: index offline } ]
      agent.close.ticket: { text: closed }
    expect:
      state: COMPLETED
      variables:
        agent:
          text: Closed T-1.
          steps: 3
          toolCalls:
            - { name: search, arguments: { q: crash }, server: "http://127.0.0.1:9/tickets", ok: true }
            - { name: close_ticket, arguments: { id: T-1 }, server: "http://127.0.0.1:9/tickets", ok: true }
            - { name: search, arguments: { q: again }, ok: false }
  - name: a server that cannot be reached
    start: { data: { ticket: T-2 } }
    mocks:
      agent: [ { toolCalls: [ { name: search, arguments: {} } ] }, { reply: gave up } ]
      agent.search: { fail: { code: MCP_UNAVAILABLE, message: connection refused } }
    expect: { state: COMPLETED, variables: { agent: { text: gave up, toolCalls: [ { name: search, ok: false } ] } } }
  - name: a call the person approves, with its arguments edited
    start: { data: { ticket: T-3 } }
    mocks:
      agent: [ { toolCalls: [ { name: read_page, arguments: { page: home } } ] }, { reply: read it } ]
      agent.read_page: { text: "# Home" }
    steps:
      - expect: { state: RUNNING, waitingAt: agent }
      - answer: { node: agent, data: { arguments: '{"page": "runbook"}' } }
    expect:
      state: COMPLETED
      variables: { agent: { toolCalls: [ { name: read_page, arguments: { page: runbook }, approval: approved, ok: true } ] } }
  - name: a tool called more times than it has answers
    start: { data: { ticket: T-4 } }
    mocks:
      agent: { toolCalls: [ { name: search, arguments: {} } ] }
      agent.search: [ { result: { hits: 0 } } ]
    expect: { state: COMPLETED }
  - name: a tool the case does not mock
    start: { data: { ticket: T-5 } }
    mocks:
      agent: { toolCalls: [ { name: delete_everything, arguments: {} } ] }
      agent.search: { result: { hits: 0 } }
    expect: { state: COMPLETED }
  - name: a mock of a tool no server offers
    start: { data: { ticket: T-6 } }
    mocks:
      agent: { reply: done }
      agent.drop_table: { text: dropped }
    expect: { state: COMPLETED }
  - name: an answer an MCP tool cannot give
    start: { data: { ticket: T-7 } }
    mocks:
      agent: [ { toolCalls: [ { name: search, arguments: {} } ] }, { reply: done } ]
      agent.search: { status: 200 }
    expect: { state: COMPLETED }
`,
  });
  const r = await wfxIn(['test', '--reporter', 'json'], { cwd });
  t.equal(r.code, 1, r.stderr);
  t.same(outcomes(r.stdout), [
    ["a structured result, then a text one, then the tool's own error", 'ok'],
    ['a server that cannot be reached', 'ok'],
    ['a call the person approves, with its arguments edited', 'ok'],
    [
      'a tool called more times than it has answers',
      'MOCK_EXHAUSTED: "agent.search" was called 2 times; its mock has 1 answer',
    ],
    [
      'a tool the case does not mock',
      'NO_MOCK: callAgent "agent" calls delete_everything, which none of its tools is: mock its MCP servers\' tool under "agent.delete_everything"',
    ],
    [
      'a mock of a tool no server offers',
      '"agent.drop_table" mocks an MCP tool no server of "agent" offers: their allow lists leave it out',
    ],
    ['an answer an MCP tool cannot give', '"agent.search" is an MCP tool: mock it with result, text, error or fail'],
  ]);
});

t.test("a tool's error fails the agent with failOnToolError; a header's secret the case lacks fails it", async (t) => {
  const strict = agentFlow('http://127.0.0.1:9/tickets', '\n    failOnToolError: true');
  const cwd = t.testdir({
    'triage.yaml': strict,
    'triage.test.yaml': `flow: triage.yaml
secrets: { TICKETS_TOKEN: test-token }
cases:
  - name: the tool's own error
    start: { data: { ticket: T-1 } }
    mocks:
      agent: { toolCalls: [ { name: search, arguments: {} } ] }
      agent.search: { error: index offline }
    expect: { state: FAILED, errorCode: MCP_TOOL_FAILED }
  - name: a server that cannot be reached
    start: { data: { ticket: T-2 } }
    mocks:
      agent: { toolCalls: [ { name: search, arguments: {} } ] }
      agent.search: { fail: { code: MCP_UNAVAILABLE, message: connection refused } }
    expect: { state: FAILED, errorCode: MCP_UNAVAILABLE }
`,
    nosecret: {
      'triage.yaml': strict,
      'triage.test.yaml': `flow: triage.yaml
cases:
  - name: the servers are not listed without the header's secret
    start: { data: { ticket: T-3 } }
    mocks: { agent: { reply: done } }
    expect: { state: FAILED, errorCode: SECRET_NOT_FOUND }
`,
    },
  });
  const r = await wfxIn(['test', '--reporter', 'json', 'triage.test.yaml'], { cwd });
  t.equal(r.code, 0, r.stdout);
  const lacking = await wfxIn(['test', '--reporter', 'json', 'nosecret/triage.test.yaml'], { cwd });
  t.equal(lacking.code, 0, lacking.stdout);
  t.same(outcomes(lacking.stdout), [["the servers are not listed without the header's secret", 'ok']]);
});

t.test('with --allow-network and no tool mocked, the agent reaches its real MCP server', async (t) => {
  const server = await startMcpServer(t, [
    {
      tool: { name: 'search', description: 'Searches tickets', inputSchema: { type: 'object' } },
      call: (args) => ({ content: [], structuredContent: { hits: 3, q: args.q } }),
    },
    {
      tool: { name: 'close.ticket', description: 'Closes a ticket', inputSchema: { type: 'object' } },
      call: () => ({ content: [{ type: 'text', text: 'closed' }] }),
    },
  ]);
  const cwd = t.testdir({
    'triage.yaml': agentFlow(server.url, '', server.url.replace(/\/mcp$/, '/wiki')),
    'triage.test.yaml': `flow: triage.yaml
secrets: { TICKETS_TOKEN: test-token }
cases:
  - name: the real server answers the call
    start: { data: { ticket: T-1 } }
    mocks:
      agent: [ { toolCalls: [ { name: search, arguments: { q: crash } } ] }, { reply: three } ]
    expect:
      state: COMPLETED
      variables: { agent: { toolCalls: [ { name: search, server: "${server.url}", ok: true } ] } }
`,
  });
  const offline = await wfxIn(['test', '--reporter', 'json'], { cwd });
  t.equal(offline.code, 1, 'without the network, its tools are not offered');
  t.match(outcomes(offline.stdout)[0]![1], /^NO_MOCK: callAgent "agent" calls search/);
  t.equal(server.calls.length, 0);
  const r = await wfxIn(['test', '--reporter', 'json', '--allow-network'], { cwd });
  t.equal(r.code, 0, r.stdout);
  t.same(server.calls, [{ name: 'search', arguments: { q: 'crash' } }]);
  t.ok(
    server.headers.some((h) => h.authorization === 'Bearer test-token'),
    "the header took the case's secret",
  );
});
