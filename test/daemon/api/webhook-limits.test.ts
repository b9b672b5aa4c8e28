import { createHash } from 'node:crypto';
import { once } from 'node:events';
import t from 'tap';
import type { DeliveryList, DeliveryRecord } from '../../../src/shared/api/index.js';
import { WEBHOOK_LOG_SIZE } from '../../../src/daemon/state/state.js';
import { signDelivery, type Scheme } from '../../../src/shared/webhooks/providers.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../helpers/api.js';
import { anyFileHolds, writtenBytes } from '../../helpers/disk.js';

const flowFor = (webhook: string) => `processId: AUTO
name: On ${webhook}
triggers:
  - { type: webhook, webhook: ${webhook} }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

async function register(h: ApiHarness, admin: TestKey, body: object): Promise<{ token: string; secret: string }> {
  const res = await h.call(admin, { method: 'POST', url: '/admin/webhooks', payload: body });
  if (res.statusCode !== 201) throw new Error(res.body);
  const ep = (res.json() as { endpoints: Array<{ token: string; secret: string }> }).endpoints[0]!;
  return ep;
}

async function post(h: ApiHarness, token: string, body: Buffer | string, headers: Record<string, string>) {
  const processed = once(h.webhooks, 'processed');
  const res = await h.app.inject({
    method: 'POST',
    url: `/webhook/receive/${token}`,
    payload: body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  return {
    answer: res.json() as { received: true; deliveryId: string },
    record: await processed.then(([e]) => (e as { record: DeliveryRecord }).record),
  };
}

t.test(
  'a delivery refused as it arrives keeps its verdict, size, hash and preview; its body is journaled nowhere',
  async (t) => {
    const h = await apiHarness(t);
    const admin = await h.key('admin', 'default');
    const { token } = await register(h, admin, { name: 'gh', provider: 'GITHUB' });
    const before = writtenBytes(h.dir);
    const marker = 'attacker-body-marker';
    const body = Buffer.from(`{"a":"${marker}${'x'.repeat(200_000)}"}`);
    const bad = { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}`, 'x-github-event': 'push' };
    const first = await post(h, token, body, bad);
    t.match(first.answer, { received: true, deliveryId: String }, 'answered as any delivery');
    t.match(first.record, {
      deliveryId: first.answer.deliveryId,
      signatureOk: false,
      refused: 'SIGNATURE',
      eventType: 'push',
      reason: /^signature refused: /,
      body: {
        bytes: body.length,
        sha256: `sha256:${createHash('sha256').update(body).digest('hex')}`,
        preview: /^\{"a":"attacker-body-marker/,
        truncated: true,
      },
    });
    t.same(h.store.state.pendingDeliveries, {}, 'never pending');
    for (let i = 0; i < 31; i++) await post(h, token, body, bad);

    const log = (await h.call(admin, { method: 'GET', url: '/admin/webhooks/gh/deliveries' })).json() as DeliveryList;
    t.equal(log.items.length, 32, 'each refusal is in the log before it is written');
    t.equal(log.refused, 32);
    await h.webhooks.close();
    const written = (
      await h.call(admin, { method: 'GET', url: '/admin/webhooks/gh/deliveries' })
    ).json() as DeliveryList;
    t.same(written, log, 'the same log once written');
    t.equal(h.store.state.webhookRefused[Object.keys(h.store.state.webhooks)[0]!], 32, 'counted in the state');
    await h.store.flush();
    const grew = writtenBytes(h.dir) - before;
    t.ok(grew < 64 * 1024, `32 refused deliveries of 200 KB grew the directory by ${grew} bytes`);
    t.notOk(anyFileHolds(h.dir, `${marker}${'x'.repeat(300)}`), 'no body in any file');
    t.notOk(anyFileHolds(h.dir, body.subarray(0, 3000).toString('base64')), 'nor its base64');
  },
);

t.test('a flood of refusals: the log keeps the last ones and counts them all, in one journal entry', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const { token } = await register(h, admin, { name: 'st', provider: 'STRIPE' });
  for (let i = 0; i < 250; i++) await post(h, token, `{"n":${i}}`, { 'stripe-signature': 't=1,v1=00' });
  const log = (await h.call(admin, { method: 'GET', url: '/admin/webhooks/st/deliveries' })).json() as DeliveryList;
  t.equal(log.items.length, WEBHOOK_LOG_SIZE);
  t.equal(log.refused, 250);
  t.match(log.items[0], { body: { preview: '{"n":249}', truncated: false } }, 'newest first');
  await h.webhooks.close();
  const after = (await h.call(admin, { method: 'GET', url: '/admin/webhooks/st/deliveries' })).json() as DeliveryList;
  t.same(after, log);
});

