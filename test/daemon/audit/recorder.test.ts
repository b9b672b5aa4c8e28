import '../../setup/fixtures.js';
import { once } from 'node:events';
import { join } from 'node:path';
import t from 'tap';
import type { InjectOptions } from 'fastify';
import type { AuditEntry, AuditPage } from '../../../src/shared/api/index.js';
import { AUDIT_EXCLUDED } from '../../../src/daemon/api/audit-recorder.js';
import { backupDataDir } from '../../../src/daemon/ops/backup.js';
import type { DeliveryRecord } from '../../../src/daemon/state/state.js';
import { signDelivery } from '../../../src/shared/webhooks/providers.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { eventually } from '../../helpers/eventually.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../helpers/api.js';

const PROCESS_ID = '0b5e1d2c-3a4f-4b6c-8d7e-9f0a1b2c3d4e';
const ASK_FLOW = (version: string) => `processId: ${PROCESS_ID}
name: Ask ${version}
triggers:
  - { type: schedule, cron: "0 0 1 1 *" }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const FAIL_FLOW = `processId: AUTO
name: Fails
nodes:
  start: { type: startEvent, next: check }
  check: { type: scriptTask, script: "if (!vars.ok) throw new Error('not ok'); return {}", next: done }
  done: { type: endEvent }
`;
const JOB_FLOW = `processId: AUTO
name: Charge
nodes:
  start: { type: startEvent, next: charge }
  charge: { type: domainTask, domain: billing, action: charge, input: { amount: 1 }, next: done }
  done: { type: endEvent }
`;
const HOOK_FLOW = `processId: AUTO
name: On push
triggers:
  - { type: webhook, webhook: gh }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const DOMAIN = { actions: { charge: { input: { type: 'object', properties: { amount: { type: 'number' } } } } } };

/** Values sent as secrets: none may appear in any audit record. */
const SECRETS = {
  webhook: 'whsec-AUDIT-webhook-1',
  rotated: 'whsec-AUDIT-rotated-2',
  mail: 'mailpass-AUDIT-3',
  mail2: 'mailpass-AUDIT-4',
  provider: 'sk-AUDIT-provider-5',
  provider2: 'sk-AUDIT-provider-6',
  envValue: 'envvalue-AUDIT-7',
  taskData: 'taskdata-AUDIT-8',
  flowSecret: 'tok-AUDIT-flow-secret-9',
};

interface Context {
  h: ApiHarness;
  admin: TestKey;
  system: TestKey;
  worker: TestKey;
  /** Secret values the daemon answered with (key secrets, webhook tokens, link tokens). */
  answered: string[];
  waiting(): Promise<string>;
  failed(): Promise<string>;
  memo: Record<string, string>;
}

/** One row of the table: a mutating route, its caller, and a request that succeeds. */
interface Row {
  readonly route: string;
  readonly as: 'admin' | 'system' | 'worker';
  readonly request: (c: Context) => Promise<InjectOptions>;
}

/** A job of acme's billing domain, started and activated to worker w1: its key. */
async function activatedJob(c: Context): Promise<string> {
  if (c.memo.jobFlow === undefined) c.memo.jobFlow = await c.h.publish(JOB_FLOW, { organization: 'acme' });
  await c.h.start(c.memo.jobFlow, {}, { organization: 'acme' });
  const res = await c.h.call(c.worker, {
    method: 'POST',
    url: '/jobs/activate',
    payload: { domain: 'billing', worker: 'w1', maxJobs: 1, requestTimeout: 1000 },
  });
  return (res.json() as { jobs: Array<{ key: string }> }).jobs[0]!.key;
}

