import '../../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import type { AccessLogEntry } from '../../../../src/daemon/api/auth.js';
import { providerKeyContext } from '../../../../src/daemon/state/secret-fields.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../../helpers/api.js';
import { eventually } from '../../../helpers/eventually.js';
import { fakeAiRunner } from '../../../helpers/fake-ai.js';

const OPENAI = { name: 'gpt', kind: 'openai-compatible', baseUrl: 'https://api.example.com/v1', model: 'gpt-4o-mini' };
/** A key nobody could mistake for anything else, to search for in answers and logs. */
const SECRET = 'sk-wfx-test-8c1f0a4e9b7d4c2aa1f3e5d7c9b1a3e5';

/** Tiny files that start like GGUF models (the route checks the magic bytes, not the model), in one test dir. */
function ggufFiles(t: Test, ...names: string[]): string[] {
  const dir = t.testdir({});
  return names.map((name) => {
    const path = join(dir, name);
    writeFileSync(path, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(60)]));
    return path;
  });
}

async function setup(t: Test, ai = fakeAiRunner()) {
  const h = await apiHarness(t, { ai });
  const admin = await h.key('admin', 'acme');
  /** A system key: only it registers local models, files on the daemon's host (its organization here: default). */
  const operator = await h.key('admin', null);
  const post = (key: TestKey, payload: object, url = '/admin/ai-providers') =>
    h.call(key, { method: 'POST', url, payload });
  return { h, admin, operator, post, ai };
}

t.test('an openai-compatible provider: created, listed, read, changed, deleted; never its key', async (t) => {
  const { h, admin, post } = await setup(t);
  const created = await post(admin, { ...OPENAI, apiKey: SECRET });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), {
    name: 'gpt',
    organization: 'acme',
    kind: 'openai-compatible',
    baseUrl: 'https://api.example.com/v1',
    model: 'gpt-4o-mini',
    isDefault: false,
    hasApiKey: true,
  });
  t.notOk('apiKey' in created.json());
  const stored = Object.values(h.store.state.aiProviders)[0]!;
  t.match(stored.apiKey, /^wfxenc:v1:[0-9a-f]{16}:/, 'kept sealed');
  t.notMatch(JSON.stringify(h.store.state), SECRET, 'nowhere in the state in plain text');
  t.equal(h.engine.secrets.open(stored.apiKey!, providerKeyContext(stored)), SECRET, 'for the daemon to open');
  const patched = await h.call(admin, {
    method: 'PATCH',
    url: '/admin/ai-providers/gpt',
    payload: { apiKey: `${SECRET}-2` },
  });
  t.equal(patched.statusCode, 200, patched.body);
  const repatched = Object.values(h.store.state.aiProviders)[0]!;
  t.equal(
    h.engine.secrets.open(repatched.apiKey!, providerKeyContext(repatched)),
    `${SECRET}-2`,
    'a new key sealed too',
  );
  t.notMatch(JSON.stringify(h.store.state), SECRET);

  const list = await h.call(admin, { method: 'GET', url: '/admin/ai-providers' });
  t.match(list.json(), { items: [{ name: 'gpt', hasApiKey: true }] });
  const changed = await h.call(admin, {
    method: 'PATCH',
    url: '/admin/ai-providers/gpt',
    payload: { model: 'gpt-4.1', kind: 'openai-compatible' },
  });
  t.equal(changed.statusCode, 200, changed.body);
  t.match(changed.json(), { model: 'gpt-4.1', hasApiKey: true }, 'the key stays when not named');
  const removed = await h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/gpt', payload: { apiKey: null } });
  t.match(removed.json(), { hasApiKey: false }, 'apiKey: null removes it');
  t.notOk('apiKey' in Object.values(h.store.state.aiProviders)[0]!);

  const deleted = await h.call(admin, { method: 'DELETE', url: '/admin/ai-providers/gpt' });
  t.same(deleted.json(), { name: 'gpt', deleted: true });
  t.equal((await h.call(admin, { method: 'GET', url: '/admin/ai-providers/gpt' })).json().error, 'NOT_FOUND');
  t.same(h.store.state.aiProviders, {});
});

