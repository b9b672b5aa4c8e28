import t from 'tap';
import { apiHarness } from '../../helpers/api.js';
import { fakeAiRunner } from '../../helpers/fake-ai.js';

/** One route that takes an organization, and how to name `org` on it. */
interface OrgRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The OpenAPI path (to check the table covers every route that takes `organization`). */
  readonly path: string;
  readonly url: (org: string) => string;
  readonly body?: (org: string) => object;
}

const q = (org: string) => `organization=${encodeURIComponent(org)}`;

const ROUTES: OrgRoute[] = [
  {
    method: 'POST',
    path: '/admin/api-keys',
    url: () => '/admin/api-keys',
    body: (org) => ({ name: 'k', organization: org }),
  },
  { method: 'GET', path: '/admin/api-keys', url: (org) => `/admin/api-keys?${q(org)}` },
  {
    method: 'POST',
    path: '/admin/flows',
    url: () => '/admin/flows',
    body: (org) => ({
      source:
        'processId: 0c1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6\nname: F\nnodes:\n  s: { type: startEvent, next: e }\n  e: { type: endEvent }\n',
      organization: org,
    }),
  },
  { method: 'GET', path: '/admin/flows', url: (org) => `/admin/flows?${q(org)}` },
  { method: 'POST', path: '/files', url: (org) => `/files?name=f.json&${q(org)}`, body: () => ({ hello: 1 }) },
  { method: 'GET', path: '/files', url: (org) => `/files?${q(org)}` },
  { method: 'GET', path: '/admin/triggers', url: (org) => `/admin/triggers?${q(org)}` },
  { method: 'GET', path: '/admin/audit', url: (org) => `/admin/audit?${q(org)}` },
  {
    method: 'GET',
    path: '/admin/environments/{env}/variables',
    url: (org) => `/admin/environments/PRODUCTION/variables?${q(org)}`,
  },
  {
    method: 'PUT',
    path: '/admin/environments/{env}/variables/{name}',
    url: (org) => `/admin/environments/PRODUCTION/variables/V?${q(org)}`,
    body: () => ({ value: 'x' }),
  },
  {
    method: 'DELETE',
    path: '/admin/environments/{env}/variables/{name}',
    url: (org) => `/admin/environments/PRODUCTION/variables/V?${q(org)}`,
  },
  {
    method: 'PUT',
    path: '/admin/secrets/values/{name}',
    url: () => '/admin/secrets/values/TOKEN',
    body: (org) => ({ value: 'x', organization: org }),
  },
  { method: 'GET', path: '/admin/secrets/values', url: (org) => `/admin/secrets/values?${q(org)}` },
  { method: 'GET', path: '/admin/project', url: (org) => `/admin/project?${q(org)}` },
  {
    method: 'POST',
    path: '/admin/project/apply',
    url: () => '/admin/project/apply',
    body: (org) => ({ flows: [], config: {}, dryRun: true, organization: org }),
  },
  { method: 'DELETE', path: '/admin/secrets/values/{name}', url: (org) => `/admin/secrets/values/TOKEN?${q(org)}` },
  {
    method: 'POST',
    path: '/admin/email-connections',
    url: (org) => `/admin/email-connections?${q(org)}`,
    body: () => ({ name: 'c', host: '127.0.0.1', user: 'u', password: 'p' }),
  },
  { method: 'GET', path: '/admin/email-connections', url: (org) => `/admin/email-connections?${q(org)}` },
  { method: 'GET', path: '/admin/email-connections/{name}', url: (org) => `/admin/email-connections/c?${q(org)}` },
  {
    method: 'PATCH',
    path: '/admin/email-connections/{name}',
    url: (org) => `/admin/email-connections/c?${q(org)}`,
    body: () => ({ user: 'v' }),
  },
  { method: 'DELETE', path: '/admin/email-connections/{name}', url: (org) => `/admin/email-connections/c?${q(org)}` },
  {
    method: 'POST',
    path: '/admin/ai-providers',
    url: (org) => `/admin/ai-providers?${q(org)}`,
    body: () => ({ name: 'p', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }),
  },
  { method: 'GET', path: '/admin/ai-providers', url: (org) => `/admin/ai-providers?${q(org)}` },
  { method: 'GET', path: '/admin/ai-providers/{name}', url: (org) => `/admin/ai-providers/p?${q(org)}` },
  {
    method: 'PATCH',
    path: '/admin/ai-providers/{name}',
    url: (org) => `/admin/ai-providers/p?${q(org)}`,
    body: () => ({ model: 'n' }),
  },
  { method: 'POST', path: '/admin/ai-providers/{name}/test', url: (org) => `/admin/ai-providers/p/test?${q(org)}` },
  { method: 'DELETE', path: '/admin/ai-providers/{name}', url: (org) => `/admin/ai-providers/p?${q(org)}` },
  { method: 'GET', path: '/admin/memory', url: (org) => `/admin/memory?${q(org)}` },
  { method: 'GET', path: '/admin/memory/namespaces', url: (org) => `/admin/memory/namespaces?${q(org)}` },
  { method: 'GET', path: '/admin/memory/{namespace}/{key}', url: (org) => `/admin/memory/ns/k?${q(org)}` },
  { method: 'DELETE', path: '/admin/memory/{namespace}/{key}', url: (org) => `/admin/memory/ns/k?${q(org)}` },
  {
    method: 'POST',
    path: '/admin/webhooks',
    url: (org) => `/admin/webhooks?${q(org)}`,
    body: () => ({ name: 'w', provider: 'GITHUB' }),
  },
  { method: 'GET', path: '/admin/webhooks', url: (org) => `/admin/webhooks?${q(org)}` },
  { method: 'GET', path: '/admin/webhooks/{name}', url: (org) => `/admin/webhooks/w?${q(org)}` },
  {
    method: 'PATCH',
    path: '/admin/webhooks/{name}',
    url: (org) => `/admin/webhooks/w?${q(org)}`,
    body: () => ({ maxBodyBytes: 2048 }),
  },
  { method: 'DELETE', path: '/admin/webhooks/{name}', url: (org) => `/admin/webhooks/w?${q(org)}` },
  {
    method: 'POST',
    path: '/admin/webhooks/{name}/rotate',
    url: (org) => `/admin/webhooks/w/rotate?${q(org)}`,
    body: () => ({}),
  },
  { method: 'GET', path: '/admin/webhooks/{name}/deliveries', url: (org) => `/admin/webhooks/w/deliveries?${q(org)}` },
  {
    method: 'GET',
    path: '/admin/webhooks/{name}/deliveries/{deliveryId}',
    url: (org) => `/admin/webhooks/w/deliveries/d1?${q(org)}`,
  },
  {
    method: 'POST',
    path: '/admin/webhooks/{name}/deliveries/{deliveryId}/redeliver',
    url: (org) => `/admin/webhooks/w/deliveries/d1/redeliver?${q(org)}`,
  },
  // After the DELETE above: a stream of a registration that is gone answers 404 at once.
  {
    method: 'GET',
    path: '/admin/webhooks/{name}/deliveries/stream',
    url: (org) => `/admin/webhooks/w/deliveries/stream?${q(org)}`,
  },
  {
    method: 'POST',
    path: '/admin/webhooks/{name}/sign',
    url: (org) => `/admin/webhooks/w/sign?${q(org)}`,
    body: () => ({ body: '{}' }),
  },
  { method: 'GET', path: '/process/tasks', url: (org) => `/process/tasks?${q(org)}` },
  { method: 'GET', path: '/process/instances', url: (org) => `/process/instances?${q(org)}` },
  { method: 'GET', path: '/process/failures', url: (org) => `/process/failures?${q(org)}` },
  { method: 'GET', path: '/process/bulk', url: (org) => `/process/bulk?${q(org)}` },
  {
    method: 'PUT',
    path: '/admin/domains/{name}',
    url: (org) => `/admin/domains/d?${q(org)}`,
    body: () => ({ actions: { a: {} } }),
  },
  { method: 'GET', path: '/admin/domains', url: (org) => `/admin/domains?${q(org)}` },
  { method: 'GET', path: '/admin/domains/{name}', url: (org) => `/admin/domains/d?${q(org)}` },
  { method: 'DELETE', path: '/admin/domains/{name}', url: (org) => `/admin/domains/d?${q(org)}` },
  { method: 'GET', path: '/jobs', url: (org) => `/jobs?${q(org)}` },
  { method: 'GET', path: '/jobs/workers', url: (org) => `/jobs/workers?${q(org)}` },
  {
    method: 'POST',
    path: '/jobs/activate',
    url: () => '/jobs/activate',
    body: (org) => ({ domain: 'd', worker: 'w', requestTimeout: 0, organization: org }),
  },
  {
    method: 'POST',
    path: '/process/event',
    url: () => '/process/event',
    body: (org) => ({ eventType: 'message', correlationKey: 'k', organization: org }),
  },
];

