import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

// Issue #89 on a real daemon: the SDK's own MCP client lists an organization's flows as tools,
// calls one and reads its result; another organization's flows are not listed; a viewer cannot
// connect; a call that waits for a person says so in its progress, goes on when the person
// answers, and is cancelled with the client's cancel; every call is in the audit trail.

const GREET = '89000000-0000-4000-8000-000000000001';
const ASK = '89000000-0000-4000-8000-000000000002';
const NO_INPUTS = '89000000-0000-4000-8000-000000000003';
const OTHER_ORG = '89000000-0000-4000-8000-000000000004';

const greetYaml = (processId: string, name: string) => `processId: ${processId}
name: ${name}
description: Greets someone by name.
inputs:
  type: object
  properties: { name: { type: string, minLength: 1 } }
  required: [name]
nodes:
  start: { type: startEvent, next: greet }
  greet: { type: setVariable, variables: { greeting: "hello {name}" }, next: done }
  done: { type: endEvent }
`;

const ASK_YAML = `processId: ${ASK}
name: Ask a person
inputs:
  type: object
  properties: { question: { type: string } }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, name: Answer the question, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const NO_INPUTS_YAML = `processId: ${NO_INPUTS}
name: No inputs
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

const dir = t.testdir({});
const info = await startDaemon(t, { dataDir: dir });
const root = (await readFile(join(dir, 'bootstrap.key'), 'utf8')).trim();
const call = (key: string, method: string, path: string, body?: object) =>
  callDaemon(info.url, key, method, path, body);

async function keyOf(role: string, organization: string): Promise<string> {
  const res = await call(root, 'POST', '/admin/api-keys', { name: `${role}-${organization}`, role, organization });
  if (res.status !== 201) throw new Error(`key: ${JSON.stringify(res)}`);
  return res.body.apiKey as string;
}
async function publish(source: string, organization: string): Promise<void> {
  const res = await call(root, 'POST', '/admin/flows', { source, organization, environment: 'PRODUCTION' });
  if (res.status !== 201 && res.status !== 200) throw new Error(`publish: ${JSON.stringify(res)}`);
}

const acme = await keyOf('operator', 'acme');
const viewer = await keyOf('viewer', 'acme');
const globex = await keyOf('operator', 'globex');
await publish(greetYaml(GREET, 'Greet a person'), 'acme');
await publish(ASK_YAML, 'acme');
await publish(NO_INPUTS_YAML, 'acme');
await publish(greetYaml(OTHER_ORG, 'Greet for globex'), 'globex');

