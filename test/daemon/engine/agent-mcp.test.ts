import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { STATE, type AgentState, type Execution } from '../../../src/daemon/state/state.js';
import { apiHarness } from '../../helpers/api.js';
import { crashImage, ended, engineHarness, type EngineHarness } from '../../helpers/engine.js';
import { FakeAiRunner, saveProvider, type FakeTurn } from '../../helpers/fake-ai.js';
import { startMcpServer, type TestTool } from '../../helpers/mcp-server.js';
import { validateFlowSource } from '../../../src/shared/flow/validate.js';

// Issue #89: a callAgent's tools from a real MCP server (the SDK's server over HTTP on
// loopback), beside its flows; the scripted model asks for them.

const LOOKUP = '11111111-1111-4111-8111-111111111111';
const LOOKUP_FLOW = `processId: ${LOOKUP}
name: Look up order
inputs: { type: object, required: [orderId], properties: { orderId: { type: string } } }
nodes:
  start: { type: startEvent, next: out }
  out: { type: outputNode, outputs: { status: shipped, orderId: "{orderId}" }, next: done }
  done: { type: endEvent }
`;

const agentFlow = (tools: string) => `processId: AUTO
name: Assistant
nodes:
  start: { type: startEvent, next: agent }
  agent:
    type: callAgent
    prompt: "Help {team}"
    tools:
${tools
  .trim()
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
    next: done
  done: { type: endEvent }
`;

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** The server's tools: the weather (read-only: safe to call again), an email (not), and one left out by `allow`. */
function tools(hold?: { email?: Promise<void>; weather?: Promise<void> }): TestTool[] {
  return [
    {
      tool: {
        name: 'get_weather',
        description: 'The weather in a city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        annotations: { readOnlyHint: true },
      },
      call: async (args) => {
        await hold?.weather;
        return {
          content: [{ type: 'text', text: 'cold' }],
          structuredContent: { city: args.city, temp: -3 },
        };
      },
    },
    {
      tool: {
        name: 'send_email',
        description: 'Sends an email',
        inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
      },
      call: async (args) => {
        await hold?.email;
        return { content: [{ type: 'text', text: `sent to ${String(args.to)}` }] };
      },
    },
    {
      tool: { name: 'fails', description: 'Always fails', inputSchema: { type: 'object' } },
      call: () => ({ content: [{ type: 'text', text: 'the mailbox is full' }], isError: true }),
    },
    {
      tool: { name: 'internal', description: 'Not for agents', inputSchema: { type: 'object' } },
      call: () => ({ content: [{ type: 'text', text: 'secret' }] }),
    },
  ];
}

async function harness(t: Test, ai: FakeAiRunner, dir?: string, h?: EngineHarness): Promise<EngineHarness> {
  const harness = await engineHarness(t, dir, h?.clock, { ai });
  if (dir) return harness;
  await saveProvider(harness.store, 'default');
  await harness.publish(LOOKUP_FLOW);
  return harness;
}

function turns(...list: FakeTurn[]): FakeAiRunner {
  return new FakeAiRunner((_call, n) => list[n - 1] ?? { text: 'final answer' });
}

const agentOf = (inst: Execution): AgentState => Object.values(inst.nodes).find((n) => n.nodeId === 'agent')!.agent!;

