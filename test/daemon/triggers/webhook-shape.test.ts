import { once } from 'node:events';
import t from 'tap';
import { buildServer } from '../../../src/daemon/api/server.js';
import type { DeliveryRecord } from '../../../src/daemon/state/state.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { signDelivery } from '../../../src/shared/webhooks/providers.js';
import { apiHarness } from '../../helpers/api.js';

t.test(
  'a correctly signed delivery nested 5,000 deep starts nothing, with a reason in the delivery log and a WARN line',
  async (t) => {
    const h = await apiHarness(t);
    const warnings: string[] = [];
    // The harness's receiver has no WARN sink: this one logs as the daemon's does.
    const webhooks = new WebhookReceiver({
      store: h.store,
      engine: h.engine,
      now: h.clock.now,
      onRefused: (m) => warnings.push(m),
    });
    const app = buildServer({ store: h.store, engine: h.engine, webhooks, now: h.clock.now });
    await app.ready();
    t.teardown(() => app.close());
    const admin = await h.key('admin', 'default');
    const reg = await app.inject({
      method: 'POST',
      url: '/admin/webhooks',
      payload: { name: 'deep', provider: 'STANDARD' },
      headers: { 'x-api-key': admin.apiKey },
    });
    t.equal(reg.statusCode, 201);
    const ep = (reg.json() as { endpoints: Array<{ token: string; secret: string }> }).endpoints[0]!;
    await h.publish(`processId: AUTO
name: On deep
triggers:
  - { type: webhook, webhook: deep }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
    const body = `{"type":"user.created","data":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const headers = signDelivery(
      { provider: 'STANDARD', authType: 'HMAC' },
      ep.secret,
      Buffer.from(body),
      h.clock.now(),
      { eventType: 'user.created', eventId: 'msg_deep' },
    );
    const processed = once(webhooks, 'processed');
    const res = await app.inject({
      method: 'POST',
      url: `/webhook/receive/${ep.token}`,
      payload: body,
      headers: { 'content-type': 'application/json', ...headers },
    });
    t.equal(res.statusCode, 200, 'the sender is told it was received (it is journaled)');
    const record = ((await processed)[0] as { record: DeliveryRecord }).record;
    t.match(record, {
      signatureOk: true,
      reason: /^payload refused: nested deeper than 64 levels at payload\.data/,
      startedInstanceIds: [],
    });
    const log = await app.inject({
      method: 'GET',
      url: '/admin/webhooks/deep/deliveries',
      headers: { 'x-api-key': admin.apiKey },
    });
    t.match(
      log.json(),
      { items: [{ reason: /^payload refused/, startedInstanceIds: [] }] },
      'the delivery log says why',
    );
    t.match(warnings, [/started nothing: payload refused/], 'and a WARN line');
    t.same(Object.keys(h.store.state.instances), [], 'nothing started');
  },
);
