import t from 'tap';
import { VERSION } from '../../../src/shared/version.js';
import { apiHarness } from '../../helpers/api.js';

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
  const { toErrorAnswer } = await import('../../../src/daemon/api/server.js');
  const answer = toErrorAnswer(new Error('secret internals at /src/x.ts:10'));
  t.equal(answer.status, 500);
  t.same(Object.keys(answer.body).sort(), ['error', 'message', 'timestamp']);
  t.equal(answer.body.message, 'internal error');
});

t.test('/openapi.json documents every route', async (t) => {
  const h = await apiHarness(t);
  const res = await h.call(null, { method: 'GET', url: '/openapi.json' });
  t.equal(res.statusCode, 200);
  const doc = res.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
  t.match(doc.openapi, /^3\./);
  // Every route of the server with its methods (HEAD aside). A route added to the server must be
  // added here too: the last check fails on a path the document has and this list does not.
  const routes: Record<string, readonly string[]> = {
    '/health': ['get'],
    '/auth/whoami': ['get'],
    '/auth/config': ['get'],
    '/auth/session': ['post'],
    '/auth/links': ['post'],
    '/auth/signout': ['post'],
    '/admin/sessions': ['get'],
    '/admin/sessions/{sessionId}/revoke': ['post'],
    '/events': ['get'],
    '/process/exec': ['post'],
    '/process/start': ['post'],
    '/process/task': ['post'],
    '/process/event': ['post'],
    '/process/instance/{id}': ['get'],
    '/process/instance/{id}/logs': ['get'],
    '/process/instance/{id}/cancel': ['post'],
    '/process/instance/{id}/retry': ['post'],
    '/process/instance/{id}/replay': ['post'],
    '/process/instance/{id}/move': ['post'],
    '/process/list': ['get'],
    '/process/instances': ['get'],
    '/process/{id}/instances': ['get'],
    '/process/tasks': ['get'],
    '/process/failures': ['get'],
    '/process/bulk': ['get', 'post'],
    '/process/bulk/{bulkId}': ['get'],
    '/process/bulk/{bulkId}/results': ['get'],
    '/process/bulk/{bulkId}/cancel': ['post'],
    '/admin/api-keys': ['get', 'post'],
    '/admin/api-keys/{keyId}': ['get', 'patch'],
    '/admin/api-keys/{keyId}/suspend': ['post'],
    '/admin/api-keys/{keyId}/activate': ['post'],
    '/admin/api-keys/{keyId}/revoke': ['post'],
    '/admin/flows': ['get', 'post'],
    '/admin/flows/{processId}': ['get'],
    '/admin/flows/{processId}/activate': ['post'],
    '/admin/flows/{processId}/coverage': ['get', 'post'],
    '/admin/flows/{processId}/promote': ['post'],
    '/admin/project': ['get'],
    '/admin/project/apply': ['post'],
    '/admin/secrets/values': ['get'],
    '/admin/secrets/values/{name}': ['put', 'delete'],
    '/admin/environments/{env}/variables': ['get'],
    '/admin/environments/{env}/variables/{name}': ['put', 'delete'],
    '/admin/secrets': ['get'],
    '/admin/secrets/rotate': ['post'],
    '/admin/audit': ['get'],
    '/admin/webhooks': ['get', 'post'],
    '/admin/webhooks/{name}': ['get', 'patch', 'delete'],
    '/admin/webhooks/{name}/rotate': ['post'],
    '/admin/webhooks/{name}/deliveries': ['get'],
    '/admin/webhooks/{name}/deliveries/stream': ['get'],
    '/admin/webhooks/{name}/deliveries/{deliveryId}': ['get'],
    '/admin/webhooks/{name}/deliveries/{deliveryId}/redeliver': ['post'],
    '/admin/webhooks/{name}/sign': ['post'],
    '/admin/email-connections': ['get', 'post'],
    '/admin/email-connections/{name}': ['get', 'patch', 'delete'],
    '/admin/ai-providers': ['get', 'post'],
    '/admin/ai-providers/{name}': ['get', 'patch', 'delete'],
    '/admin/ai-providers/{name}/test': ['post'],
    '/admin/memory': ['get'],
    '/admin/memory/namespaces': ['get'],
    '/admin/memory/{namespace}/{key}': ['get', 'delete'],
    '/admin/domains': ['get'],
    '/admin/domains/{name}': ['get', 'put', 'delete'],
    '/admin/triggers': ['get'],
    '/admin/schedules/{processId}/pause': ['post'],
    '/admin/schedules/{processId}/resume': ['post'],
    '/admin/schedules/{processId}/backfill': ['post'],
    '/jobs': ['get'],
    '/jobs/activate': ['post'],
    '/jobs/complete': ['post'],
    '/jobs/workers': ['get'],
    '/jobs/{key}/complete': ['post'],
    '/jobs/{key}/fail': ['post'],
    '/jobs/{key}/heartbeat': ['post'],
    '/jobs/{key}/release': ['post'],
    '/files': ['get', 'post'],
    '/files/limits': ['get'],
    '/files/{fileId}': ['get', 'delete'],
    '/files/{fileId}/meta': ['get'],
    '/webhook/receive/{token}': ['post'],
    '/mcp': ['post', 'get', 'delete'],
  };
  for (const [path, methods] of Object.entries(routes)) {
    const documented = Object.keys(doc.paths[path] ?? {}).filter((m) => m !== 'head');
    t.same(documented.sort(), [...methods].sort(), path);
  }
  t.same(
    Object.keys(doc.paths).filter((p) => !Object.hasOwn(routes, p)),
    [],
    'every documented path is listed above',
  );
  t.notOk(doc.paths['/openapi.json'], 'the document does not list itself');
});