t.test('a local provider: an absolute GGUF path, its file name as the model label, threads', async (t) => {
  const { operator: admin, post, h } = await setup(t);
  const [path, other] = ggufFiles(t, 'tiny-model.gguf', 'other.gguf') as [string, string];
  const created = await post(admin, { name: 'tiny', kind: 'local', modelPath: path, threads: 2, contextSize: 512 });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { kind: 'local', modelPath: path, model: 'tiny-model', threads: 2, hasApiKey: false });
  t.notOk('baseUrl' in created.json());
  const moved = await h.call(admin, {
    method: 'PATCH',
    url: '/admin/ai-providers/tiny',
    payload: { modelPath: other, threads: null },
  });
  t.match(
    moved.json(),
    { modelPath: other, model: 'other' },
    'a label that followed the file name follows the new one',
  );
  t.notOk('threads' in moved.json(), 'threads: null removes it');
  const labelled = await h.call(admin, {
    method: 'PATCH',
    url: '/admin/ai-providers/tiny',
    payload: { model: 'my-label' },
  });
  t.match(labelled.json(), { model: 'my-label' });
  const again = await h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/tiny', payload: { modelPath: path } });
  t.match(again.json(), { model: 'my-label' }, 'a label of its own stays');
});

t.test('validation: each kind its own fields, with a VALIDATION_ERROR naming the problem', async (t) => {
  const { admin, operator, post, h } = await setup(t);
  const [gguf] = ggufFiles(t, 'a.gguf') as [string];
  const notGguf = join(gguf, '..', 'weights.bin');
  writeFileSync(notGguf, 'not a model');
  const cases: Array<[string, object, RegExp]> = [
    ['openai-compatible without baseUrl', { name: 'a', kind: 'openai-compatible', model: 'm' }, /baseUrl/],
    [
      'openai-compatible without model',
      { name: 'a', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1' },
      /model/,
    ],
    ['a base URL that is not a URL', { ...OPENAI, baseUrl: 'not a url' }, /not a URL/],
    ['a base URL of another scheme', { ...OPENAI, baseUrl: 'ftp://example.com/v1' }, /http or https/],
    ['a base URL with credentials', { ...OPENAI, baseUrl: 'https://user:pw@example.com/v1' }, /credentials/],
    ['a base URL with a fragment', { ...OPENAI, baseUrl: 'https://example.com/v1#x' }, /fragment/],
    ['a local field on openai-compatible', { ...OPENAI, threads: 2 }, /threads is for local/],
    ['local without modelPath', { name: 'a', kind: 'local' }, /modelPath/],
    ['a relative modelPath', { name: 'a', kind: 'local', modelPath: 'models/x.gguf' }, /absolute/],
    ['a modelPath that does not exist', { name: 'a', kind: 'local', modelPath: '/nonexistent/x.gguf' }, /ENOENT/],
    ['a modelPath that is no GGUF file', { name: 'a', kind: 'local', modelPath: notGguf }, /not a GGUF/],
    ['an apiKey on local', { name: 'a', kind: 'local', modelPath: gguf, apiKey: SECRET }, /apiKey is for openai/],
    ['threads over 64', { name: 'a', kind: 'local', modelPath: gguf, threads: 65 }, /threads/],
    ['an unknown kind', { name: 'a', kind: 'anthropic', model: 'm' }, /kind/],
    ['a reserved name', { ...OPENAI, name: '__proto__' }, /name/],
    ['an unknown field', { ...OPENAI, temperature: 1 }, /additional/],
  ];
  for (const [what, body, re] of cases) {
    const res = await post((body as { kind?: string }).kind === 'local' ? operator : admin, body);
    t.equal(res.statusCode, 400, what);
    t.equal(res.json().error, 'VALIDATION_ERROR', what);
    t.match(`${res.json().message} ${JSON.stringify(res.json().details ?? '')}`, re, what);
    t.notMatch(res.body, SECRET, `${what}: never the key`);
  }
  t.same(h.store.state.aiProviders, {}, 'nothing was saved');

  t.equal((await post(admin, OPENAI)).statusCode, 201);
  const twice = await post(admin, OPENAI);
  t.equal(twice.json().error, 'VALIDATION_ERROR', 'a name in use');
  const kind = await h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/gpt', payload: { kind: 'local' } });
  t.equal(kind.json().error, 'VALIDATION_ERROR', 'the kind never changes');
  t.match(kind.json().message, /kind never changes/);
  const empty = await h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/gpt', payload: {} });
  t.equal(empty.json().error, 'VALIDATION_ERROR', 'a PATCH changes something');
  const bad = await h.call(admin, {
    method: 'PATCH',
    url: '/admin/ai-providers/gpt',
    payload: { baseUrl: 'https://k:v@example.com' },
  });
  t.equal(bad.json().error, 'VALIDATION_ERROR', 'a change is checked as a creation is');
  t.equal(Object.values(h.store.state.aiProviders)[0]!.baseUrl, OPENAI.baseUrl, 'and not saved');
});

t.test('one default per organization: making one the default clears the others', async (t) => {
  const { admin, post, h } = await setup(t);
  const other = await h.key('admin', 'other');
  t.equal((await post(admin, { ...OPENAI, name: 'a', isDefault: true })).statusCode, 201);
  t.equal((await post(other, { ...OPENAI, name: 'x', isDefault: true })).statusCode, 201);
  t.equal((await post(admin, { ...OPENAI, name: 'b', isDefault: true })).statusCode, 201);
  const defaults = async (key: TestKey) =>
    (
      (await h.call(key, { method: 'GET', url: '/admin/ai-providers' })).json() as {
        items: Array<{ name: string; isDefault: boolean }>;
      }
    ).items.map((p) => `${p.name}:${p.isDefault}`);
  t.same(await defaults(admin), ['a:false', 'b:true']);
  await h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/a', payload: { isDefault: true } });
  t.same(await defaults(admin), ['a:true', 'b:false']);
  t.same(await defaults(other), ['x:true'], "another organization's default is its own");
});

t.test("another organization's provider is 404, never visible; a system admin names the organization", async (t) => {
  const { admin, post, h } = await setup(t);
  const other = await h.key('admin', 'other');
  const system = await h.key('admin', null);
  const viewer = await h.key('viewer', 'acme');
  await post(admin, { ...OPENAI, apiKey: SECRET });
  for (const [method, url] of [
    ['GET', '/admin/ai-providers/gpt'],
    ['PATCH', '/admin/ai-providers/gpt'],
    ['DELETE', '/admin/ai-providers/gpt'],
    ['POST', '/admin/ai-providers/gpt/test'],
  ] as const) {
    const res = await h.call(other, { method, url, ...(method === 'PATCH' && { payload: { model: 'x' } }) });
    t.equal(res.statusCode, 404, `${method} ${url}`);
    t.equal(res.json().error, 'NOT_FOUND');
  }
  t.same((await h.call(other, { method: 'GET', url: '/admin/ai-providers' })).json(), { items: [] });
  t.equal(
    (await h.call(viewer, { method: 'GET', url: '/admin/ai-providers' })).json().error,
    'FORBIDDEN',
    'permission ADMIN',
  );
  t.equal((await h.call(system, { method: 'GET', url: '/admin/ai-providers/gpt' })).statusCode, 404, 'default org');
  t.equal((await h.call(system, { method: 'GET', url: '/admin/ai-providers/gpt?organization=acme' })).statusCode, 200);
  t.equal(
    (await h.call(system, { method: 'GET', url: '/admin/ai-providers' })).json().items.length,
    1,
    'a system admin lists every organization',
  );
  t.equal(Object.values(h.store.state.aiProviders).length, 1, 'nothing changed');
});

t.test('test: a tiny prompt through the runner, no retries; model, latency, tokens and text', async (t) => {
  const { admin, post, h, ai } = await setup(t);
  await post(admin, { ...OPENAI, apiKey: SECRET });
  const res = await h.call(admin, { method: 'POST', url: '/admin/ai-providers/gpt/test' });
  t.equal(res.statusCode, 200, res.body);
  const body = res.json() as { model: string; latencyMs: number; usage: object; text: string };
  t.match(body, { model: 'fake-1', usage: { inputTokens: 7, outputTokens: 1 }, text: 'ready' });
  t.ok(Number.isInteger(body.latencyMs) && body.latencyMs >= 0);
  t.equal(ai.calls.length, 1);
  const { call } = ai.calls[0]!;
  t.match(call, { organization: 'acme', provider: 'gpt', responseFormat: 'text', repairs: 0 });
  t.equal(call.retry.maxAttempts, 1, 'one attempt');
  t.ok(call.maxTokens! <= 32, 'a small answer');
  t.ok(call.timeoutMs <= 60_000 && call.timeoutMs >= 1000);
  t.equal(ai.calls[0]!.provider, Object.values(h.store.state.aiProviders)[0]!.providerId, 'the provider named');
});

t.test('test: a failure is 502 AI_PROVIDER_TEST_FAILED carrying the node failure code, never the key', async (t) => {
  const ai = fakeAiRunner(() => ({ ok: false, code: 'AI_AUTH', message: `401 Incorrect API key provided: ${SECRET}` }));
  const { admin, post, h } = await setup(t, ai);
  await post(admin, { ...OPENAI, apiKey: SECRET });
  const res = await h.call(admin, { method: 'POST', url: '/admin/ai-providers/gpt/test' });
  t.equal(res.statusCode, 502);
  t.equal(res.json().error, 'AI_PROVIDER_TEST_FAILED');
  t.same(res.json().details, { code: 'AI_AUTH' });
  t.match(res.json().message, /^AI_AUTH: 401 Incorrect API key provided/);
  t.notMatch(res.body, SECRET, 'the key is cut out of what the provider said');
});

t.test('test: a failure is a WARN line in the daemon log with its code, no ERROR, no stack', async (t) => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  const ai = fakeAiRunner(() => ({ ok: false, code: 'AI_NETWORK', message: 'connect ECONNREFUSED 127.0.0.1:9' }));
  const h: ApiHarness = await apiHarness(t, { ai, logger });
  const admin = await h.key('admin', 'acme');
  await h.call(admin, { method: 'POST', url: '/admin/ai-providers', payload: OPENAI });
  const res = await h.call(admin, { method: 'POST', url: '/admin/ai-providers/gpt/test' });
  t.equal(res.statusCode, 502);
  t.match(
    lines.find((l) => l.code === 'AI_PROVIDER_TEST_FAILED'),
    { level: 40, details: { code: 'AI_NETWORK' } },
    'a WARN line with the codes',
  );
  t.notOk(
    lines.some((l) => (l.level as number) >= 50),
    'no ERROR line',
  );
  t.notMatch(JSON.stringify(lines), /"stack"|at .*\.js:\d+/, 'no stack');
});

