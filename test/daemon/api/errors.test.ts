import t from 'tap';
import { apiHarness } from '../../helpers/api.js';

const FLOW = `processId: AUTO
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, next: done }
  done: { type: endEvent }
`;

t.test('every error code of the contract, from a request that should produce it', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const pid = await h.publish(FLOW);
  const devOnly = await h.publish(FLOW, { environment: 'DEVELOPMENT' });
  const waiting = (await h.engine.start({ processId: pid, organization: 'default' })).processInstanceId;
  const done = (await h.engine.start({ processId: pid, organization: 'default' })).processInstanceId;
  await h.engine.cancel({ organization: 'default', processInstanceId: done });
  const cases: Array<[string, number, string, object]> = [
    [
      'bad JSON',
      400,
      'VALIDATION_ERROR',
      { method: 'POST', url: '/process/exec', headers: { 'content-type': 'application/json' }, payload: '{' },
    ],
    ['missing field', 400, 'VALIDATION_ERROR', { method: 'POST', url: '/process/exec', payload: {} }],
    [
      'unknown process',
      404,
      'PROCESS_NOT_FOUND',
      { method: 'POST', url: '/process/exec', payload: { processId: 'nope' } },
    ],
    [
      'unknown version',
      404,
      'VERSION_NOT_FOUND',
      { method: 'POST', url: '/process/exec?versionNumber=9', payload: { processId: pid } },
    ],
    [
      'not published in PRODUCTION',
      409,
      'PROCESS_NOT_PUBLISHED',
      { method: 'POST', url: '/process/exec', payload: { processId: devOnly } },
    ],
    [
      'unknown instance',
      404,
      'INSTANCE_NOT_FOUND',
      { method: 'GET', url: '/process/instance/0192f0c0-0000-7000-8000-000000000000' },
    ],
    [
      'no subscription',
      404,
      'NO_MATCHING_SUBSCRIPTION',
      { method: 'POST', url: '/process/event', payload: { eventType: 'x', correlationKey: 'k' } },
    ],
    [
      'node not waiting',
      409,
      'NODE_NOT_WAITING',
      {
        method: 'POST',
        url: '/process/task',
        payload: { processInstanceId: waiting, nodeId: 'start', action: 'COMPLETE' },
      },
    ],
    ['instance not running', 409, 'INSTANCE_NOT_RUNNING', { method: 'POST', url: `/process/instance/${done}/cancel` }],
    [
      'task data does not fit',
      422,
      'VALIDATION_ERROR',
      {
        method: 'POST',
        url: '/process/task',
        payload: { processInstanceId: waiting, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'NaN' } },
      },
    ],
    [
      'bad flow',
      400,
      'FLOW_INVALID',
      { method: 'POST', url: '/admin/flows', payload: { source: 'processId: x\nname: y\nnodes: {}\n' } },
    ],
    ['unknown route', 404, 'NOT_FOUND', { method: 'GET', url: '/process' }],
  ];
  for (const [name, status, code, req] of cases) {
    const res = await h.call(admin, req);
    t.equal(res.statusCode, status, `${name}: HTTP ${status}`);
    t.match(res.json(), { error: code, message: String, timestamp: String }, `${name}: ${code}`);
  }
  const invalid = await h.call(admin, {
    method: 'POST',
    url: '/admin/flows',
    payload: { source: 'processId: x\nname: y\nnodes: {}\n' },
  });
  t.match(invalid.json().details.problems, [{ code: String, line: Number }], 'flow problems come with positions');
  const conflict = await h.call(await h.key('admin', 'other'), {
    method: 'POST',
    url: '/admin/flows',
    payload: { definition: h.store.state.flows[pid]!.versions['1']!.definition },
  });
  t.equal(conflict.json().error, 'PROCESS_ID_CONFLICT');
});

