import '../../setup/fixtures.js';
import { once } from 'node:events';
import { utimesSync } from 'node:fs';
import t, { type Test } from 'tap';
import { buildServer } from '../../../src/daemon/api/server.js';
import type { DeliveryDetail, DeliveryRecord } from '../../../src/shared/api/index.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { keptHeaders } from '../../../src/daemon/triggers/webhook-kept.js';
import { appendDeliveries, keptBlobs } from '../../../src/daemon/state/webhook-log.js';
import type { WebhookRegistration } from '../../../src/daemon/state/state.js';
import { signDelivery } from '../../../src/shared/webhooks/providers.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../helpers/api.js';

const FLOW = `processId: AUTO
name: On push
triggers:
  - { type: webhook, webhook: gh }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const SECRET = 'shared-secret-1';
const GH = { provider: 'GITHUB', authType: 'HMAC' } as const;

/** A GitHub registration `gh` of the default organization, and an admin key. */
async function setUp(t: Test): Promise<{ h: ApiHarness; admin: TestKey; token: string }> {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const res = await h.call(admin, {
    method: 'POST',
    url: '/admin/webhooks',
    payload: { name: 'gh', provider: 'GITHUB', secret: SECRET },
  });
  t.equal(res.statusCode, 201, res.body);
  return { h, admin, token: (res.json() as { endpoints: Array<{ token: string }> }).endpoints[0]!.token };
}

/** Posts `body` signed as GitHub would (`sign` false: unsigned) and resolves with its record. */
async function deliver(
  app: ApiHarness['app'],
  receiver: WebhookReceiver,
  token: string,
  body: string,
  eventId: string,
  sign = true,
): Promise<DeliveryRecord> {
  const processed = once(receiver, 'processed');
  const headers = sign
    ? signDelivery(GH, SECRET, Buffer.from(body), new Date(), { eventType: 'push', eventId })
    : { 'x-github-event': 'push', 'x-github-delivery': eventId };
  const res = await app.inject({
    method: 'POST',
    url: `/webhook/receive/${token}`,
    payload: body,
    headers: { ...headers, 'content-type': 'application/json', authorization: 'Bearer leak', 'x-trace': 't1' },
  });
  if (res.statusCode !== 200) throw new Error(res.body);
  return ((await processed)[0] as { record: DeliveryRecord }).record;
}

t.test('a redelivered delivery starts its flow again, as a new delivery, its signature never kept', async (t) => {
  const { h, admin, token } = await setUp(t);
  await h.publish(FLOW);
  const body = JSON.stringify({ ref: 'refs/heads/main', n: 1 });
  const first = await deliver(h.app, h.webhooks, token, body, 'ev-1');
  t.equal(first.startedInstanceIds.length, 1, 'the delivery started the flow');
  t.match(first.kept, { blob: /^[0-9a-f]{64}$/, bytes: body.length }, 'its body is kept');

  const detail = (
    await h.call(admin, { method: 'GET', url: `/admin/webhooks/gh/deliveries/${first.deliveryId}` })
  ).json() as DeliveryDetail;
  t.equal(detail.payload?.text, body, 'the body, whole');
  t.equal(detail.payload?.base64, null, 'given once: as text, not again as base64');
  t.match(detail.headers, { 'x-github-event': 'push', 'x-github-delivery': 'ev-1', 'x-trace': 't1' });
  t.notOk('x-hub-signature-256' in (detail.headers ?? {}), 'never the signature');
  t.notOk('authorization' in (detail.headers ?? {}), 'never a credential');

  const again = await deliver(h.app, h.webhooks, token, body, 'ev-1');
  t.match(again, { refused: 'DUPLICATE', startedInstanceIds: [] }, 'the provider resending it is a duplicate');

  const res = await h.call(admin, {
    method: 'POST',
    url: `/admin/webhooks/gh/deliveries/${first.deliveryId}/redeliver`,
  });
  t.equal(res.statusCode, 201, res.body);
  const redelivered = res.json() as DeliveryRecord;
  t.match(redelivered, {
    redeliveryOf: first.deliveryId,
    by: `key:${admin.keyId}`,
    signatureOk: true,
    reason: null,
    eventId: 'ev-1',
  });
  t.not(redelivered.deliveryId, first.deliveryId, 'a new delivery id');
  t.equal(redelivered.startedInstanceIds.length, 1, 'the operator asked: no duplicate check');
  t.not(redelivered.startedInstanceIds[0], first.startedInstanceIds[0], 'a new execution');
  const inst = await h.get(redelivered.startedInstanceIds[0]!);
  t.match(inst.variables, { webhookPayload: { n: 1 }, webhookEventType: 'push' }, 'with the same payload');
  t.notOk('x-hub-signature-256' in (inst.variables.webhookHeaders as object), 'its headers as kept');
  const journaled = h.store.state.webhookDeliveries[Object.keys(h.store.state.webhooks)[0]!]!.filter(
    (r) => r.redeliveryOf === first.deliveryId,
  );
  t.equal(journaled.length, 1, 'recorded once');
  t.same(h.store.state.pendingDeliveries, {}, 'nothing left pending');

  const missing = await h.call(admin, { method: 'POST', url: '/admin/webhooks/gh/deliveries/nope/redeliver' });
  t.equal(missing.json().error, 'NOT_FOUND');
  const viewer = await h.key('viewer', 'default');
  const denied = await h.call(viewer, {
    method: 'POST',
    url: `/admin/webhooks/gh/deliveries/${first.deliveryId}/redeliver`,
  });
  t.equal(denied.statusCode, 403, 'ADMIN only');
  const deniedRead = await h.call(viewer, { method: 'GET', url: `/admin/webhooks/gh/deliveries/${first.deliveryId}` });
  t.equal(deniedRead.statusCode, 403, 'reading a body too');
});

t.test('refused deliveries cannot be redelivered, each with its code', async (t) => {
  const { h, admin, token } = await setUp(t);
  await h.publish(FLOW);
  const bad = await deliver(h.app, h.webhooks, token, '{"x":1}', 'ev-bad', false);
  t.match(bad, { refused: 'SIGNATURE', signatureOk: false });
  t.notOk(bad.kept, 'a refused body is kept nowhere');
  const redeliver = (id: string) =>
    h.call(admin, { method: 'POST', url: `/admin/webhooks/gh/deliveries/${id}/redeliver` });
  const unwritten = await redeliver(bad.deliveryId);
  t.equal(unwritten.statusCode, 409);
  t.equal(unwritten.json().error, 'DELIVERY_NOT_REDELIVERABLE', 'refused, not written yet');
  await h.webhooks.close(); // the refusals are written
  t.equal((await redeliver(bad.deliveryId)).json().error, 'DELIVERY_NOT_REDELIVERABLE', 'refused, written');

  const ok = await deliver(h.app, h.webhooks, token, '{"x":2}', 'ev-2');
  const dup = await deliver(h.app, h.webhooks, token, '{"x":2}', 'ev-2');
  t.equal((await redeliver(dup.deliveryId)).json().error, 'DELIVERY_NOT_REDELIVERABLE', 'a duplicate');

  // Its blob gone (as after the bounds dropped it and the sweep ran): its own code.
  const webhookId = Object.keys(h.store.state.webhooks)[0]!;
  await h.store.commit({
    type: 'webhook.processed',
    webhookId,
    record: { ...ok, deliveryId: 'no-body', kept: { blob: 'f'.repeat(64), bytes: 7 } },
  });
  const gone = await redeliver('no-body');
  t.equal(gone.statusCode, 410);
  t.equal(gone.json().error, 'DELIVERY_BODY_NOT_KEPT');
});

t.test('bodies are kept within the bound, the oldest forgotten first and their blobs swept', async (t) => {
  // The reducer's bound, with records alone.
  const state = { webhookDeliveries: {} as Record<string, DeliveryRecord[]> };
  const rec = (i: number, bytes: number): DeliveryRecord => ({
    deliveryId: `d${i}`,
    receivedAt: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString(),
    environment: 'ALL',
    eventType: null,
    eventId: null,
    signatureOk: true,
    reason: null,
    startedInstanceIds: [],
    kept: { blob: String(i).padStart(64, '0'), bytes },
  });
  for (let i = 0; i < 5; i++) appendDeliveries(state, 'w', [rec(i, 400)], 1000);
  t.same(
    state.webhookDeliveries.w!.map((r) => r.kept?.bytes ?? 0),
    [0, 0, 0, 400, 400],
    'the newest keep theirs, up to the bound in bytes; every record stays in the log',
  );
  t.equal(keptBlobs(state).size, 2);

  // A daemon's: real bodies over WEBHOOK_KEPT_BYTES (8 MiB), then the file store's sweep.
  const { h, admin, token } = await setUp(t);
  await h.call(admin, { method: 'PATCH', url: '/admin/webhooks/gh', payload: { maxBodyBytes: 2 * 1024 * 1024 } });
  const big = (i: number) => JSON.stringify({ i, pad: String(i).repeat(1_500_000) });
  const records: DeliveryRecord[] = [];
  for (let i = 0; i < 7; i++) records.push(await deliver(h.app, h.webhooks, token, big(i), `ev-big-${i}`));
  t.ok(
    records.every((r) => r.kept),
    'each kept as it was processed',
  );
  const log = h.store.state.webhookDeliveries[Object.keys(h.store.state.webhooks)[0]!]!;
  const keptNow = log.filter((r) => r.kept).map((r) => r.deliveryId);
  t.same(
    keptNow,
    records.slice(2).map((r) => r.deliveryId),
    'the two oldest forgot theirs (5 x 1.5 MB <= 8 MiB)',
  );
  const res = await h.call(admin, {
    method: 'POST',
    url: `/admin/webhooks/gh/deliveries/${records[0]!.deliveryId}/redeliver`,
  });
  t.equal(res.json().error, 'DELIVERY_BODY_NOT_KEPT');
  // Every blob older than the sweep's grace for blobs nothing names (times by the store's clock).
  const old = (h.clock.now().getTime() - 2 * 60 * 60 * 1000) / 1000;
  for (const r of records) utimesSync(h.files.blobPath(r.kept!.blob), old, old);
  const swept = await h.files.sweep();
  t.equal(swept.blobs, 2, "the forgotten bodies' blobs are removed");
  t.ok(await h.files.readBlob(records[6]!.kept!.blob), 'the kept ones stay');
  t.equal(await h.files.readBlob(records[0]!.kept!.blob), null);
});

t.test('a kept body survives a restart and is redelivered after it', async (t) => {
  const { h, admin, token } = await setUp(t);
  await h.publish(FLOW);
  const first = await deliver(h.app, h.webhooks, token, '{"after":"restart"}', 'ev-r');
  t.equal(first.startedInstanceIds.length, 1);
  await h.webhooks.close();
  const h2 = await h.restart();
  const receiver = new WebhookReceiver({ store: h2.store, engine: h2.engine, now: h2.clock.now });
  const app = buildServer({
    store: h2.store,
    engine: h2.engine,
    webhooks: receiver,
    now: h2.clock.now,
    files: h2.files,
  });
  await app.ready();
  t.teardown(() => app.close());
  const res = await app.inject({
    method: 'POST',
    url: `/admin/webhooks/gh/deliveries/${first.deliveryId}/redeliver`,
    headers: { 'x-api-key': admin.apiKey },
  });
  t.equal(res.statusCode, 201, res.body);
  const again = res.json() as DeliveryRecord;
  t.equal(again.startedInstanceIds.length, 1, 'started again after the restart');
  t.match((await h2.get(again.startedInstanceIds[0]!)).variables, { webhookPayload: { after: 'restart' } });
});

t.test('kept headers leave out every signature and credential header', async (t) => {
  const w = { custom: { signatureHeader: 'x-acme-sig' } } as unknown as WebhookRegistration;
  t.same(
    keptHeaders(w, {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-hub-signature-256': 'sha256=..',
      'stripe-signature': 't=1,v1=..',
      'x-slack-signature': 'v0=..',
      'webhook-signature': 'v1,..',
      'x-acme-sig': 'abc',
      'x-gitlab-token': 'plain secret',
      authorization: 'Bearer x',
      cookie: 'a=b',
      'x-api-key': 'k',
      'x-auth': 'a token',
      'x-webhook-key': 'k2',
      'x-partner-credential': 'c',
      'x-request-id': 'r1',
    }),
    { 'content-type': 'application/json', 'x-github-event': 'push', 'x-request-id': 'r1' },
  );
});