t.test('test without a runner: 503 SERVICE_UNAVAILABLE', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'acme');
  await h.call(admin, { method: 'POST', url: '/admin/ai-providers', payload: OPENAI });
  const res = await h.call(admin, { method: 'POST', url: '/admin/ai-providers/gpt/test' });
  t.equal(res.statusCode, 503);
  t.equal(res.json().error, 'SERVICE_UNAVAILABLE');
});

t.test('the key appears in no answer and no log line, whatever the requests', async (t) => {
  let logs = '';
  const logger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logs += chunk.toString('utf8');
        done();
      },
    }),
  );
  const access: AccessLogEntry[] = [];
  const ai = fakeAiRunner((call) =>
    call.maxTokens === 16
      ? { ok: false, code: 'AI_NETWORK', message: `connect ECONNREFUSED (key ${SECRET})` }
      : {
          ok: true,
          value: { text: 'x', model: 'm', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } },
        },
  );
  const h: ApiHarness = await apiHarness(t, { ai, logger, accessLog: (e) => access.push(e) });
  const admin = await h.key('admin', 'acme');
  const answers: string[] = [];
  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object | string) => {
    const res = await h.call(admin, {
      method,
      url,
      ...(payload !== undefined && { payload, headers: { 'content-type': 'application/json' } }),
    });
    answers.push(JSON.stringify(res.headers), res.body);
    return res;
  };
  t.equal((await send('POST', '/admin/ai-providers', { ...OPENAI, apiKey: SECRET })).statusCode, 201);
  await send('POST', '/admin/ai-providers', { ...OPENAI, apiKey: SECRET });
  await send('POST', '/admin/ai-providers', {
    ...OPENAI,
    name: 'bad',
    apiKey: SECRET,
    baseUrl: `https://x:${SECRET}@h`,
  });
  await send('POST', '/admin/ai-providers', `{"name":"broken","apiKey":"${SECRET}",`);
  await send('POST', '/admin/ai-providers', { ...OPENAI, name: 'long', apiKey: SECRET.repeat(200) });
  await send('GET', '/admin/ai-providers');
  await send('GET', '/admin/ai-providers/gpt');
  await send('PATCH', '/admin/ai-providers/gpt', { apiKey: SECRET, model: 'other' });
  await send('PATCH', '/admin/ai-providers/gpt', { apiKey: 42 });
  t.equal((await send('POST', '/admin/ai-providers/gpt/test')).statusCode, 502);
  await send('GET', '/openapi.json');
  t.ok(access.length >= 10, 'every request was logged');
  const logged = `${logs}\n${access.map((e) => JSON.stringify(e)).join('\n')}`;
  t.notMatch(answers.join('\n'), SECRET.slice(0, 16), 'no answer');
  t.notMatch(logged, SECRET.slice(0, 16), 'no log line');
});