t.test(
  "an MCP server's tools are offered beside the flows; a call goes to the server, its result to the model",
  async (t) => {
    const server = await startMcpServer(t, tools());
    const ai = turns(
      {
        toolCalls: [
          { name: 'get_weather', arguments: { city: 'Oslo' } },
          { name: 'look_up_order', arguments: { orderId: 'A1' } },
        ],
      },
      { text: 'Cold in Oslo; A1 shipped.' },
    );
    const h = await harness(t, ai);
    const pid = await h.publish(
      agentFlow(`
- ${LOOKUP}
- { mcp: { url: "${server.url}", headers: { X-Team: "{team}" } }, allow: [get_weather, send_email, fails] }`),
    );
    const inst = await ended(h, (await h.start(pid, { team: 'blue' })).processInstanceId);
    t.equal(inst.stateCd, STATE.COMPLETED, JSON.stringify(inst.error));

    const offered = ai.calls[0]!.tools!;
    t.same(
      offered.map((x) => x.name),
      ['look_up_order', 'get_weather', 'send_email', 'fails'],
      'the flows, then the tools the server lists that `allow` names',
    );
    t.same(offered[1]!.parameters, { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    t.equal(offered[1]!.description, 'The weather in a city');
    t.same(server.calls, [{ name: 'get_weather', arguments: { city: 'Oslo' } }], 'the server got the call once');
    t.ok(
      server.headers.every((hd) => hd['x-team'] === 'blue'),
      'every request carried the headers, resolved',
    );

    const agent = agentOf(inst);
    const results = agent.messages.filter((m) => m.role === 'tool');
    t.same(
      results.map((m) => [m.name, JSON.parse(m.content) as unknown]),
      [
        ['get_weather', { city: 'Oslo', temp: -3 }],
        ['look_up_order', { status: 'shipped', orderId: 'A1' }],
      ],
      'both results are in the transcript, the MCP call first',
    );
    t.same(
      ai.calls[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.name),
      ['get_weather', 'look_up_order'],
      'and went to the model in its next turn',
    );
    t.match(agent.calls[0], { name: 'get_weather', processId: '', childInstanceId: null, ok: true });
    t.match(agent.calls[0]!.mcp, { url: server.url, tool: 'get_weather', idempotent: true });
    const result = inst.variables.agent as { toolCalls: Array<Record<string, unknown>> };
    t.match(result.toolCalls[0], { name: 'get_weather', server: server.url, ok: true });
  },
);

t.test("a tool's error goes back to the model, which goes on", async (t) => {
  const server = await startMcpServer(t, tools());
  const ai = turns({ toolCalls: [{ name: 'fails', arguments: {} }] }, { text: 'I could not.' });
  const h = await harness(t, ai);
  const pid = await h.publish(agentFlow(`- { mcp: { url: "${server.url}" } }`));
  const inst = await ended(h, (await h.start(pid, { team: 'red' })).processInstanceId);
  t.equal(inst.stateCd, STATE.COMPLETED);
  const message = agentOf(inst).messages.find((m) => m.role === 'tool')!;
  t.same(JSON.parse(message.content), { error: 'the mailbox is full' });
  t.equal(agentOf(inst).calls[0]!.ok, false);
});

t.test('a server that does not speak MCP fails the turn with MCP_UNAVAILABLE', async (t) => {
  const http = createServer((_req, res) => res.writeHead(404).end('no such page'));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => http.close(() => resolve())));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const ai = turns({ text: 'never asked' });
  const h = await harness(t, ai);
  const pid = await h.publish(agentFlow(`- { mcp: { url: "${url}" } }`));
  const inst = await ended(h, (await h.start(pid, { team: 'x' })).processInstanceId);
  t.equal(inst.stateCd, STATE.FAILED);
  t.equal(inst.error?.code, 'MCP_UNAVAILABLE');
  t.match(inst.error?.message, url);
  t.equal(ai.calls.length, 0, 'no model call without its tools');
});