t.test('401 for missing, malformed, wrong, suspended, revoked and expired keys', async (t) => {
  const h = await apiHarness(t);
  const good = await h.key('admin', 'default');
  const suspended = await h.key('admin', 'default', { status: 'SUSPENDED' });
  const revoked = await h.key('admin', 'default', { status: 'REVOKED' });
  const expired = await h.key('admin', 'default', { expiresAt: new Date(h.clock.ms - 1000).toISOString() });
  const future = await h.key('admin', 'default', { expiresAt: new Date(h.clock.ms + 60_000).toISOString() });
  const wrongSecret = { ...good, apiKey: `${good.apiKey.slice(0, -4)}AAAA` };
  const unknownId = { ...good, apiKey: `apk_0000000000000000_${good.apiKey.slice('apk_'.length + 16 + 1)}` };
  const whoami = { method: 'GET' as const, url: '/auth/whoami' };
  for (const [name, key] of [
    ['none', null],
    ['wrong secret', wrongSecret],
    ['unknown key id', unknownId],
    ['suspended', suspended],
    ['revoked', revoked],
    ['expired', expired],
  ] as const) {
    const res = await h.call(key, whoami);
    t.equal(res.statusCode, 401, name);
    t.match(res.json(), { error: 'UNAUTHORIZED', timestamp: String }, name);
  }
  const malformed = await h.app.inject({ ...whoami, headers: { 'x-api-key': 'not-a-key' } });
  t.equal(malformed.statusCode, 401);
  t.equal((await h.call(future, whoami)).statusCode, 200, 'not yet expired');
  h.advance(61_000);
  t.equal((await h.call(future, whoami)).statusCode, 401, 'expired now');
  t.same((await h.call(good, whoami)).json(), {
    keyId: good.keyId,
    organization: 'default',
    system: false,
    permissions: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WORKFLOW_PUBLISH', 'ADMIN', 'JOB_WORKER'],
  });
});

t.test('rate limits: sliding windows at their exact boundary, with headers', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('viewer', 'default', { rateLimitPerMinute: 3, rateLimitPerHour: 5 });
  const call = () => h.call(key, { method: 'GET', url: '/auth/whoami' });
  const first = await call();
  t.equal(first.statusCode, 200);
  t.same(
    [first.headers['ratelimit-limit'], first.headers['ratelimit-remaining']],
    ['3', '2'],
    'the tighter window is reported',
  );
  h.advance(10_000);
  await call();
  h.advance(10_000);
  const third = await call();
  t.equal(third.headers['ratelimit-remaining'], '0');
  const refused = await call();
  t.equal(refused.statusCode, 429, 'the 4th request within a minute');
  t.match(
    refused.json(),
    { error: 'RATE_LIMIT_EXCEEDED', retryAfter: 40 },
    'retry when the first request leaves the window',
  );
  t.equal(refused.headers['retry-after'], '40');
  t.equal(refused.headers['content-type'], 'application/json; charset=utf-8');
  h.advance(39_999);
  t.equal((await call()).statusCode, 429, '1 ms before the first request leaves the window');
  h.advance(1);
  t.equal((await call()).statusCode, 200, 'exactly when it leaves');
  h.advance(60_000);
  t.equal((await call()).statusCode, 200, 'the 5th in the hour');
  const hourly = await call();
  t.equal(hourly.statusCode, 429, 'the 6th in the hour, though the minute window has room');
  t.ok(hourly.json().retryAfter > 60, `retry after the hour window frees a slot (${hourly.json().retryAfter} s)`);
  const unlimited = await h.key('viewer', 'default');
  const free = await h.call(unlimited, { method: 'GET', url: '/auth/whoami' });
  t.equal(free.headers['ratelimit-limit'], undefined, 'no RateLimit headers for an unlimited key');
});

t.test(
  'a HEAD request to a GET route is authenticated like the GET, and counted once against the rate limit',
  async (t) => {
    const h = await apiHarness(t);
    const key = await h.key('viewer', 'default', { rateLimitPerMinute: 10 });
    t.equal((await h.call(null, { method: 'HEAD', url: '/auth/whoami' })).statusCode, 401, 'no key');
    t.equal(
      (
        await h.app.inject({
          method: 'HEAD',
          url: '/auth/whoami',
          headers: { 'x-api-key': `${key.apiKey.slice(0, -1)}${key.apiKey.endsWith('x') ? 'y' : 'x'}` },
        })
      ).statusCode,
      401,
      'a wrong secret',
    );
    const head = await h.call(key, { method: 'HEAD', url: '/auth/whoami' });
    t.equal(head.statusCode, 200);
    t.equal(head.headers['ratelimit-remaining'], '9', 'one request counted');
    const get = await h.call(key, { method: 'GET', url: '/auth/whoami' });
    t.equal(get.headers['ratelimit-remaining'], '8');
  },
);