t.test('test: a caller that goes away stops the model call', async (t) => {
  let aborted!: () => void;
  const stopped = new Promise<void>((resolve) => (aborted = resolve));
  const ai = fakeAiRunner(
    (_call, options) =>
      new Promise((resolve) => {
        options.signal.addEventListener('abort', () => {
          aborted();
          resolve({ ok: false, code: 'CANCELLED', message: 'stopped' });
        });
      }),
  );
  const { h, admin, post } = await setup(t, ai);
  await post(admin, OPENAI);
  const url = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const caller = new AbortController();
  const answered = fetch(`${url}/admin/ai-providers/gpt/test`, {
    method: 'POST',
    headers: { 'x-api-key': admin.apiKey },
    signal: caller.signal,
  }).catch((err: Error) => err.name);
  await eventually('the model is called', () => ai.calls.length === 1);
  caller.abort();
  t.equal(await answered, 'AbortError');
  await stopped;
  t.pass('the call was aborted');
});

t.test('concurrent requests: one name, one provider; a change never brings a deleted provider back', async (t) => {
  const { operator: admin, post, h } = await setup(t);
  const [path] = ggufFiles(t, 'm.gguf') as [string];
  const local = { name: 'tiny', kind: 'local', modelPath: path };
  const created = await Promise.all([post(admin, local), post(admin, local), post(admin, local)]);
  t.same(
    created.map((r) => r.statusCode).sort(),
    [201, 400, 400],
    'the file check awaits; the name is checked after it',
  );
  t.equal(Object.values(h.store.state.aiProviders).length, 1);

  const [changed, deleted] = await Promise.all([
    h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/tiny', payload: { threads: 2 } }),
    h.call(admin, { method: 'DELETE', url: '/admin/ai-providers/tiny' }),
  ]);
  t.equal(deleted.statusCode, 200);
  t.ok([200, 404].includes(changed.statusCode), `${changed.statusCode}`);
  t.same(h.store.state.aiProviders, {}, 'still deleted');

  await post(admin, local);
  const both = await Promise.all([
    h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/tiny', payload: { threads: 3 } }),
    h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/tiny', payload: { contextSize: 1024 } }),
  ]);
  t.same(
    both.map((r) => r.statusCode),
    [200, 200],
  );
  t.match(Object.values(h.store.state.aiProviders)[0], { threads: 3, contextSize: 1024 }, 'neither change is lost');
});