/** An SDK client connected to the daemon's /mcp with `key` (and a query, such as `wait=`). */
async function connect(key: string, query = ''): Promise<Client> {
  const client = new Client({ name: 'wfx-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${info.url}/mcp${query}`), {
    requestInit: { headers: { 'x-api-key': key } },
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}

const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

t.test("an organization's flows with inputs are its tools; another's are not", async (t) => {
  const client = await connect(acme);
  const { tools } = await client.listTools();
  t.same(
    tools.map((x) => x.name),
    ['ask_a_person', 'greet_a_person'],
  );
  const greet = tools.find((x) => x.name === 'greet_a_person')!;
  t.equal(greet.description, 'Greets someone by name.');
  t.same(greet.inputSchema.required, ['name']);
  t.equal(greet._meta?.['wfx.dev/processId'], GREET);
  const other = await connect(globex);
  t.same(
    (await other.listTools()).tools.map((x) => x.name),
    ['greet_for_globex'],
  );
  // Named by another organization's tool, the call finds nothing.
  await t.rejects(client.callTool({ name: 'greet_for_globex', arguments: { name: 'x' } }), /no tool named/);
});

t.test('a call starts the flow and answers with its result', async (t) => {
  const client = await connect(acme);
  const result = (await client.callTool({ name: 'greet_a_person', arguments: { name: 'Ada' } })) as CallToolResult;
  t.notOk(result.isError);
  t.match(result.structuredContent, { greeting: 'hello Ada' });
  t.match(JSON.parse(textOf(result)), { greeting: 'hello Ada' });
  const id = (result._meta?.['wfx.dev/execution'] as { processInstanceId: string }).processInstanceId;
  const inst = await call(acme, 'GET', `/process/instance/${id}`);
  t.equal(inst.body.state, 'COMPLETED');
  // Arguments its inputs refuse: an error result the model can read, and no execution.
  const bad = (await client.callTool({ name: 'greet_a_person', arguments: { name: '' } })) as CallToolResult;
  t.equal(bad.isError, true);
  t.match(textOf(bad), /^VALIDATION_ERROR: /);
  // Every call that started an execution is in the audit trail, with the tool and the execution.
  const trail = await call(root, 'GET', '/admin/audit?action=tools/call&limit=10');
  const records = trail.body.items as Array<{ targets: Record<string, string>; summary: Record<string, string> }>;
  t.equal(records.length, 1);
  t.match(records[0], {
    action: 'POST /mcp tools/call',
    actor: /^key:/,
    organization: 'acme',
    targets: { processInstanceId: id, processId: GREET },
    summary: { tool: 'greet_a_person' },
  });
});

t.test('a viewer cannot connect, nor a caller without a credential', async (t) => {
  await t.rejects(connect(viewer), /FORBIDDEN/);
  await t.rejects(connect('wfx_not_a_key'), /UNAUTHORIZED/);
});

t.test("a session is its credential's: another key's request with its id is not found", async (t) => {
  const client = await connect(acme);
  const session = (client.transport as StreamableHTTPClientTransport).sessionId!;
  const res = await fetch(`${info.url}/mcp`, {
    method: 'POST',
    headers: {
      'x-api-key': globex,
      'mcp-session-id': session,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(res.status, 404);
  t.match(await res.json(), { error: { code: -32001 } });
  // GET, the stream for messages a server sends unasked, is not served.
  const get = await fetch(`${info.url}/mcp`, { headers: { 'x-api-key': acme, accept: 'text/event-stream' } });
  t.equal(get.status, 405);
  await get.body?.cancel();
});

t.test('a call that waits for a person says so, and ends when the person answers', async (t) => {
  const client = await connect(acme, '?wait=120');
  const messages: string[] = [];
  let answered: Promise<unknown> | null = null;
  const result = (await client.callTool({ name: 'ask_a_person', arguments: { question: 'why?' } }, undefined, {
    onprogress: (p) => {
      messages.push(p.message ?? '');
      if (answered === null && /waiting for a person at "Answer the question"/.test(p.message ?? '')) {
        // The person answers once the call says it waits for them.
        answered = (async () => {
          const tasks = await call(acme, 'GET', `/process/tasks?processId=${ASK}`);
          const task = (tasks.body.items as Array<{ processInstanceId: string }>)[0]!;
          return call(acme, 'POST', '/process/task', {
            processInstanceId: task.processInstanceId,
            nodeId: 'ask',
            action: 'COMPLETE',
            data: { inputValue: 'because' },
          });
        })();
      }
    },
  })) as CallToolResult;
  t.match(await answered, { status: 200 });
  t.notOk(result.isError, textOf(result));
  t.match(result.structuredContent, { question: 'why?', inputValue: 'because' });
  t.ok(
    messages.some((m) => m.includes('waiting for a person')),
    messages.join(' | '),
  );
});

t.test('a call that waits longer than its wait answers that the execution still runs', async (t) => {
  const client = await connect(acme, '?wait=0');
  const result = (await client.callTool({ name: 'ask_a_person', arguments: {} })) as CallToolResult;
  t.notOk(result.isError);
  t.match(textOf(result), /is still running: it waits for a person at "Answer the question" \(node ask\)/);
  const id = (result._meta?.['wfx.dev/execution'] as { processInstanceId: string; state: string }).processInstanceId;
  t.equal((await call(acme, 'GET', `/process/instance/${id}`)).body.state, 'RUNNING');
  await call(acme, 'POST', `/process/instance/${id}/cancel`);
});

t.test("the client's cancel cancels the execution", async (t) => {
  const client = await connect(acme, '?wait=120');
  const abort = new AbortController();
  const calling = client.callTool({ name: 'ask_a_person', arguments: {} }, undefined, {
    signal: abort.signal,
    onprogress: (p) => {
      if (/waiting for a person/.test(p.message ?? '')) abort.abort('enough');
    },
  });
  await t.rejects(calling);
  const cancelled = await eventually('the cancelled executions', async () => {
    const page = await call(acme, 'GET', `/process/instances?processId=${ASK}&state=CANCELLED&limit=10`);
    const items = page.body.items as unknown[];
    return items.length >= 2 ? items : null;
  });
  t.equal(cancelled.length, 2, 'the one cancelled above, and this one');
});

t.test("wfx mcp prints a client's configuration; with --new-key, one that connects", async (t) => {
  const made = await wfxIn(['--data-dir', dir, 'mcp', '--new-key', 'ide', '--org', 'acme', '--client', 'vscode']);
  t.equal(made.code, 0, made.stderr);
  t.match(made.stderr, /^created key \S+ \(operator, acme\) for the client/);
  const config = JSON.parse(made.stdout) as {
    servers: { wfx: { type: string; url: string; headers: Record<string, string> } };
  };
  t.match(config.servers.wfx, { type: 'http', url: `${info.url}/mcp` });
  const client = new Client({ name: 'ide', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(config.servers.wfx.url), {
      requestInit: { headers: config.servers.wfx.headers },
    }),
  );
  t.teardown(() => client.close());
  t.same(
    (await client.listTools()).tools.map((x) => x.name),
    ['ask_a_person', 'greet_a_person'],
  );

  const plain = await wfxIn(['--data-dir', dir, 'mcp', '--client', 'claude-code', '--wait', '120']);
  t.equal(plain.code, 0, plain.stderr);
  t.equal(
    plain.stdout,
    `claude mcp add --transport http wfx '${info.url}/mcp?wait=120' --header "X-API-Key: $WFX_API_KEY"\n`,
  );
  t.match(plain.stderr, /set WFX_API_KEY to an operator key/);
  const bad = await wfxIn(['--data-dir', dir, 'mcp', '--wait', '301']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /must be a whole number of seconds, 0 to 300/);
});