const ROWS: Row[] = [
  {
    route: 'POST /admin/flows',
    as: 'admin',
    request: async () => ({ method: 'POST', url: '/admin/flows', payload: { source: ASK_FLOW('1') } }),
  },
  {
    route: 'POST /admin/flows/:processId/activate',
    as: 'admin',
    request: async () => ({ method: 'POST', url: `/admin/flows/${PROCESS_ID}/activate`, payload: { version: '1' } }),
  },
  {
    route: 'PUT /admin/secrets/values/:name',
    as: 'admin',
    request: async () => ({
      method: 'PUT',
      url: '/admin/secrets/values/WAREHOUSE_TOKEN',
      payload: { value: SECRETS.flowSecret },
    }),
  },
  {
    route: 'DELETE /admin/secrets/values/:name',
    as: 'admin',
    request: async () => ({ method: 'DELETE', url: '/admin/secrets/values/WAREHOUSE_TOKEN' }),
  },
  {
    route: 'POST /admin/project/apply',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: '/admin/project/apply',
      payload: { flows: [], config: { env: { PRODUCTION: { REGION: 'eu' } } } },
    }),
  },
  {
    route: 'POST /admin/flows/:processId/promote',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: `/admin/flows/${PROCESS_ID}/promote`,
      payload: { from: 'PRODUCTION', to: 'DEVELOPMENT' },
    }),
  },
  {
    route: 'POST /admin/schedules/:processId/pause',
    as: 'admin',
    request: async () => ({ method: 'POST', url: `/admin/schedules/${PROCESS_ID}/pause`, payload: {} }),
  },
  {
    route: 'POST /admin/schedules/:processId/resume',
    as: 'admin',
    request: async () => ({ method: 'POST', url: `/admin/schedules/${PROCESS_ID}/resume`, payload: {} }),
  },
  {
    route: 'POST /admin/schedules/:processId/backfill',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: `/admin/schedules/${PROCESS_ID}/backfill`,
      payload: { from: '2026-11-01T00:00:00Z', to: '2026-11-01T01:00:00Z' },
    }),
  },
  {
    route: 'POST /process/exec',
    as: 'admin',
    request: async () => ({ method: 'POST', url: '/process/exec', payload: { processId: PROCESS_ID } }),
  },
  {
    route: 'POST /process/start',
    as: 'system',
    request: async () => ({ method: 'POST', url: '/process/start', payload: { processId: PROCESS_ID } }),
  },
  {
    route: 'POST /process/task',
    as: 'admin',
    request: async (c) => ({
      method: 'POST',
      url: '/process/task',
      payload: {
        processInstanceId: await c.waiting(),
        nodeId: 'ask',
        action: 'COMPLETE',
        data: { inputValue: SECRETS.taskData },
      },
    }),
  },
  {
    route: 'POST /process/event',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: '/process/event',
      payload: { eventType: 'e', correlationKey: 'k', ttlSeconds: 60 },
    }),
  },
  {
    route: 'POST /process/instance/:id/cancel',
    as: 'admin',
    request: async (c) => ({ method: 'POST', url: `/process/instance/${await c.waiting()}/cancel` }),
  },
  {
    route: 'POST /process/instance/:id/move',
    as: 'admin',
    request: async (c) => ({
      method: 'POST',
      url: `/process/instance/${await c.waiting()}/move`,
      payload: { version: '1', dryRun: true },
    }),
  },
  {
    route: 'POST /process/instance/:id/retry',
    as: 'admin',
    request: async (c) => ({
      method: 'POST',
      url: `/process/instance/${await c.failed()}/retry`,
      payload: { data: { ok: true } },
    }),
  },
  {
    route: 'POST /process/instance/:id/replay',
    as: 'admin',
    request: async (c) => ({
      method: 'POST',
      url: `/process/instance/${await c.failed()}/replay`,
      payload: { nodeId: 'check' },
    }),
  },
  {
    route: 'POST /process/bulk',
    as: 'admin',
    request: async (c) => {
      await c.waiting();
      await c.waiting();
      return {
        method: 'POST',
        url: '/process/bulk',
        payload: { operation: 'cancel', query: { processId: PROCESS_ID } },
      };
    },
  },
  {
    route: 'POST /process/bulk/:bulkId/cancel',
    as: 'admin',
    request: async (c) => {
      // Enough executions that the operation, at one a second, is still running when cancelled.
      for (let i = 0; i < 10; i++) await c.waiting();
      c.h.clock.advance(1000); // an operation applies to executions started before it
      const res = await c.h.call(c.admin, {
        method: 'POST',
        url: '/process/bulk',
        payload: { operation: 'cancel', query: { processId: PROCESS_ID } },
      });
      return { method: 'POST', url: `/process/bulk/${(res.json() as { bulkId: string }).bulkId}/cancel` };
    },
  },
  {
    route: 'POST /admin/secrets/rotate',
    as: 'system',
    request: async () => ({ method: 'POST', url: '/admin/secrets/rotate', payload: {} }),
  },
  {
    route: 'POST /admin/api-keys',
    as: 'admin',
    request: async () => ({ method: 'POST', url: '/admin/api-keys', payload: { name: 'made', role: 'viewer' } }),
  },
  {
    route: 'PATCH /admin/api-keys/:keyId',
    as: 'admin',
    request: async (c) => ({ method: 'PATCH', url: `/admin/api-keys/${c.memo.keyId}`, payload: { name: 'renamed' } }),
  },
  ...(['suspend', 'activate', 'revoke'] as const).map((action): Row => ({
    route: `POST /admin/api-keys/:keyId/${action}`,
    as: 'admin',
    request: async (c) => ({ method: 'POST', url: `/admin/api-keys/${c.memo.keyId}/${action}` }),
  })),
  {
    route: 'PUT /admin/environments/:env/variables/:name',
    as: 'admin',
    request: async () => ({
      method: 'PUT',
      url: '/admin/environments/PRODUCTION/variables/TOKEN',
      payload: { value: SECRETS.envValue },
    }),
  },
  {
    route: 'DELETE /admin/environments/:env/variables/:name',
    as: 'admin',
    request: async () => ({ method: 'DELETE', url: '/admin/environments/PRODUCTION/variables/TOKEN' }),
  },
  {
    route: 'POST /admin/webhooks',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: '/admin/webhooks',
      payload: { name: 'gh', provider: 'GITHUB', secret: SECRETS.webhook },
    }),
  },
  {
    route: 'PATCH /admin/webhooks/:name',
    as: 'admin',
    request: async () => ({ method: 'PATCH', url: '/admin/webhooks/gh', payload: { maxBodyBytes: 4096 } }),
  },
  {
    route: 'POST /admin/webhooks/:name/rotate',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: '/admin/webhooks/gh/rotate',
      payload: { secret: SECRETS.rotated, previousValidFor: '0s' },
    }),
  },
  {
    route: 'POST /admin/webhooks/:name/deliveries/:deliveryId/redeliver',
    as: 'admin',
    request: async (c) => {
      await c.h.publish(HOOK_FLOW, { organization: 'acme' });
      const body = JSON.stringify({ ref: 'main' });
      const headers = signDelivery(
        { provider: 'GITHUB', authType: 'HMAC' },
        SECRETS.rotated,
        Buffer.from(body),
        new Date(),
        { eventType: 'push', eventId: 'ev-1' },
      );
      const processed = once(c.h.webhooks, 'processed');
      const res = await c.h.app.inject({
        method: 'POST',
        url: `/webhook/receive/${c.memo.token}`,
        payload: body,
        headers: { ...headers, 'content-type': 'application/json' },
      });
      if (res.statusCode !== 200) throw new Error(res.body);
      const record = ((await processed)[0] as { record: DeliveryRecord }).record;
      return { method: 'POST', url: `/admin/webhooks/gh/deliveries/${record.deliveryId}/redeliver` };
    },
  },
  {
    route: 'DELETE /admin/webhooks/:name',
    as: 'admin',
    request: async () => ({ method: 'DELETE', url: '/admin/webhooks/gh' }),
  },
  {
    route: 'POST /admin/email-connections',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: '/admin/email-connections',
      payload: { name: 'mail', host: '127.0.0.1', user: 'u', password: SECRETS.mail },
    }),
  },
  {
    route: 'PATCH /admin/email-connections/:name',
    as: 'admin',
    request: async () => ({
      method: 'PATCH',
      url: '/admin/email-connections/mail',
      payload: { password: SECRETS.mail2 },
    }),
  },
  {
    route: 'DELETE /admin/email-connections/:name',
    as: 'admin',
    request: async () => ({ method: 'DELETE', url: '/admin/email-connections/mail' }),
  },
  {
    route: 'POST /admin/ai-providers',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: '/admin/ai-providers',
      payload: {
        name: 'p',
        kind: 'openai-compatible',
        baseUrl: 'http://127.0.0.1:9/v1',
        model: 'm',
        apiKey: SECRETS.provider,
      },
    }),
  },
  {
    route: 'PATCH /admin/ai-providers/:name',
    as: 'admin',
    request: async () => ({ method: 'PATCH', url: '/admin/ai-providers/p', payload: { apiKey: SECRETS.provider2 } }),
  },
  {
    route: 'DELETE /admin/ai-providers/:name',
    as: 'admin',
    request: async () => ({ method: 'DELETE', url: '/admin/ai-providers/p' }),
  },
  {
    route: 'DELETE /admin/memory/:namespace/:key',
    as: 'admin',
    request: async (c) => {
      const at = c.h.clock.now().toISOString();
      await c.h.store.commit({
        type: 'memory.written',
        organization: 'acme',
        namespace: 'ns',
        key: 'k',
        entry: { value: 1, updatedAt: at, expiresAt: null },
      });
      return { method: 'DELETE', url: '/admin/memory/ns/k' };
    },
  },
  {
    route: 'PUT /admin/domains/:name',
    as: 'admin',
    request: async () => ({ method: 'PUT', url: '/admin/domains/billing', payload: DOMAIN }),
  },
  {
    route: 'DELETE /admin/domains/:name',
    as: 'admin',
    request: async (c) => {
      const made = await c.h.call(c.admin, { method: 'PUT', url: '/admin/domains/spare', payload: DOMAIN });
      if (made.statusCode !== 200) throw new Error(made.body);
      return { method: 'DELETE', url: '/admin/domains/spare' };
    },
  },
  ...(['complete', 'fail', 'release'] as const).map((action): Row => ({
    route: `POST /jobs/:key/${action}`,
    as: 'worker',
    request: async (c) => ({
      method: 'POST',
      url: `/jobs/${await activatedJob(c)}/${action}`,
      payload: action === 'fail' ? { worker: 'w1', errorMessage: 'no', retry: false } : { worker: 'w1' },
    }),
  })),
  {
    route: 'POST /jobs/complete',
    as: 'worker',
    request: async (c) => ({
      method: 'POST',
      url: '/jobs/complete',
      payload: { worker: 'w1', jobs: [{ key: await activatedJob(c) }] },
    }),
  },
  { route: 'POST /auth/links', as: 'admin', request: async () => ({ method: 'POST', url: '/auth/links' }) },
  {
    route: 'POST /admin/sessions/:sessionId/revoke',
    as: 'admin',
    request: async (c) => {
      const res = await c.h.app.inject({
        method: 'POST',
        url: '/auth/session',
        headers: { host: 'wfx.test:7878', origin: 'http://wfx.test:7878' },
        payload: { apiKey: c.admin.apiKey },
      });
      if (res.statusCode !== 200) throw new Error(res.body);
      return { method: 'POST', url: `/admin/sessions/${(res.json() as { sessionId: string }).sessionId}/revoke` };
    },
  },
  {
    route: 'POST /files',
    as: 'admin',
    request: async () => ({
      method: 'POST',
      url: '/files?name=a.txt',
      payload: 'hello',
      headers: { 'content-type': 'text/plain' },
    }),
  },
  {
    route: 'DELETE /files/:fileId',
    as: 'admin',
    request: async (c) => ({ method: 'DELETE', url: `/files/${c.memo.fileId}` }),
  },
  {
    route: 'POST /admin/backup',
    as: 'system',
    request: async (c) => ({
      method: 'POST',
      url: '/admin/backup',
      payload: { directory: join(c.memo.scratch!, 'copy') },
    }),
  },
];

