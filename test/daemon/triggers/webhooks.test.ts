import { once } from 'node:events';
import t from 'tap';
import { buildServer } from '../../../src/daemon/api/server.js';
import { STATE, type DeliveryRecord } from '../../../src/daemon/state/state.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { webhookHealth } from '../../../src/daemon/triggers/health.js';
import { apiHarness } from '../../helpers/api.js';

/** A flow started by webhook `orders`, whose inputs want an order id in the payload. */
const ORDERS = `processId: AUTO
name: On order
inputs:
  type: object
  required: [webhookPayload]
  properties:
    webhookPayload:
      type: object
      required: [orderId]
      properties: { orderId: { type: string } }
    priority: { type: string, default: normal }
triggers:
  - { type: webhook, webhook: orders }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

t.test(
  'a delivery whose start data does not match the inputs is logged as not started; one that matches starts',
  async (t) => {
    const h = await apiHarness(t);
    const refusals: string[] = [];
    // A receiver whose refusals are seen, as the daemon's WARN lines.
    const webhooks = new WebhookReceiver({
      store: h.store,
      engine: h.engine,
      now: h.clock.now,
      onRefused: (m) => refusals.push(m),
    });
    const app = buildServer({ store: h.store, engine: h.engine, webhooks, now: h.clock.now });
    await app.ready();
    t.teardown(() => app.close());
    const admin = await h.key('admin', 'default');
    const headers = { 'x-api-key': admin.apiKey };
    const reg = await app.inject({
      method: 'POST',
      url: '/admin/webhooks',
      payload: { name: 'orders', provider: 'CUSTOM', authType: 'NONE' },
      headers,
    });
    t.equal(reg.statusCode, 201, reg.body);
    const token = (reg.json() as { endpoints: Array<{ token: string }> }).endpoints[0]!.token;
    const pid = await h.publish(ORDERS);
    // Inputs that allow no webhook variable but the payload refuse every delivery: refused at publish.
    await t.rejects(
      h.publish(
        ORDERS.replace('name: On order', 'name: Closed').replace(
          '  required: [webhookPayload]',
          '  additionalProperties: false',
        ),
      ),
      /TRIGGER_INPUTS_UNMET/,
    );
    /** `strict`: a second flow on the same webhook whose order ids are numbers, which a publish cannot rule out. */
    const strict = await h.publish(
      ORDERS.replace('name: On order', 'name: Strict').replace(
        'properties: { orderId: { type: string } }',
        'properties: { orderId: { type: number } }',
      ),
    );
    const deliver = async (payload: object): Promise<DeliveryRecord> => {
      const processed = once(webhooks, 'processed');
      const res = await app.inject({ method: 'POST', url: `/webhook/receive/${token}`, payload });
      t.equal(res.statusCode, 200, 'the sender is told it was received (it is journaled)');
      return ((await processed)[0] as { record: DeliveryRecord }).record;
    };

    const refused = await deliver({ note: 'no order id' });
    t.match(refused, { signatureOk: true, startedInstanceIds: [] });
    t.match(
      refused.reason,
      new RegExp(
        `${pid} not started: VALIDATION_ERROR: data\\.webhookPayload\\.orderId is required \\(the inputs of flow On order, version 1\\)`,
      ),
      'the flow whose inputs refused it, and why',
    );
    t.match(
      refused.reason,
      new RegExp(`${strict} not started: VALIDATION_ERROR: data\\.webhookPayload\\.orderId is required`),
      'each flow whose inputs refuse it, and why',
    );
    t.equal(refusals.length, 1, 'and a WARN line');
    t.match(refusals[0], /not started: VALIDATION_ERROR/);
    const health = (processId: string) => webhookHealth(h.store.state).find((x) => x.processId === processId);
    t.match(health(pid), { state: 'failing', lastError: /not started: VALIDATION_ERROR/ }, 'the trigger shows it');

    const accepted = await deliver({ orderId: 'A1' });
    t.equal(accepted.startedInstanceIds.length, 1, 'a matching payload starts the flow (the strict one still refuses)');
    const inst = await h.get(accepted.startedInstanceIds[0]!);
    t.equal(inst.processId, pid);
    t.equal(inst.stateCd, STATE.COMPLETED);
    t.match(inst.variables, { webhookPayload: { orderId: 'A1' }, priority: 'normal' }, 'defaults filled in');
    t.match(health(pid), { state: 'active', lastError: null }, 'fired again: healthy');
    t.match(
      health(strict),
      { state: 'failing', lastError: /not started/ },
      'the strict flow started from none of them',
    );

    const log = await app.inject({ method: 'GET', url: '/admin/webhooks/orders/deliveries', headers });
    t.match(
      (log.json() as { items: DeliveryRecord[] }).items,
      [
        { startedInstanceIds: [inst.processInstanceId], reason: new RegExp(`${strict} not started`) },
        { startedInstanceIds: [], reason: new RegExp(`${pid} not started: VALIDATION_ERROR`) },
      ],
      'the delivery log, newest first, says what did not start and why',
    );
  },
);

t.test('trigger health lists on-demand triggers and a webhook trigger naming no registration', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const made = { name: 'nobody', provider: 'CUSTOM', authType: 'NONE' };
  t.equal((await h.call(admin, { method: 'POST', url: '/admin/webhooks', payload: made })).statusCode, 201);
  const pid = await h.publish(`processId: AUTO
name: By hand
triggers:
  - { type: on-demand, description: month end }
  - { type: webhook, webhook: nobody }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  // Deleted after the publish: the trigger names a registration that is gone.
  t.equal((await h.call(admin, { method: 'DELETE', url: '/admin/webhooks/nobody' })).statusCode, 200);
  const viewer = await h.key('viewer', 'default');
  const res = await h.call(viewer, { method: 'GET', url: '/admin/triggers' });
  t.equal(res.statusCode, 200, 'WORKFLOW_READ reads trigger health');
  t.match((res.json() as { items: unknown[] }).items, [
    { type: 'on-demand', processId: pid, description: 'month end', state: 'active', lastError: null },
    { type: 'webhook', processId: pid, state: 'disabled', lastError: 'no webhook registration named "nobody"' },
  ]);
});