t.test("a local model is a file on the daemon's host: only a system key registers or moves one", async (t) => {
  const { h, admin, operator, post } = await setup(t);
  const [path, other] = ggufFiles(t, 'm.gguf', 'n.gguf') as [string, string];
  const refused = await post(admin, { name: 'tiny', kind: 'local', modelPath: path });
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().error, 'FORBIDDEN', "an organization's admin cannot point the daemon at a host file");
  const missing = await post(admin, { name: 'tiny', kind: 'local', modelPath: '/nonexistent/x.gguf' });
  t.equal(missing.json().error, 'FORBIDDEN', 'nor learn whether one exists');
  t.notMatch(missing.body, /ENOENT/);
  const made = await post(
    operator,
    { name: 'tiny', kind: 'local', modelPath: path },
    '/admin/ai-providers?organization=acme',
  );
  t.equal(made.statusCode, 201, made.body);
  const moved = await h.call(admin, {
    method: 'PATCH',
    url: '/admin/ai-providers/tiny',
    payload: { modelPath: other },
  });
  t.equal(moved.json().error, 'FORBIDDEN', 'nor move one to another file');
  const tuned = await h.call(admin, { method: 'PATCH', url: '/admin/ai-providers/tiny', payload: { threads: 2 } });
  t.equal(tuned.statusCode, 200, "the organization's admin still tunes and uses it");
  t.match(tuned.json(), { modelPath: path, threads: 2 });
});
