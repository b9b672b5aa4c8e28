import t from 'tap';
import { VERSION } from '../../src/shared/version.js';
import { apiHarness } from '../helpers/api.js';

t.test('GET /health answers ok with the version, no credential needed', async (t) => {
  const h = await apiHarness(t);
  const res = await h.call(null, { method: 'GET', url: '/health' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { status: 'ok', version: VERSION });
});

t.test('unknown routes answer the error body with NOT_FOUND', async (t) => {
  const h = await apiHarness(t);
  const res = await h.call(null, { method: 'GET', url: '/nope?x=1' });
  t.equal(res.statusCode, 404);
  t.match(res.json(), { error: 'NOT_FOUND', message: 'no route GET /nope', timestamp: String });
});

t.test('bad JSON is a 400 VALIDATION_ERROR without a stack', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('admin', 'default');
  const res = await h.call(key, {
    method: 'POST',
    url: '/process/exec',
    headers: { 'content-type': 'application/json' },
    payload: '{"a":',
  });
  t.equal(res.statusCode, 400);
  t.equal(res.json().error, 'VALIDATION_ERROR');
  t.notMatch(res.body, /at .*\.js:\d+/);
});

t.test('a mistyped field is refused, not coerced; unknown fields are refused', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('admin', 'default');
  const typed = await h.call(key, { method: 'POST', url: '/process/exec', payload: { processId: 123 } });
  t.equal(typed.statusCode, 400);
  t.match(typed.json(), { error: 'VALIDATION_ERROR', details: { problems: [/processId/] } });
  const extra = await h.call(key, {
    method: 'POST',
    url: '/process/exec',
    payload: { processId: 'x', surprise: true },
  });
  t.equal(extra.statusCode, 400);
});

t.test('a body over the limit is a 413 PAYLOAD_TOO_LARGE', async (t) => {
  const h = await apiHarness(t, { bodyLimit: 1024 });
  const key = await h.key('admin', 'default');
  const res = await h.call(key, {
    method: 'POST',
    url: '/process/exec',
    payload: { processId: 'x', data: { big: 'x'.repeat(2048) } },
  });
  t.equal(res.statusCode, 413);
  t.equal(res.json().error, 'PAYLOAD_TOO_LARGE');
});

t.test('an unexpected error is a 500 INTERNAL_ERROR with no detail', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('admin', 'default');
  // A store failure surfaces as 503 on /health; a bug elsewhere as a bare 500.
  const boom = h.app.inject({ method: 'GET', url: '/process/list', headers: { 'x-api-key': key.apiKey } });
  t.equal((await boom).statusCode, 200);
  const { toErrorAnswer } = await import('../../src/daemon/server.js');
  const answer = toErrorAnswer(new Error('secret internals at /src/x.ts:10'));
  t.equal(answer.status, 500);
  t.same(Object.keys(answer.body).sort(), ['error', 'message', 'timestamp']);
  t.equal(answer.body.message, 'internal error');
});

t.test('/openapi.json documents every route', async (t) => {
  const h = await apiHarness(t);
  const res = await h.call(null, { method: 'GET', url: '/openapi.json' });
  t.equal(res.statusCode, 200);
  const doc = res.json() as { openapi: string; paths: Record<string, unknown> };
  t.match(doc.openapi, /^3\./);
  for (const path of [
    '/process/exec',
    '/process/start',
    '/process/task',
    '/process/event',
    '/process/instance/{id}',
    '/process/instance/{id}/logs',
    '/process/instance/{id}/cancel',
    '/process/list',
    '/process/{id}/instances',
    '/process/tasks',
    '/events',
    '/auth/whoami',
    '/health',
    '/admin/api-keys',
    '/admin/flows',
    '/admin/environments/{env}/variables',
    '/admin/webhooks',
    '/admin/webhooks/{name}/deliveries',
    '/admin/email-connections',
    '/admin/ai-providers',
    '/admin/ai-providers/{name}/test',
    '/admin/memory',
    '/admin/memory/{namespace}/{key}',
    '/webhook/receive/{token}',
  ]) {
    t.ok(doc.paths[path], path);
  }
  t.notOk(doc.paths['/openapi.json'], 'the document does not list itself');
});

t.test('route validators compile on first use or in compileValidators, with the same answers', async (t) => {
  const { validatorCompilers } = await import('../../src/daemon/server.js');
  const v = validatorCompilers();
  const broken = v.compile({ schema: { type: 'no-such-type' }, httpPart: 'body' });
  // Nothing is compiled while routes are registered: a broken schema shows on first use.
  t.throws(() => broken({}), /no-such-type|type/);
  const body = v.compile({
    schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
    httpPart: 'body',
  });
  t.equal(body({ n: 1 }), true);
  t.equal(body.errors, null);
  t.equal(body({ n: '1' }), false, 'bodies are not coerced');
  t.match(body.errors, [{ instancePath: '/n', keyword: 'type' }]);
  const query = v.compile({
    schema: { type: 'object', properties: { limit: { type: 'integer', default: 50 } } },
    httpPart: 'querystring',
  });
  const q: Record<string, unknown> = { limit: '7' };
  t.equal(query(q), true);
  t.same(q, { limit: 7 }, 'query strings are coerced');
  // Fastify passes the request as the root's parent when schemaEnv is set, as for Ajv's own
  // functions: that is how a coerced root value reaches the request.
  t.equal(query.schemaEnv, true);
  const tags = v.compile({ schema: { type: 'array', items: { type: 'string' } }, httpPart: 'querystring' });
  const request: Record<string, unknown> = { tags: 'a' };
  t.equal(
    tags(request.tags, {
      instancePath: '',
      parentData: request,
      parentDataProperty: 'tags',
      rootData: request,
      dynamicAnchors: {},
    }),
    true,
  );
  t.same(request, { tags: ['a'] });
  await t.rejects(v.compileAll(), /no-such-type|type/, 'compileAll reports a schema that does not compile');
});

t.test('every route schema of the daemon compiles', async (t) => {
  const h = await apiHarness(t);
  await t.resolves(h.app.compileValidators());
  // And the routes answer as before once compiled ahead of their first request.
  const key = await h.key('admin', 'default');
  const typed = await h.call(key, { method: 'POST', url: '/process/exec', payload: { processId: 123 } });
  t.match(typed.json(), { error: 'VALIDATION_ERROR', details: { problems: [/processId/] } });
});