t.test('key lifecycle over the admin API: create shows the secret once, suspend, activate, revoke', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const created = await h.call(admin, {
    method: 'POST',
    url: '/admin/api-keys',
    payload: { name: 'ci', role: 'operator', rateLimitPerMinute: 100, expiresIn: '30d' },
  });
  t.equal(created.statusCode, 201);
  const body = created.json();
  t.match(body, {
    keyId: String,
    apiKey: /^apk_/,
    role: 'operator',
    organization: 'default',
    system: false,
    status: 'ACTIVE',
    rateLimitPerMinute: 100,
  });
  t.equal(Date.parse(body.expiresAt), h.clock.ms + 30 * 86_400_000);
  const key = {
    apiKey: body.apiKey as string,
    keyId: body.keyId as string,
    organization: 'default',
    role: 'operator' as const,
  };
  const listed = await h.call(admin, { method: 'GET', url: '/admin/api-keys' });
  t.notMatch(listed.body, (body.apiKey as string).slice('apk_'.length + 16 + 1), 'the secret is never listed');
  t.notMatch(listed.body, /secretHash/, 'nor its hash');
  t.equal((await h.call(key, { method: 'GET', url: '/auth/whoami' })).statusCode, 200);
  t.equal(
    (await h.call(admin, { method: 'POST', url: `/admin/api-keys/${key.keyId}/suspend` })).json().status,
    'SUSPENDED',
  );
  t.equal((await h.call(key, { method: 'GET', url: '/auth/whoami' })).statusCode, 401);
  t.equal(
    (await h.call(admin, { method: 'POST', url: `/admin/api-keys/${key.keyId}/activate` })).json().status,
    'ACTIVE',
  );
  t.equal((await h.call(key, { method: 'GET', url: '/auth/whoami' })).statusCode, 200);
  t.equal(
    (await h.call(admin, { method: 'POST', url: `/admin/api-keys/${key.keyId}/revoke` })).json().status,
    'REVOKED',
  );
  const again = await h.call(admin, { method: 'POST', url: `/admin/api-keys/${key.keyId}/activate` });
  t.equal(again.statusCode, 409);
  t.equal(again.json().error, 'KEY_REVOKED');
  const other = await h.key('admin', 'globex');
  t.equal(
    (await h.call(other, { method: 'GET', url: `/admin/api-keys/${key.keyId}` })).statusCode,
    404,
    "an org admin sees its own organization's keys only",
  );
  const sys = await h.call(admin, { method: 'POST', url: '/admin/api-keys', payload: { name: 'x', system: true } });
  t.equal(sys.statusCode, 403, 'only a system admin creates system keys');
  const sysAdmin = await h.key('admin', null);
  const newOrg = await h.call(sysAdmin, {
    method: 'POST',
    url: '/admin/api-keys',
    payload: { name: 'first', role: 'admin', organization: 'initech' },
  });
  t.equal(newOrg.statusCode, 201);
  t.ok(h.store.state.organizations.initech, 'naming a new organization creates it');
});

