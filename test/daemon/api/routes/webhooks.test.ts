import { once } from 'node:events';
import t from 'tap';
import { STATE } from '../../../../src/daemon/state/state.js';
import type { DeliveryRecord } from '../../../../src/daemon/state/state.js';
import { WebhookReceiver } from '../../../../src/daemon/triggers/webhooks.js';
import { signDelivery, type Scheme } from '../../../../src/shared/webhooks/providers.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../../helpers/api.js';

const flowFor = (webhook: string, eventType?: string) => `processId: AUTO
name: On ${webhook}
triggers:
  - { type: webhook, webhook: ${webhook}${eventType ? `, eventType: ${eventType}` : ''} }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

interface Registered {
  name: string;
  endpoints: Array<{ environment: string; token: string; url: string; secret: string | null }>;
}

async function register(h: ApiHarness, admin: TestKey, body: object): Promise<Registered> {
  const res = await h.call(admin, { method: 'POST', url: '/admin/webhooks', payload: body });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json();
}

/** Posts a delivery and resolves with its processed record. */
async function deliver(
  h: ApiHarness,
  token: string,
  body: Buffer | string,
  headers: Record<string, string>,
  contentType = 'application/json',
): Promise<DeliveryRecord> {
  const processed = once(h.webhooks, 'processed');
  const res = await h.app.inject({
    method: 'POST',
    url: `/webhook/receive/${token}`,
    payload: body,
    headers: { 'content-type': contentType, ...headers },
  });
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  if (res.json().received !== true) throw new Error(res.body);
  return ((await processed)[0] as { record: DeliveryRecord }).record;
}

const signed = (scheme: Scheme, secret: string, body: string, at: Date, extra = {}) =>
  signDelivery(scheme, secret, Buffer.from(body), at, extra);

t.test(
  'each provider: a signed delivery starts the flow with the webhook variables; tampered, stale and replayed ones start nothing',
  async (t) => {
    const h = await apiHarness(t);
    const admin = await h.key('admin', 'default');
    const now = h.clock.now();
    const cases: Array<{
      provider: string;
      extra?: object;
      body: string;
      eventType: string;
      eventId: string;
      timestamped: boolean;
    }> = [
      {
        provider: 'GITHUB',
        body: '{"action":"opened","number":1}',
        eventType: 'pull_request',
        eventId: 'gh-delivery-1',
        timestamped: false,
      },
      {
        provider: 'STRIPE',
        body: '{"id":"evt_1","type":"invoice.paid","data":{"object":{"amount":42}}}',
        eventType: 'invoice.paid',
        eventId: 'evt_1',
        timestamped: true,
      },
      {
        provider: 'SLACK',
        body: '{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention","text":"hi"}}',
        eventType: 'app_mention',
        eventId: 'Ev1',
        timestamped: true,
      },
      {
        provider: 'STANDARD',
        body: '{"type":"user.created","data":{"id":7}}',
        eventType: 'user.created',
        eventId: 'msg_1',
        timestamped: true,
      },
      {
        provider: 'CUSTOM',
        extra: {
          signatureHeader: 'X-Acme-Signature',
          algorithm: 'sha256',
          encoding: 'hex',
          prefix: 'sha256=',
          eventTypePath: 'kind',
          eventIdPath: 'id',
        },
        body: '{"id":"a-1","kind":"order.paid"}',
        eventType: 'order.paid',
        eventId: 'a-1',
        timestamped: false,
      },
    ];
    for (const c of cases) {
      const name = c.provider.toLowerCase();
      const reg = await register(h, admin, { name, provider: c.provider, ...c.extra });
      const pid = await h.publish(flowFor(name));
      const ep = reg.endpoints[0]!;
      t.equal(ep.environment, 'ALL');
      const scheme = {
        provider: c.provider,
        authType: 'HMAC',
        ...(c.extra && { custom: { ...c.extra, signatureHeader: 'x-acme-signature' } }),
      } as Scheme;
      const headers = signed(scheme, ep.secret!, c.body, now, { eventType: c.eventType, eventId: c.eventId });
      const ok = await deliver(h, ep.token, c.body, headers);
      t.match(
        ok,
        { signatureOk: true, eventType: c.eventType, eventId: c.eventId, reason: null, startedInstanceIds: [String] },
        `${c.provider}: started`,
      );
      const inst = await h.get(ok.startedInstanceIds[0]!);
      t.equal(inst.processId, pid);
      t.equal(inst.stateCd, STATE.COMPLETED);
      t.match(
        inst.variables,
        {
          webhookPayload: JSON.parse(c.body),
          webhookEventType: c.eventType,
          webhookEventId: c.eventId,
          webhookProvider: c.provider,
          webhookRawBody: Buffer.from(c.body).toString('base64'),
          webhookHeaders: Object,
          webhookTraceId: String,
        },
        `${c.provider}: the seed's webhook variables`,
      );
      if (c.timestamped) t.equal(inst.variables.webhookEventTimestamp, now.toISOString());

      const replay = await deliver(h, ep.token, c.body, headers);
      t.match(
        replay,
        { signatureOk: true, startedInstanceIds: [], reason: /duplicate/ },
        `${c.provider}: a replayed event id starts nothing`,
      );
      if (c.provider === 'GITHUB') {
        const relabelled = await deliver(h, ep.token, c.body, { ...headers, 'X-GitHub-Delivery': 'a-fresh-id' });
        t.match(
          relabelled,
          { startedInstanceIds: [], reason: /same signed body/ },
          'GITHUB: a replay under a new (unsigned) delivery id starts nothing',
        );
      }

      const tampered = await deliver(
        h,
        ep.token,
        `${c.body} `,
        signed(scheme, ep.secret!, c.body, now, { eventType: c.eventType, eventId: `${c.eventId}-t` }),
      );
      t.match(
        tampered,
        { signatureOk: false, startedInstanceIds: [], reason: /signature refused/ },
        `${c.provider}: a tampered body starts nothing`,
      );

      if (c.timestamped) {
        const old = new Date(now.getTime() - 6 * 60_000);
        const stale = await deliver(
          h,
          ep.token,
          c.body,
          signed(scheme, ep.secret!, c.body, old, { eventType: c.eventType, eventId: `${c.eventId}-s` }),
        );
        t.match(stale, { signatureOk: false, reason: /tolerance/ }, `${c.provider}: a stale timestamp is refused`);
      }
      const unsigned = await deliver(h, ep.token, c.body, {});
      t.match(unsigned, { signatureOk: false, reason: /missing/ }, `${c.provider}: no signature at all`);
    }
    const log = await h.call(admin, { method: 'GET', url: '/admin/webhooks/github/deliveries' });
    t.match(log.json().items[0], { signatureOk: false, reason: /missing/ }, 'the delivery log, newest first, says why');
    t.equal(log.json().items.length, 5);
  },
);

