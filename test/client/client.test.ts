import t from 'tap';
import type { Test } from 'tap';
import { progressOf, WfxClient } from '../../src/client/client.js';
import { ApiClient, path, withQuery } from '../../src/client/http.js';
import { isWfxError } from '../../src/shared/errors.js';
import { newApiKey } from '../../src/daemon/auth/api-keys.js';
import { buildServer } from '../../src/daemon/api/server.js';
import type { Role } from '../../src/daemon/state/state.js';
import { WebhookReceiver } from '../../src/daemon/triggers/webhooks.js';
import { engineHarness } from '../helpers/engine.js';
import { logStreamServer } from '../helpers/log-stream-server.js';
import { codeOf } from '../helpers/error-code.js';

const ASK_ID = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
const ASK = `processId: ${ASK_ID}
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, formTitle: "How many?", next: done }
  done: { type: endEvent }
`;

/** A request as the daemon's router saw it: its URL and the path parameters it matched. */
interface Seen {
  readonly url: string;
  readonly params: Record<string, string>;
}

/**
 * The real daemon server (buildServer) listening on 127.0.0.1, port 0, with a hook that records
 * what each request reached the routes as; `clientAs(role, organization)` makes a key and a
 * WfxClient with it.
 */
async function daemon(t: Test) {
  const h = await engineHarness(t);
  const webhooks = new WebhookReceiver({ store: h.store, engine: h.engine, now: h.clock.now });
  // The backup is a stand-in that reports what it was asked: the route and the client are under test.
  const backup = async (directory: string) => ({ directory, snapshotSeq: 1, lastSeq: 2, files: 3, bytes: 4 });
  const app = buildServer({ store: h.store, engine: h.engine, webhooks, now: h.clock.now, backup });
  const seen: Seen[] = [];
  app.addHook('preHandler', async (request) => {
    seen.push({ url: request.url, params: { ...(request.params as Record<string, string>) } });
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const clientAs = async (role: Role, organization: string | null): Promise<WfxClient> => {
    const at = h.clock.now();
    if (organization !== null && !h.store.state.organizations[organization])
      await h.store.commit({ type: 'organization.created', name: organization, at: at.toISOString() });
    const made = newApiKey({ name: `${role}@${organization ?? 'system'}`, organization, role, at });
    await h.store.commit({ type: 'apiKey.created', key: made.key });
    return new WfxClient({ url, apiKey: made.apiKey, credentialSource: 'test' });
  };
  return { url, seen, clientAs, h };
}

t.test('path() puts each value in as one encoded segment; withQuery() leaves out undefined', async (t) => {
  t.equal(path`/process/instance/${'a/b?c#d e'}/logs`, '/process/instance/a%2Fb%3Fc%23d%20e/logs');
  t.equal(path`/admin/api-keys/${'k1'}`, '/admin/api-keys/k1');
  t.equal(withQuery('/process/tasks', { limit: 5, processId: undefined }), '/process/tasks?limit=5');
  t.equal(withQuery('/process/tasks', {}), '/process/tasks');
  t.equal(withQuery('/x', { follow: false, q: 'a&b' }), '/x?follow=false&q=a%26b');
});

t.test('an id holding / ? # reaches the daemon intact, as one path parameter', async (t) => {
  const d = await daemon(t);
  const client = await d.clientAs('admin', null);
  const id = 'a/b?c#d';
  t.equal(await codeOf(client.instances.get(id)), 'INSTANCE_NOT_FOUND', 'the execution route answered, not "no route"');
  t.equal(d.seen.at(-1)!.params.id, id);
  t.equal(await codeOf(client.instances.list(id, { limit: 5 })), 'PROCESS_NOT_FOUND');
  t.equal(d.seen.at(-1)!.params.id, id);
  t.equal(await codeOf(client.instances.cancel(id)), 'INSTANCE_NOT_FOUND');
  t.equal(d.seen.at(-1)!.params.id, id);
  t.equal(await codeOf(client.flows.get(id)), 'PROCESS_NOT_FOUND');
  t.equal(d.seen.at(-1)!.params.processId, id);
  t.equal(await codeOf(client.keys.get('k/../1')), 'NOT_FOUND');
  t.equal(d.seen.at(-1)!.params.keyId, 'k/../1');
});

t.test('an execution through the client: publish, start, list, get, logs, tasks, answer', async (t) => {
  const d = await daemon(t);
  const client = await d.clientAs('admin', null);
  const published = await client.flows.publish({ source: ASK });
  t.match(published, { processId: ASK_ID, version: '1', created: true, environment: 'PRODUCTION' });
  t.match((await client.flows.list()).items, [{ processId: ASK_ID, active: { PRODUCTION: '1' } }]);
  t.match(await client.flows.get(ASK_ID, '1'), { processId: ASK_ID, version: '1', definition: { name: 'Ask' } });
  t.match((await client.flows.startable({ limit: 10 })).items, [
    { processId: ASK_ID, activeVersions: { PRODUCTION: '1', DEVELOPMENT: null } },
  ]);

  const started = await client.process.start({ processId: ASK_ID, data: { n: 1 }, correlationKey: 'k-1' });
  t.equal(d.seen.at(-1)!.url, '/process/start', 'a system key starts through /process/start');
  t.match(started, { processId: ASK_ID, status: 'started' });
  const id = started.processInstanceId;

  const page = await client.instances.list(ASK_ID, { stateCd: 0, limit: 10 });
  t.same(
    page.items.map((i) => i.processInstanceId),
    [id],
  );
  t.same(page.items[0]!.waitingNodeIds, ['ask']);
  t.match(await client.instances.search({ state: 'RUNNING', correlationKey: 'k-1', limit: 5 }), {
    items: [{ processInstanceId: id, environment: 'PRODUCTION', errorCode: null }],
    nextCursor: null,
  });
  t.equal(d.seen.at(-1)!.url, '/process/instances?state=RUNNING&correlationKey=k-1&limit=5');
  t.equal(client.instances.consoleUrl(id), `${client.connection.url}/executions/${id}`);
  const inst = await client.instances.get(id);
  t.match(inst, { processInstanceId: id, stateCd: 0, environment: 'PRODUCTION', data: { n: 1 } });
  t.match(
    inst.nodes.find((n) => n.nodeId === 'ask'),
    { statusCd: 1, wait: { kind: 'input', inputType: 'number', formTitle: 'How many?' } },
  );

  const tasks = await client.tasks.list({ processId: ASK_ID });
  t.match(tasks, { items: [{ processInstanceId: id, nodeId: 'ask', inputType: 'number' }], nextCursor: null });
  t.equal(
    await codeOf(
      client.tasks.answer({ processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x' } }),
    ),
    'VALIDATION_ERROR',
    'an answer that does not fit is refused; the node keeps waiting',
  );
  t.same(
    await client.tasks.answer({ processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 7 } }),
    { processInstanceId: id, status: 'resumed' },
  );
  const logs = await client.instances.logs(id);
  t.ok(logs.length > 0, 'the log entries so far');
  t.match(logs[0], { nodeId: String, level: 'INFO', message: String, timestamp: String });

  t.match(await client.events.send({ eventType: 'nobody-waits', correlationKey: 'k', ttlSeconds: 60 }), {
    status: 'buffered',
    matched: [],
  });
});

t.test('an organization key starts through /process/exec', async (t) => {
  const d = await daemon(t);
  const admin = await d.clientAs('admin', 'acme');
  await admin.flows.publish({ source: ASK });
  const operator = await d.clientAs('operator', 'acme');
  const started = await operator.process.start({
    processId: ASK_ID,
    data: {},
    environment: 'PRODUCTION',
    version: '1',
  });
  t.equal(d.seen.at(-1)!.url, '/process/exec?environment=PRODUCTION&versionNumber=1');
  t.match(await operator.instances.get(started.processInstanceId), { processVersion: '1' });
  const asked = d.seen.filter((r) => r.url === '/auth/whoami').length;
  t.ok(asked > 0, 'the first start asked who the key is');
  await operator.process.start({ processId: ASK_ID, data: {} });
  t.equal(d.seen.at(-1)!.url, '/process/exec');
  t.equal(d.seen.filter((r) => r.url === '/auth/whoami').length, asked, 'who the key is was asked once');
  t.equal(
    await codeOf(operator.process.startAny({ processId: ASK_ID })),
    'FORBIDDEN',
    'an organization key may not use /process/start',
  );
});

t.test(
  'admin resources through the client: keys, environments, webhooks, email connections, triggers, whoami, health',
  async (t) => {
    const d = await daemon(t);
    const client = await d.clientAs('admin', null);
    t.match(await client.auth.whoami(), {
      system: true,
      organization: null,
      permissions: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WORKFLOW_PUBLISH', 'ADMIN'],
    });
    t.match(await client.health(), { status: 'ok', version: String });

    const key = await client.keys.create({ name: 'ci', role: 'viewer', organization: 'acme' });
    t.match(key, { name: 'ci', role: 'viewer', organization: 'acme', apiKey: String, status: 'ACTIVE' });
    t.ok((await client.keys.list()).items.some((k) => k.keyId === key.keyId));
    t.match(await client.keys.update(key.keyId, { rateLimitPerMinute: 10 }), { rateLimitPerMinute: 10 });
    t.match(await client.keys.setStatus(key.keyId, 'suspend'), { status: 'SUSPENDED' });
    t.match(await client.keys.get(key.keyId), { status: 'SUSPENDED' });

    t.match(await client.environments.set('DEVELOPMENT', 'API_URL', 'http://x'), {
      environment: 'DEVELOPMENT',
      name: 'API_URL',
    });
    t.same((await client.environments.variables('DEVELOPMENT')).variables, { API_URL: 'http://x' });
    t.match(await client.environments.unset('DEVELOPMENT', 'API_URL'), { deleted: true });
    t.equal(await codeOf(client.environments.unset('DEVELOPMENT', 'API_URL')), 'NOT_FOUND');

    const hook = await client.webhooks.register({ name: 'gh', provider: 'GITHUB' });
    t.match(hook, { name: 'gh', endpoints: [{ environment: 'ALL', token: String, secret: String }] });
    t.match((await client.webhooks.list()).items, [{ name: 'gh' }]);
    t.match(await client.webhooks.get('gh'), { name: 'gh', endpoints: [{ secrets: 1 }] });
    t.match(await client.webhooks.sign('gh', { body: Buffer.from('{}').toString('base64') }), {
      environment: 'ALL',
      headers: Object,
    });
    t.match(await client.webhooks.rotate('gh', { previousValidFor: '0s' }), { name: 'gh', previousValidUntil: null });
    t.same(await client.webhooks.deliveries('gh'), { name: 'gh', items: [], refused: 0 });
    t.same(await client.webhooks.delete('gh'), { name: 'gh', deleted: true });
    t.equal(await codeOf(client.webhooks.get('gh')), 'NOT_FOUND');

    t.match(
      await client.emailConnections.create({ name: 'support', host: 'imap.example.com', user: 'u', password: 'p' }),
      { name: 'support', port: 993, security: 'TLS', hasPassword: true },
    );
    t.notOk('password' in (await client.emailConnections.get('support')));
    t.match(await client.emailConnections.update('support', { mailbox: 'Tickets' }), { mailbox: 'Tickets' });
    t.match((await client.emailConnections.list()).items, [{ name: 'support' }]);
    t.same(await client.emailConnections.delete('support'), { name: 'support', deleted: true });

    t.same(await client.triggers.list(), { items: [] });
    t.equal(await codeOf(client.admin.backup('relative/dir')), 'VALIDATION_ERROR', 'an absolute directory only');
    t.same(await client.admin.backup('/copy'), { directory: '/copy', snapshotSeq: 1, lastSeq: 2, files: 3, bytes: 4 });
  },
);

t.test('failures are WfxErrors: UNAUTHORIZED naming the credential, DAEMON_UNREACHABLE', async (t) => {
  const d = await daemon(t);
  const stranger = new WfxClient({ url: d.url, apiKey: 'wfx_not-a-key', credentialSource: '--api-key' });
  try {
    await stranger.auth.whoami();
    t.fail('a wrong key is refused');
  } catch (err) {
    t.ok(isWfxError(err));
    t.match(err, { code: 'UNAUTHORIZED', message: /--api-key/ });
  }
  // A port that was listening a moment ago and is not now.
  const gone = buildServerUrlThatIsClosed();
  t.equal(
    await codeOf(new WfxClient({ url: await gone, apiKey: null, credentialSource: 'none' }).health()),
    'DAEMON_UNREACHABLE',
  );
  t.ok(
    new WfxClient(new ApiClient({ url: d.url, apiKey: null, credentialSource: 'none' })).http instanceof ApiClient,
    'a transport is taken as it is',
  );
});

t.test('a request the daemon asks to send again (a partition moving) is sent again, a few times', async (t) => {
  const { createServer } = await import('node:http');
  let refusals = 0;
  const seen: string[] = [];
  const server = createServer((request, reply) => {
    seen.push(`${request.method} ${request.url}`);
    const code =
      request.url === '/other'
        ? 'SERVICE_UNAVAILABLE'
        : request.url === '/crowded'
          ? 'TOO_MANY_CONNECTIONS'
          : 'PARTITION_MOVING';
    if (refusals > 0) {
      refusals--;
      reply.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
      return reply.end(JSON.stringify({ error: code, message: 'moving', retryAfter: 0 }));
    }
    reply.writeHead(200, { 'content-type': 'application/json' });
    reply.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const http = new ApiClient({
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    apiKey: null,
    credentialSource: 'none',
  });
  refusals = 2;
  t.same(await http.post('/process/task', { x: 1 }), { ok: true }, 'answered once the partition has moved');
  t.equal(seen.length, 3, 'sent three times');
  refusals = 10;
  seen.length = 0;
  t.equal(await codeOf(http.get('/moving')), 'PARTITION_MOVING', 'given up after five tries');
  t.equal(seen.length, 5);
  refusals = 1;
  seen.length = 0;
  t.equal(await codeOf(http.get('/other')), 'SERVICE_UNAVAILABLE', 'another 503 is not sent again');
  t.equal(seen.length, 1);
  refusals = 1;
  seen.length = 0;
  t.same(await http.get('/crowded'), { ok: true }, 'a daemon serving its most connections is asked again');
  t.equal(seen.length, 2);
});

/** The URL of a loopback port that no longer listens. */
async function buildServerUrlThatIsClosed(): Promise<string> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

t.test('model providers and memory through the client; the key is never in an answer', async (t) => {
  const d = await daemon(t);
  const client = await d.clientAs('admin', 'acme');
  const created = await client.aiProviders.create({
    name: 'local-llm',
    kind: 'openai-compatible',
    baseUrl: 'http://127.0.0.1:11434/v1',
    model: 'llama3.2',
    apiKey: 'sk-client-test-secret',
    isDefault: true,
  });
  t.match(created, { name: 'local-llm', hasApiKey: true, isDefault: true });
  t.notMatch(JSON.stringify(created), /sk-client-test-secret/);
  t.match((await client.aiProviders.list()).items, [{ name: 'local-llm' }]);
  t.match(await client.aiProviders.update('local-llm', { apiKey: null }), { hasApiKey: false });
  t.match(await client.aiProviders.get('local-llm'), { model: 'llama3.2' });
  t.equal(await codeOf(client.aiProviders.test('local-llm')), 'SERVICE_UNAVAILABLE', 'no runner in this server');
  t.equal(await codeOf(client.aiProviders.get('nope')), 'NOT_FOUND');
  t.same(await client.aiProviders.delete('local-llm'), { name: 'local-llm', deleted: true });

  await d.h.store.commit({
    type: 'memory.written',
    organization: 'acme',
    namespace: 'chat',
    key: 'customer/7',
    entry: { value: ['hi'], updatedAt: '2026-11-21T10:00:00.000Z', expiresAt: null },
  });
  t.match(await client.memory.list({ namespace: 'chat' }), {
    items: [{ key: 'customer/7', size: 6 }],
    nextCursor: null,
  });
  t.match(await client.memory.get('chat', 'customer/7'), { value: ['hi'] });
  t.equal(d.seen.at(-1)!.params.key, 'customer/7', 'the key reached the daemon as one parameter');
  t.same(await client.memory.delete('chat', 'customer/7'), { namespace: 'chat', key: 'customer/7', deleted: true });
  t.equal(await codeOf(client.memory.get('chat', 'customer/7')), 'NOT_FOUND');
});

t.test('the log stream leaves progress events out unless asked; progressOf reads them', async (t) => {
  const { url } = await logStreamServer(t, [
    { entry: { nodeId: 'classify', message: 'started' } },
    { progress: { nodeId: 'classify', nodeInstanceId: 'n2', delta: 'Hel' } },
    { progress: { nodeId: 'classify', nodeInstanceId: 'n2', delta: 'lo' } },
    { entry: { nodeId: 'classify', message: 'completed' } },
    { end: true },
  ]);
  const client = new WfxClient({ url, apiKey: null, credentialSource: 'test' });
  const plain = [];
  for await (const ev of client.instances.streamLogs('x')) plain.push(ev.event ?? `entry ${ev.id}`);
  t.same(plain, ['entry 1', 'entry 2', 'end'], 'entries and end only');
  t.same(
    (await client.instances.logs('x')).map((e) => e.message),
    ['started', 'completed'],
  );
  const deltas: string[] = [];
  const all: string[] = [];
  for await (const ev of client.instances.streamLogs('x', { progress: true })) {
    all.push(ev.event ?? `entry ${ev.id}`);
    const p = progressOf(ev);
    if (p) deltas.push(`${p.nodeInstanceId}:${p.delta}`);
  }
  t.same(all, ['entry 1', 'progress', 'progress', 'entry 2', 'end']);
  t.same(deltas, ['n2:Hel', 'n2:lo'], 'each piece whole, though it came in two writes');
  t.equal(progressOf({ event: 'end', data: '{}' }), null);
});