/** Every record of the harness's trail, newest first. */
async function trailOf(h: ApiHarness): Promise<AuditEntry[]> {
  return [...(await h.audit.page({ limit: 1000, organization: null })).items];
}

/** Secret-bearing fields of answers: never in a record. */
function collectAnswered(c: Context, body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const o = body as Record<string, unknown>;
  if (typeof o.apiKey === 'string') c.answered.push(o.apiKey);
  if (typeof o.token === 'string') c.answered.push(o.token);
  if (typeof o.url === 'string' && o.url.includes('token')) c.answered.push(o.url);
  if (Array.isArray(o.endpoints))
    for (const e of o.endpoints as Array<Record<string, unknown>>)
      for (const v of [e.token, e.url, e.secret]) if (typeof v === 'string') c.answered.push(v);
}

t.test('every mutating route leaves exactly one audit record naming its caller, and none holds a secret', async (t) => {
  const h = await apiHarness(t, {
    engine: { bulkRate: 1 },
    backup: (directory) =>
      backupDataDir({ dataDir: h.dir, store: h.store, history: h.history, audit: h.audit.files }, directory),
  });
  const admin = await h.key('admin', 'acme');
  const system = await h.key('admin', null);
  const worker = await h.key('worker', 'acme');
  const keys = { admin, system, worker };
  const c: Context = {
    h,
    admin,
    system,
    worker,
    answered: [],
    memo: { scratch: t.testdir() },
    async waiting() {
      return (await h.start(PROCESS_ID, {}, { organization: 'acme' })).processInstanceId;
    },
    async failed() {
      c.memo.failFlow ??= await h.publish(FAIL_FLOW, { organization: 'acme' });
      const id = (await h.start(c.memo.failFlow, { ok: false }, { organization: 'acme' })).processInstanceId;
      await eventually('the execution fails', async () => (await h.get(id)).stateCd === STATE.FAILED);
      return id;
    },
  };
  await h.call(admin, { method: 'PUT', url: '/admin/domains/billing', payload: DOMAIN });

  const covered = new Set<string>();
  for (const row of ROWS) {
    const options = await row.request(c);
    const before = (await trailOf(h)).length;
    const res = await h.call(keys[row.as], options);
    t.ok(res.statusCode < 300, `${row.route} succeeds (${res.statusCode} ${res.body.slice(0, 200)})`);
    const body = String(res.headers['content-type'] ?? '').includes('json') ? res.json() : null;
    collectAnswered(c, body);
    if (row.route === 'POST /admin/api-keys') c.memo.keyId = (body as { keyId: string }).keyId;
    if (row.route === 'POST /admin/webhooks')
      c.memo.token = (body as { endpoints: Array<{ token: string }> }).endpoints[0]!.token;
    if (row.route === 'POST /files') c.memo.fileId = (body as { fileId: string }).fileId;
    const entries = await trailOf(h);
    t.equal(entries.length - before, 1, `${row.route}: exactly one record`);
    const entry = entries[0]!;
    t.equal(entry.action, row.route, `${row.route}: the record names the route`);
    t.equal(entry.keyId, keys[row.as].keyId, `${row.route}: the record names its caller`);
    t.equal(entry.actor, `key:${keys[row.as].keyId}`);
    t.equal(entry.status, res.statusCode);
    covered.add(row.route);
  }

  // The table covers every audited route the server has; a route left out is excluded by name, with a reason.
  for (const [route, audited] of h.app.auditRoutes) {
    if (audited) t.ok(covered.has(route), `${route} has a row in the table`);
    else
      t.ok(
        route in AUDIT_EXCLUDED || /^POST \/(webhook|auth\/(session|signout|link$))/.test(route),
        `${route} is excluded on purpose`,
      );
  }
  for (const route of covered) t.equal(h.app.auditRoutes.get(route), true, `${route} is audited`);

  const trail = await trailOf(h);
  const text = JSON.stringify(trail);
  t.ok(c.answered.length >= 4, 'the answers carried secrets to look for');
  for (const secret of [...Object.values(SECRETS), ...c.answered, admin.apiKey, system.apiKey, worker.apiKey])
    t.notOk(text.includes(secret), `no record holds ${secret.slice(0, 12)}...`);
  const started = trail.find((e) => e.action === 'POST /process/exec')!;
  t.match(started.targets, { processInstanceId: String }, 'a start names the execution it started');
});

