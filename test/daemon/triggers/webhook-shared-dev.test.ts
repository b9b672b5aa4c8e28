import { once } from 'node:events';
import t, { type Test } from 'tap';
import { buildServer } from '../../../src/daemon/api/server.js';
import { newToken } from '../../../src/daemon/catalogue/webhook-entry.js';
import type { DeliveryRecord, Environment } from '../../../src/daemon/state/state.js';
import type { WebhookHealth } from '../../../src/shared/api/index.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { apiHarness } from '../../helpers/api.js';

const PR = (name: string) => `processId: AUTO
name: ${name}
triggers:
  - { type: webhook, webhook: github, eventType: pull_request }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

/** A daemon's API with a receiver whose SHARED endpoints fall back to `fallback` (as under `wfx dev`), and a SHARED registration "github". */
async function setup(t: Test, fallback: Environment | undefined) {
  const h = await apiHarness(t);
  const webhooks = new WebhookReceiver({
    store: h.store,
    engine: h.engine,
    now: h.clock.now,
    ...(fallback && { sharedFallback: fallback }),
  });
  const app = buildServer({ store: h.store, engine: h.engine, webhooks, now: h.clock.now });
  await app.ready();
  t.teardown(() => app.close());
  const admin = await h.key('admin', 'default');
  const headers = { 'x-api-key': admin.apiKey };
  const reg = await app.inject({
    method: 'POST',
    url: '/admin/webhooks',
    payload: { name: 'github', provider: 'GITHUB', environmentMode: 'SHARED' },
    headers,
  });
  t.equal(reg.statusCode, 201, reg.body);
  /** Signs a pull_request delivery as `wfx webhooks send` does, posts it, resolves with its record. */
  const send = async (n: number, environment?: string) => {
    const body = Buffer.from(JSON.stringify({ action: 'opened', number: n }));
    const signed = await app.inject({
      method: 'POST',
      url: '/admin/webhooks/github/sign',
      payload: { body: body.toString('base64'), eventType: 'pull_request', ...(environment && { environment }) },
      headers,
    });
    if (signed.statusCode !== 200) return { signed: signed.json() as { error: string; message: string } };
    const { url, headers: signature } = signed.json() as { url: string; headers: Record<string, string> };
    const processed = once(webhooks, 'processed');
    const res = await app.inject({
      method: 'POST',
      url: new URL(url).pathname,
      payload: body,
      headers: { 'content-type': 'application/json', 'x-github-delivery': `d-${n}`, ...signature },
    });
    t.equal(res.statusCode, 200);
    return { record: ((await processed)[0] as { record: DeliveryRecord }).record };
  };
  const triggers = async () =>
    (
      (await app.inject({ method: 'GET', url: '/admin/triggers', headers })).json() as { items: WebhookHealth[] }
    ).items.filter((x) => x.type === 'webhook');
  return { h, send, triggers };
}

t.test('a daemon not run by wfx dev: a DEVELOPMENT trigger on a SHARED registration is not active', async (t) => {
  const { h, send, triggers } = await setup(t, undefined);
  const pid = await h.publish(PR('On PR'), { environment: 'DEVELOPMENT' });
  const { record } = await send(1);
  t.same(record?.startedInstanceIds, [], 'the shared endpoint runs PRODUCTION: nothing started');
  t.match(record?.reason, /--per-environment/, 'the reason names the way out');
  t.match(
    await triggers(),
    [{ processId: pid, environment: 'DEVELOPMENT', state: 'disabled', lastFire: null, lastError: /--per-environment/ }],
    'health says it cannot fire, and why',
  );
  const { signed } = await send(2, 'DEVELOPMENT');
  t.equal(signed?.error, 'VALIDATION_ERROR', 'no DEVELOPMENT endpoint to send to');
  t.match(signed?.message, /send without --env.*--per-environment/, 'the refusal names the way out');
});

t.test('under wfx dev a SHARED endpoint runs the DEVELOPMENT version a PRODUCTION one does not shadow', async (t) => {
  const { h, send, triggers } = await setup(t, 'DEVELOPMENT');
  const pid = await h.publish(PR('On PR'), { environment: 'DEVELOPMENT' });
  t.match(await triggers(), [{ environment: 'DEVELOPMENT', state: 'active', lastFire: null }], 'it can fire');
  const { record } = await send(1);
  t.equal(record?.startedInstanceIds.length, 1, 'the delivery started the DEVELOPMENT version');
  const inst = await h.get(record!.startedInstanceIds[0]!);
  t.match(inst, { processId: pid, environment: 'DEVELOPMENT' });
  t.match(await triggers(), [{ state: 'active', lastFire: record!.receivedAt }], 'and health shows the fire');

  // Activated in PRODUCTION too: the shared endpoint runs that one, and the DEVELOPMENT trigger can no longer fire.
  await h.publish(PR('On PR').replace('processId: AUTO', `processId: ${pid}`), { environment: 'PRODUCTION' });
  const { record: second } = await send(2);
  t.match(await h.get(second!.startedInstanceIds[0]!), { environment: 'PRODUCTION' });
  t.match(
    await triggers(),
    [
      {
        environment: 'DEVELOPMENT',
        state: 'disabled',
        lastFire: null,
        lastError: /runs this flow's PRODUCTION version/,
      },
      { environment: 'PRODUCTION', state: 'active', lastFire: second!.receivedAt },
    ],
    'no trigger that cannot fire is shown active',
  );
});

t.test('endpoint tokens never start with "-", and keep 256 random bits', async (t) => {
  const seen = new Set<string>();
  // 64 characters of base64url are '-' in 1 of 64 first characters: 2000 tokens would show it.
  for (let i = 0; i < 2000; i++) {
    const token = newToken();
    if (!/^wht_[A-Za-z0-9_-]{43}$/.test(token)) t.fail(`token ${token} has another shape`);
    seen.add(token);
  }
  t.equal(seen.size, 2000, 'all different');
  t.notOk(
    [...seen].some((x) => x.startsWith('-')),
    'none starts with "-"',
  );
  t.ok(
    [...seen].some((x) => x[4] === '-'),
    'the random part still uses the whole alphabet (it is not merely filtered)',
  );
});