t.test('event type filters, per-environment endpoints, form bodies, unknown tokens, rotation', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const now = h.clock.now();
  const gh: Scheme = { provider: 'GITHUB', authType: 'HMAC' };
  const reg = await register(h, admin, {
    name: 'repo',
    provider: 'GITHUB',
    environmentMode: 'PER_ENVIRONMENT',
    secret: 'shared-secret-1',
  });
  t.same(
    reg.endpoints.map((e) => e.environment),
    ['DEVELOPMENT', 'PRODUCTION'],
  );
  t.not(reg.endpoints[0]!.token, reg.endpoints[1]!.token, 'a token per environment');
  const prodFlow = await h.publish(flowFor('repo', 'push'));
  const devFlow = await h.publish(flowFor('repo'), { environment: 'DEVELOPMENT' });
  const [dev, prod] = reg.endpoints as [Registered['endpoints'][0], Registered['endpoints'][0]];
  // Each GitHub event has its own body (a replayed body is a duplicate, whatever its delivery id).
  const bodyOf = (id: string) => `{"ref":"refs/heads/main","delivery":"${id}"}`;
  const r1 = await deliver(
    h,
    prod.token,
    bodyOf('d1'),
    signed(gh, 'shared-secret-1', bodyOf('d1'), now, { eventType: 'issues', eventId: 'd1' }),
  );
  t.match(r1, { startedInstanceIds: [], reason: /event issues/ }, 'the PRODUCTION flow takes push events only');
  const r2 = await deliver(
    h,
    prod.token,
    bodyOf('d2'),
    signed(gh, 'shared-secret-1', bodyOf('d2'), now, { eventType: 'push', eventId: 'd2' }),
  );
  t.equal(
    (await h.get(r2.startedInstanceIds[0]!)).processId,
    prodFlow,
    'the PRODUCTION endpoint starts the PRODUCTION version',
  );
  const r3 = await deliver(
    h,
    dev.token,
    bodyOf('d3'),
    signed(gh, 'shared-secret-1', bodyOf('d3'), now, { eventType: 'issues', eventId: 'd3' }),
  );
  t.equal(
    (await h.get(r3.startedInstanceIds[0]!)).processId,
    devFlow,
    'the DEVELOPMENT endpoint starts the DEVELOPMENT version',
  );

  const form = `payload=${encodeURIComponent(JSON.stringify({ zen: 'Keep it simple' }))}`;
  const r4 = await deliver(
    h,
    prod.token,
    form,
    signed(gh, 'shared-secret-1', form, now, { eventType: 'push', eventId: 'd4' }),
    'application/x-www-form-urlencoded',
  );
  t.same(
    (await h.get(r4.startedInstanceIds[0]!)).variables.webhookPayload,
    { zen: 'Keep it simple' },
    'a form delivery is normalized',
  );

  const unknown = await h.app.inject({
    method: 'POST',
    url: '/webhook/receive/no-such-token',
    payload: '{}',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(unknown.statusCode, 404);

  const rotated = await h.call(admin, {
    method: 'POST',
    url: '/admin/webhooks/repo/rotate',
    payload: { environment: 'PRODUCTION', previousValidFor: '1h' },
  });
  const newSecret = rotated.json().rotated[0].secret as string;
  t.ok(newSecret.startsWith('whsec_'));
  t.match(
    await deliver(
      h,
      prod.token,
      bodyOf('d5'),
      signed(gh, newSecret, bodyOf('d5'), now, { eventType: 'push', eventId: 'd5' }),
    ),
    { signatureOk: true },
    'the new secret works',
  );
  t.match(
    await deliver(
      h,
      prod.token,
      bodyOf('d6'),
      signed(gh, 'shared-secret-1', bodyOf('d6'), now, { eventType: 'push', eventId: 'd6' }),
    ),
    { signatureOk: true },
    'the previous one too, for an hour',
  );
  h.advance(61 * 60_000);
  const later = h.clock.now();
  t.match(
    await deliver(
      h,
      prod.token,
      bodyOf('d7'),
      signed(gh, 'shared-secret-1', bodyOf('d7'), later, { eventType: 'push', eventId: 'd7' }),
    ),
    { signatureOk: false },
    'then no more',
  );
  const listed = await h.call(admin, { method: 'GET', url: '/admin/webhooks' });
  t.notMatch(listed.body, /shared-secret-1|whsec_/, 'signing secrets never appear in lists');
});

t.test('a webhook trigger naming no registration is refused at publish', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const res = await h.call(admin, {
    method: 'POST',
    url: '/admin/flows',
    payload: { source: flowFor('nope').replace('processId: AUTO', 'processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11') },
  });
  t.equal(res.statusCode, 400);
  t.match(res.json(), {
    error: 'FLOW_INVALID',
    details: { problems: [{ code: 'UNKNOWN_WEBHOOK', property: 'triggers.0.webhook', line: Number, column: Number }] },
  });
  const source = flowFor('nope').replace('processId: AUTO', 'processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11');
  const dry = await h.call(admin, { method: 'POST', url: '/admin/flows', payload: { source, dryRun: true } });
  t.equal(dry.statusCode, 400, 'a dry run refuses what a publish refuses');
  t.same(dry.json().details, res.json().details, 'with the same problems at the same places');
  await register(h, admin, { name: 'nope', provider: 'GITHUB' });
  const ok = await h.call(admin, { method: 'POST', url: '/admin/flows', payload: { source, dryRun: true } });
  t.equal(ok.statusCode, 200, ok.body);
  t.match(ok.json(), { version: '1', created: true, dryRun: true }, 'what a publish would do');
  const listed = await h.call(admin, { method: 'GET', url: '/admin/flows' });
  t.same(listed.json().items, [], 'a dry run publishes nothing');
});

