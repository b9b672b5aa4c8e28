import { once } from 'node:events';
import t, { type Test } from 'tap';
import type { DeliveryRecord } from '../../../src/daemon/state/state.js';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { signDelivery } from '../../../src/shared/webhooks/providers.js';
import { apiHarness, type ApiHarness } from '../../helpers/api.js';
import type { EngineHarness } from '../../helpers/engine.js';

const HOUR = 60 * 60 * 1000;
const FLOW = `processId: AUTO
name: On push
triggers:
  - { type: webhook, webhook: repo, eventType: push }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
const BODY = '{"ref":"refs/heads/main"}';

async function setUp(t: Test, h: ApiHarness): Promise<string> {
  const admin = await h.key('admin', 'default');
  const res = await h.call(admin, {
    method: 'POST',
    url: '/admin/webhooks',
    payload: { name: 'repo', provider: 'GITHUB', secret: 'gh-secret' },
  });
  t.equal(res.statusCode, 201);
  await h.publish(FLOW);
  return (res.json() as { endpoints: Array<{ token: string }> }).endpoints[0]!.token;
}

/** Delivers the same signed push (one delivery id, one body) through `receiver` and resolves with its record. */
async function push(h: EngineHarness, receiver: WebhookReceiver, token: string): Promise<DeliveryRecord> {
  const headers = signDelivery(
    { provider: 'GITHUB', authType: 'HMAC' },
    'gh-secret',
    Buffer.from(BODY),
    h.clock.now(),
    { eventId: 'delivery-0', eventType: 'push' },
  );
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const done = once(receiver, 'processed');
  await receiver.receive(token, { 'content-type': 'application/json', ...lower }, Buffer.from(BODY));
  return ((await done)[0] as { record: DeliveryRecord }).record;
}

t.test('the default window: a replay within 72 hours is a duplicate, one after it starts again', async (t) => {
  const h = await apiHarness(t);
  const token = await setUp(t, h);
  t.equal((await push(h, h.webhooks, token)).startedInstanceIds.length, 1);
  h.clock.advance(72 * HOUR - 1);
  t.match(
    await push(h, h.webhooks, token),
    { startedInstanceIds: [], reason: /duplicate/ },
    'a millisecond before the window ends',
  );
  h.clock.advance(1);
  t.equal((await push(h, h.webhooks, token)).startedInstanceIds.length, 1, 'once it ended: a new delivery');
});

t.test('replayWindowMs sets the window; it survives a restart (journal, then snapshot)', async (t) => {
  const h = await apiHarness(t);
  const token = await setUp(t, h);
  const receiver = new WebhookReceiver({
    store: h.store,
    engine: h.engine,
    now: h.clock.now,
    replayWindowMs: 10 * 60_000,
  });
  t.equal((await push(h, receiver, token)).startedInstanceIds.length, 1);
  await h.app.close();
  const h2 = await h.restart();
  const after = new WebhookReceiver({
    store: h2.store,
    engine: h2.engine,
    now: h2.clock.now,
    replayWindowMs: 10 * 60_000,
  });
  h2.clock.advance(10 * 60_000 - 1);
  t.match(
    await push(h2, after, token),
    { startedInstanceIds: [], reason: /duplicate/ },
    'remembered across the restart',
  );
  h2.clock.advance(1);
  t.equal((await push(h2, after, token)).startedInstanceIds.length, 1, 'forgotten once its window ended');
});