t.test('/openapi.json: the path parameters of each operation are those of its path template', async (t) => {
  const h = await apiHarness(t);
  const res = await h.call(null, { method: 'GET', url: '/openapi.json' });
  const doc = res.json() as {
    paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string; required?: boolean }> }>>;
  };
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).sort();
    for (const [method, op] of Object.entries(item)) {
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
      t.same(declared.map((p) => p.name).sort(), inTemplate, `${method.toUpperCase()} ${path}: path parameters`);
      t.ok(
        declared.every((p) => p.required === true),
        `${method.toUpperCase()} ${path}: every path parameter is required`,
      );
      operations++;
    }
  }
  t.ok(operations > 50, `every operation checked (${operations})`);
});

t.test('route validators compile on first use or in compileValidators, with the same answers', async (t) => {
  const { validatorCompilers } = await import('../../../src/daemon/api/route-compilers.js');
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

t.test('response serializers compile on first use or in compileAll, as Fastify would', async (t) => {
  const { CompileQueue, serializerFactory } = await import('../../../src/daemon/api/route-compilers.js');
  const { SerializerSelector } = await import('@fastify/fast-json-stringify-compiler');
  const queue = new CompileQueue();
  const external = { Named: { $id: 'Named', type: 'object', properties: { name: { type: 'string' } } } };
  const build = serializerFactory(queue)(external, {});
  const route = { method: 'GET', url: '/x', httpStatus: '200' };
  const schema = {
    type: 'object',
    properties: { id: { type: 'integer' }, who: { $ref: 'Named#' } },
    required: ['id'],
  };
  const lazy = build({ ...route, schema });
  const broken = build({ ...route, schema: { type: 'object', properties: { a: { $ref: 'Missing#' } } } });
  // Nothing is compiled while routes are registered: a broken schema shows on first use.
  t.throws(() => broken({ a: 1 }), /Missing/);
  const doc = { id: 7, who: { name: 'ann', extra: true }, dropped: 'x' };
  const fastifys = SerializerSelector()(external, {})({ ...route, schema });
  t.equal(lazy(doc), fastifys(doc), "the same text as Fastify's own serializer");
  t.equal(lazy(doc), '{"id":7,"who":{"name":"ann"}}');
  await t.rejects(queue.compileAll(), /Missing/, 'compileAll reports a schema that does not compile');
});

t.test('every route schema of the daemon compiles', async (t) => {
  const h = await apiHarness(t);
  await t.resolves(h.app.compileSchemas());
  // And the routes answer as before once compiled ahead of their first request.
  const key = await h.key('admin', 'default');
  const typed = await h.call(key, { method: 'POST', url: '/process/exec', payload: { processId: 123 } });
  t.match(typed.json(), { error: 'VALIDATION_ERROR', details: { problems: [/processId/] } });
});