t.test(
  'an organization admin naming another organization is refused with 403 FORBIDDEN on every route that takes one',
  async (t) => {
    const h = await apiHarness(t);
    const admin = await h.key('admin', 'acme');
    await h.key('admin', 'other');
    for (const route of ROUTES) {
      const res = await h.call(admin, {
        method: route.method,
        url: route.url('other'),
        ...(route.body && { payload: route.body('other') }),
      });
      t.equal(res.statusCode, 403, `${route.method} ${route.path}: ${res.body.slice(0, 160)}`);
      t.equal(res.json().error, 'FORBIDDEN', `${route.method} ${route.path}`);
    }
  },
);

t.test('naming its own organization is not refused', async (t) => {
  const h = await apiHarness(t, { ai: fakeAiRunner() });
  const admin = await h.key('admin', 'acme');
  for (const route of ROUTES) {
    const res = await h.call(admin, {
      method: route.method,
      url: route.url('acme'),
      ...(route.body && { payload: route.body('acme') }),
    });
    t.not(res.statusCode, 403, `${route.method} ${route.path}: ${res.body.slice(0, 160)}`);
    t.ok(res.statusCode < 500, `${route.method} ${route.path}: ${res.statusCode}`);
  }
});

t.test('a system admin lists one named organization', async (t) => {
  const h = await apiHarness(t);
  const system = await h.key('admin', null);
  await h.key('viewer', 'acme');
  await h.key('viewer', 'other');
  const res = await h.call(system, { method: 'GET', url: '/admin/api-keys?organization=other' });
  t.equal(res.statusCode, 200);
  t.same(
    (res.json() as { items: Array<{ organization: string }> }).items.map((k) => k.organization),
    ['other'],
  );
});

t.test('the table covers every route whose querystring takes an organization', async (t) => {
  const h = await apiHarness(t);
  const doc = (await h.call(null, { method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>>;
  };
  const taking = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.parameters?.some((p) => p.in === 'query' && p.name === 'organization'))
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
  const covered = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
  t.same(
    taking.filter((r) => !covered.has(r)),
    [],
    'no route left out of the table',
  );
});