t.test('names that would reach Object.prototype are refused everywhere (no prototype pollution)', async (t) => {
  const h = await apiHarness(t);
  const sys = await h.key('admin', null);
  for (const org of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const key = await h.call(sys, {
      method: 'POST',
      url: '/admin/api-keys',
      payload: { name: 'x', organization: org },
    });
    t.equal(key.statusCode, 400, `organization ${org} for a key`);
    const env = await h.call(sys, {
      method: 'PUT',
      url: `/admin/environments/PRODUCTION/variables/A?organization=${org}`,
      payload: { value: 'v' },
    });
    t.equal(env.statusCode, 400, `organization ${org} for an env value`);
  }
  for (const name of ['constructor', '__proto__', 'valueOf']) {
    const env = await h.call(sys, {
      method: 'PUT',
      url: `/admin/environments/PRODUCTION/variables/${name}`,
      payload: { value: 'v' },
    });
    t.equal(env.statusCode, 400, `variable ${name}`);
    const hook = await h.call(sys, { method: 'POST', url: '/admin/webhooks', payload: { name, provider: 'GITHUB' } });
    t.equal(hook.statusCode, 400, `webhook ${name}`);
  }
  t.equal(({} as Record<string, unknown>).PRODUCTION, undefined, 'Object.prototype untouched');
  const flow = await h.call(sys, {
    method: 'POST',
    url: '/admin/flows',
    payload: {
      source:
        'processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11\nname: P\nnodes:\n  start: { type: startEvent, next: constructor }\n  constructor: { type: endEvent }\n',
    },
  });
  t.equal(flow.statusCode, 400, 'a node named constructor');
  t.equal(flow.json().error, 'FLOW_INVALID');
});

t.test('ids that are names a plain object inherits are unknown ids like any other, even to a system key', async (t) => {
  const h = await apiHarness(t);
  const system = await h.key('admin', null);
  for (const id of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const cases: Array<[object, number, string]> = [
      [{ method: 'GET', url: `/process/instance/${id}` }, 404, 'INSTANCE_NOT_FOUND'],
      [{ method: 'POST', url: `/process/instance/${id}/cancel` }, 404, 'INSTANCE_NOT_FOUND'],
      [{ method: 'GET', url: `/admin/api-keys/${id}` }, 404, 'NOT_FOUND'],
      [{ method: 'PATCH', url: `/admin/api-keys/${id}`, payload: { name: 'x' } }, 404, 'NOT_FOUND'],
      [{ method: 'GET', url: `/admin/flows/${id}` }, 404, 'PROCESS_NOT_FOUND'],
      [{ method: 'POST', url: '/process/start', payload: { processId: id } }, 404, 'PROCESS_NOT_FOUND'],
    ];
    for (const [request, status, code] of cases) {
      const res = await h.call(system, request as never);
      t.equal(res.statusCode, status, `${JSON.stringify(request)}: ${res.body}`);
      t.equal(res.json().error, code);
    }
  }
  t.same(Object.keys(h.store.state.apiKeys), [system.keyId], 'no key was made or changed');
});

t.test('a key cannot be made to expire now or in the past, at creation or by an update', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const past = new Date(h.clock.ms - 1000).toISOString();
  const bodies = [
    { name: 'a', expiresAt: past },
    { name: 'b', expiresAt: new Date(h.clock.ms).toISOString() },
    { name: 'c', expiresIn: '0s' },
  ];
  for (const payload of bodies) {
    const res = await h.call(admin, { method: 'POST', url: '/admin/api-keys', payload });
    t.equal(res.statusCode, 400, JSON.stringify(payload));
    t.equal(res.json().error, 'VALIDATION_ERROR');
  }
  t.equal((await h.call(admin, { method: 'GET', url: '/admin/api-keys' })).json().items.length, 1, 'no key was made');
  const future = await h.call(admin, {
    method: 'POST',
    url: '/admin/api-keys',
    payload: { name: 'd', expiresAt: new Date(h.clock.ms + 60_000).toISOString() },
  });
  t.equal(future.statusCode, 201, 'a future expiry is fine');
  const keyId = future.json().keyId as string;
  const update = await h.call(admin, {
    method: 'PATCH',
    url: `/admin/api-keys/${keyId}`,
    payload: { expiresAt: past },
  });
  t.equal(update.statusCode, 400);
  t.equal(update.json().error, 'VALIDATION_ERROR');
  t.equal(
    (await h.call(admin, { method: 'GET', url: `/admin/api-keys/${keyId}` })).json().expiresAt,
    new Date(h.clock.ms + 60_000).toISOString(),
    'unchanged',
  );
  t.equal(
    (await h.call(admin, { method: 'PATCH', url: `/admin/api-keys/${keyId}`, payload: { expiresAt: null } }))
      .statusCode,
    200,
    'never expiring is fine',
  );
});