t.test(
  'a body over the registration limit: 413, logged with its size, not read; the limit changes in place',
  async (t) => {
    const h = await apiHarness(t);
    const admin = await h.key('admin', 'default');
    const created = await h.call(admin, {
      method: 'POST',
      url: '/admin/webhooks',
      payload: { name: 'small', provider: 'CUSTOM', authType: 'NONE', maxBodyBytes: 4096 },
    });
    t.equal(created.statusCode, 201);
    t.equal(created.json().maxBodyBytes, 4096);
    const token = (created.json() as { endpoints: Array<{ token: string }> }).endpoints[0]!.token;
    await h.publish(flowFor('small'));
    const processed = once(h.webhooks, 'processed');
    const big = await h.app.inject({
      method: 'POST',
      url: `/webhook/receive/${token}`,
      payload: `{"a":"${'x'.repeat(5000)}"}`,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(big.statusCode, 413);
    t.equal(big.json().error, 'PAYLOAD_TOO_LARGE');
    const { record } = (await processed)[0] as { record: DeliveryRecord };
    t.match(record, { refused: 'TOO_LARGE', signatureOk: false, startedInstanceIds: [], body: { bytes: 5008 } });
    t.notOk(record.body?.preview, 'nothing of it was read');
    t.same(h.store.state.pendingDeliveries, {});

    const fits = await post(h, token, `{"a":"${'x'.repeat(4000)}"}`, {});
    t.match(fits.record, { signatureOk: true, startedInstanceIds: [String], body: { bytes: 4008 } }, 'within: started');

    for (const maxBodyBytes of [100, 26 * 1024 * 1024, 1.5])
      t.equal(
        (await h.call(admin, { method: 'PATCH', url: '/admin/webhooks/small', payload: { maxBodyBytes } })).json()
          .error,
        'VALIDATION_ERROR',
        `maxBodyBytes ${maxBodyBytes} is refused`,
      );
    t.equal((await h.call(admin, { method: 'PATCH', url: '/admin/webhooks/small', payload: {} })).statusCode, 400);
    const patched = await h.call(admin, {
      method: 'PATCH',
      url: '/admin/webhooks/small',
      payload: { maxBodyBytes: 8192 },
    });
    t.match(patched.json(), { name: 'small', maxBodyBytes: 8192, endpoints: [{ environment: 'ALL' }] });
    const now = await post(h, token, `{"a":"${'x'.repeat(5000)}"}`, {});
    t.match(now.record, { startedInstanceIds: [String] }, 'the same body fits the new limit');
    const unknown = await h.app.inject({
      method: 'POST',
      url: '/webhook/receive/no-such-token',
      payload: 'x'.repeat(2 * 1024 * 1024),
      headers: { 'content-type': 'text/plain' },
    });
    t.equal(unknown.statusCode, 404, 'an unknown token: 404, whatever the size');
  },
);

t.test('Slack form deliveries (no event_id) are duplicates when replayed, new when sent again later', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const { token, secret } = await register(h, admin, { name: 'slack', provider: 'SLACK', secret: 'slack-signing-1' });
  await h.publish(flowFor('slack'));
  const sl: Scheme = { provider: 'SLACK', authType: 'HMAC' };
  // A slash command as old apps and some interactivity payloads send it: no event_id, no trigger_id.
  const body = 'token=t&team_id=T1&command=%2Fdeploy&text=prod&user_id=U1';
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const signed = (at: Date) =>
    Object.fromEntries(
      Object.entries(signDelivery(sl, secret, Buffer.from(body), at)).map(([k, v]) => [k.toLowerCase(), v]),
    );
  const first = signed(h.clock.now());
  t.match((await post(h, token, body, { ...first, ...form })).record, {
    startedInstanceIds: [String],
    bodyHash: /^sha256:/,
  });
  h.advance(60_000);
  const replay = await post(h, token, body, { ...first, ...form });
  t.match(
    replay.record,
    { refused: 'DUPLICATE', signatureOk: true, startedInstanceIds: [] },
    'replayed a minute later',
  );
  const again = await post(h, token, body, { ...signed(h.clock.now()), ...form });
  t.match(again.record, { startedInstanceIds: [String] }, 'the same command typed again (a new timestamp) starts');
  h.advance(5 * 60_000);
  const late = await post(h, token, body, { ...first, ...form });
  t.match(late.record, { refused: 'SIGNATURE', reason: /tolerance/ }, 'past 5 minutes the timestamp refuses it');
});