t.test('a delivery journaled before a crash is processed at the next start', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  await register(h, admin, { name: 'x', provider: 'CUSTOM', authType: 'NONE' });
  const pid = await h.publish(flowFor('x'));
  // Journaled as receive() does, not processed: as if the daemon died right after answering 200.
  await h.store.commit({
    type: 'webhook.received',
    delivery: {
      deliveryId: '01a1fd8c-6900-7000-8000-000000000001',
      webhookId: Object.keys(h.store.state.webhooks)[0]!,
      environment: 'ALL',
      receivedAt: h.clock.now().toISOString(),
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"a":1}').toString('base64'),
    },
  });
  await h.app.close();
  const h2 = await h.restart();
  t.equal(Object.keys(h2.store.state.pendingDeliveries).length, 1, 'still pending after the restart');
  const receiver = new WebhookReceiver({ store: h2.store, engine: h2.engine, now: h2.clock.now });
  const processed = once(receiver, 'processed');
  await receiver.recover();
  const { record } = (await processed)[0] as { record: DeliveryRecord };
  t.equal(record.startedInstanceIds.length, 1);
  t.equal((await h2.get(record.startedInstanceIds[0]!)).processId, pid);
  t.same(h2.store.state.pendingDeliveries, {}, 'processed once');
});