t.test('a call under way at a crash: made again if its tool says that is safe, else reported unknown', async (t) => {
  for (const [tool, args, again] of [
    ['send_email', { to: 'ada@example.com' }, false],
    ['get_weather', { city: 'Bergen' }, true],
  ] as const) {
    await t.test(tool, async (t) => {
      const held = gate();
      t.teardown(held.open);
      const server = await startMcpServer(t, tools({ email: held.promise, weather: held.promise }));
      const first = turns({ toolCalls: [{ name: tool, arguments: args }] });
      const h = await harness(t, first);
      const started = await h.start(await h.publish(agentFlow(`- { mcp: { url: "${server.url}" } }`)), {
        team: 'green',
      });
      await server.called(1);
      const image = await crashImage(t, h);

      const after = turns({ text: 'done' });
      const h2 = await harness(t, after, image, h);
      if (again) {
        // The call is made again; the second one is let through.
        await server.called(2);
        held.open();
      }
      const inst = await ended(h2, started.processInstanceId);
      t.equal(inst.stateCd, STATE.COMPLETED);
      t.equal(server.calls.length, again ? 2 : 1, again ? 'called again' : 'not called again');
      const result = agentOf(inst).messages.find((m) => m.role === 'tool')!;
      if (again) t.same(JSON.parse(result.content), { city: 'Bergen', temp: -3 });
      else t.match(JSON.parse(result.content), { error: /whether it took effect is unknown; it was not repeated/ });
      t.equal(after.calls.length, 1, 'the model is asked once, with the outcome');
    });
  }
});

t.test('the flow format: an MCP entry is checked where it is written', async (t) => {
  const problems = (tools: string) => {
    const v = validateFlowSource(agentFlow(tools).replace('AUTO', '89000000-0000-4000-8000-00000000000a'));
    return v.ok ? [] : v.problems.map((p) => `${p.code} ${p.message}`);
  };
  t.same(problems(`- { mcp: { url: "https://tools.example.com/mcp" }, allow: [a_tool, tickets.close-1] }`), []);
  t.match(problems(`- { mcp: { url: "ftp://tools.example.com/mcp" } }`), [/^SCHEMA /]);
  t.match(problems(`- { mcp: { url: "https://x.example.com/mcp" }, allow: ["not a name"] }`), [/^SCHEMA /]);
  t.match(problems(`- { mcp: { url: "https://x.example.com/mcp", token: "t" } }`), [/^SCHEMA /]);
  t.match(
    problems(`
- { mcp: { url: "https://x.example.com/mcp" } }
- { mcp: { url: "https://x.example.com/mcp" }, allow: [b] }`),
    [/^SCHEMA MCP server https:\/\/x.example.com\/mcp is a tool entry of this agent already/],
  );
});

t.test(
  "a header's {secret.NAME} is opened only as the request goes out, and taken out of what comes back",
  async (t) => {
    const server = await startMcpServer(t, [
      {
        tool: { name: 'whoami', description: 'Echoes the credential it got', inputSchema: { type: 'object' } },
        call: () => ({ content: [{ type: 'text', text: `you sent ${server.headers.at(-1)?.authorization}` }] }),
      },
    ]);
    const ai = turns({ toolCalls: [{ name: 'whoami', arguments: {} }] }, { text: 'ok' });
    const h = await apiHarness(t, { ai });
    await saveProvider(h.store, 'default');
    const admin = await h.key('admin', 'default');
    const value = 'tok-8f2c61d0e4';
    const set = await h.call(admin, { method: 'PUT', url: '/admin/secrets/values/TOOLS_TOKEN', payload: { value } });
    t.equal(set.statusCode, 200, set.body);
    const pid = await h.publish(
      agentFlow(`- { mcp: { url: "${server.url}", headers: { Authorization: "Bearer {secret.TOOLS_TOKEN}" } } }`),
    );
    const inst = await ended(h, (await h.start(pid, { team: 'ops' })).processInstanceId);
    t.equal(inst.stateCd, STATE.COMPLETED, JSON.stringify(inst.error));
    t.ok(
      server.headers.length > 0 && server.headers.every((hd) => hd.authorization === `Bearer ${value}`),
      'the server got the value',
    );
    const result = agentOf(inst).messages.find((m) => m.role === 'tool')!;
    t.equal(result.content, 'you sent Bearer [secret TOOLS_TOKEN]', 'the echo is written as the secret name');
    t.notMatch(JSON.stringify(inst), value, 'the execution holds no value');
  },
);