t.test(
  "an organization's admin reads its own records only; a system admin reads all; filters and cursor",
  async (t) => {
    const h = await apiHarness(t);
    const acme = await h.key('admin', 'acme');
    const other = await h.key('admin', 'other');
    const system = await h.key('admin', null);
    const viewer = await h.key('viewer', 'acme');
    const made: string[] = [];
    for (const [key, org] of [
      [acme, 'acme'],
      [other, 'other'],
      [acme, 'acme'],
    ] as const) {
      const res = await h.call(key, {
        method: 'POST',
        url: '/admin/api-keys',
        payload: { name: `k-${org}`, role: 'viewer' },
      });
      t.equal(res.statusCode, 201);
      if (org === 'acme') made.push((res.json() as { keyId: string }).keyId);
    }
    const page = async (key: TestKey, query = ''): Promise<AuditPage> => {
      const res = await h.call(key, { method: 'GET', url: `/admin/audit${query}` });
      t.equal(res.statusCode, 200, res.body);
      return res.json() as AuditPage;
    };
    const mine = await page(acme);
    t.equal(mine.items.length, 2);
    t.ok(mine.items.every((e: AuditEntry) => e.organization === 'acme' && e.keyId === acme.keyId));
    t.same(
      mine.items.map((e) => e.targets.keyId),
      made.slice().reverse(),
      'newest first',
    );
    t.same(
      (await page(other)).items.map((e) => e.organization),
      ['other'],
    );
    t.equal((await h.call(other, { method: 'GET', url: '/admin/audit?organization=acme' })).json().error, 'FORBIDDEN');
    t.equal((await h.call(viewer, { method: 'GET', url: '/admin/audit' })).statusCode, 403, 'ADMIN only');
    t.equal((await page(system)).items.length, 3, 'a system admin reads every organization');
    t.equal((await page(system, '?organization=other')).items.length, 1);
    t.equal((await page(system, `?actor=key:${other.keyId}`)).items.length, 1);
    t.equal((await page(system, `?actor=${acme.keyId}`)).items.length, 2);
    t.equal((await page(system, '?action=DELETE')).items.length, 0);
    const first = await page(system, '?limit=2');
    t.equal(first.items.length, 2);
    t.ok(first.nextCursor);
    const second = await page(system, `?limit=2&cursor=${first.nextCursor}`);
    t.equal(second.items.length, 1);
    t.equal(second.nextCursor, null);
    t.same(
      (await page(system, `?target=${made[0]}`)).items.map((e) => e.targets.keyId),
      [made[0]],
      'by target id',
    );
    t.equal((await page(system, '?since=2999-01-01T00:00:00Z')).items.length, 0);
    t.equal((await page(system, '?until=2000-01-01T00:00:00Z')).items.length, 0);
    const bad = await h.call(system, { method: 'GET', url: '/admin/audit?cursor=nope' });
    t.equal(bad.json().error, 'VALIDATION_ERROR');
  },
);

t.test('a refused request leaves no record', async (t) => {
  const h = await apiHarness(t);
  const viewer = await h.key('viewer', 'acme');
  const res = await h.call(viewer, { method: 'POST', url: '/admin/api-keys', payload: { name: 'x' } });
  t.equal(res.statusCode, 403);
  t.equal((await trailOf(h)).length, 0);
});