t.test('Slack URL verification: the challenge comes back when signed', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const reg = await register(h, admin, { name: 'slack', provider: 'SLACK', secret: 'slack-signing-secret' });
  const body = '{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}';
  const headers = Object.fromEntries(
    Object.entries(signed({ provider: 'SLACK', authType: 'HMAC' }, 'slack-signing-secret', body, h.clock.now())).map(
      ([k, v]) => [k.toLowerCase(), v],
    ),
  );
  const res = await h.app.inject({
    method: 'POST',
    url: `/webhook/receive/${reg.endpoints[0]!.token}`,
    payload: body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  t.same(res.json(), { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
});

t.test('Slack URL verification: a secret that cannot be opened answers no challenge, and is refused', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const reg = await register(h, admin, { name: 'slack', provider: 'SLACK', secret: 'slack-signing-secret' });
  await register(h, admin, { name: 'other', provider: 'SLACK', secret: 'other-signing-secret' });
  const named = (name: string) => Object.values(h.store.state.webhooks).find((w) => w.name === name)!;
  const [slack, other] = [named('slack'), named('other')];
  // Another record's ciphertext in its place: it does not open for this one.
  const endpoint = { ...slack.endpoints[0]!, secrets: other.endpoints[0]!.secrets };
  await h.store.commit({ type: 'webhook.saved', webhook: { ...slack, endpoints: [endpoint] } });
  const body = '{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}';
  const headers = Object.fromEntries(
    Object.entries(signed({ provider: 'SLACK', authType: 'HMAC' }, 'slack-signing-secret', body, h.clock.now())).map(
      ([k, v]) => [k.toLowerCase(), v],
    ),
  );
  const res = await h.app.inject({
    method: 'POST',
    url: `/webhook/receive/${reg.endpoints[0]!.token}`,
    payload: body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  t.equal(res.statusCode, 200, 'answered as any delivery, not a 500');
  t.match(res.json(), { received: true, deliveryId: String });
  t.notOk('challenge' in res.json(), 'no challenge');
  t.match(h.webhooks.unwrittenRefusals(slack.webhookId), [
    {
      deliveryId: res.json().deliveryId,
      refused: 'SIGNATURE',
      reason: /^signature refused: the signing secret cannot be opened \(SECRET_UNREADABLE: /,
    },
  ]);
  t.same(h.store.state.pendingDeliveries, {}, 'not journaled');
});

t.test('email connections: created, listed and changed without ever showing the password', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const other = await h.key('admin', 'globex');
  const created = await h.call(admin, {
    method: 'POST',
    url: '/admin/email-connections',
    payload: { name: 'support', host: 'imap.example.com', user: 'support@example.com', password: 'hunter2-long' },
  });
  t.equal(created.statusCode, 201);
  t.match(created.json(), {
    name: 'support',
    host: 'imap.example.com',
    port: 993,
    security: 'TLS',
    mailbox: 'INBOX',
    hasPassword: true,
  });
  const patched = await h.call(admin, {
    method: 'PATCH',
    url: '/admin/email-connections/support',
    payload: { security: 'STARTTLS', port: 143, password: 'new-password-2' },
  });
  t.match(patched.json(), { security: 'STARTTLS', port: 143 });
  for (const res of [
    created,
    patched,
    await h.call(admin, { method: 'GET', url: '/admin/email-connections' }),
    await h.call(admin, { method: 'GET', url: '/admin/email-connections/support' }),
  ]) {
    t.notMatch(res.body, /hunter2|new-password/, 'no password in any answer');
  }
  t.equal(
    (await h.call(other, { method: 'GET', url: '/admin/email-connections/support' })).statusCode,
    404,
    'another organization does not see it',
  );
  t.equal(
    (
      await h.call(admin, {
        method: 'POST',
        url: '/admin/email-connections',
        payload: { name: 'support', host: 'h', user: 'u', password: 'pppppppp' },
      })
    ).statusCode,
    400,
    'names are unique',
  );
  t.equal((await h.call(admin, { method: 'DELETE', url: '/admin/email-connections/support' })).json().deleted, true);
  t.equal((await h.call(admin, { method: 'GET', url: '/admin/email-connections/support' })).statusCode, 404);
});
