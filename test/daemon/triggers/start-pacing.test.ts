// A webhook trigger's debounce (a burst is one start, per key, with the last event's data, kept
// over a restart) and throttle (starts over the rate are dropped and said in the delivery's log).
import t, { type Test } from 'tap';
import { WebhookReceiver } from '../../../src/daemon/triggers/webhooks.js';
import { apiHarness, type ApiHarness } from '../../helpers/api.js';
import { liveInstances } from '../../helpers/state.js';
import { eventually } from '../../helpers/eventually.js';

const FLOW = (pacing: string) => `processId: AUTO
name: On event
triggers:
  - { type: webhook, webhook: events, ${pacing} }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** A receiver of registration `events` (no signature) on the harness: `send` delivers one JSON body. */
async function events(t: Test, h: ApiHarness) {
  const admin = await h.key('admin', 'default');
  const reg = await h.call(admin, {
    method: 'POST',
    url: '/admin/webhooks',
    payload: { name: 'events', provider: 'CUSTOM', authType: 'NONE', eventIdPath: 'id' },
  });
  t.equal(reg.statusCode, 201, reg.body);
  const token = (reg.json() as { endpoints: Array<{ token: string }> }).endpoints[0]!.token;
  const webhooks = new WebhookReceiver({ store: h.store, engine: h.engine, now: h.clock.now });
  t.teardown(() => webhooks.close());
  const send = async (body: object) => {
    const id = await webhooks.receive(token, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify(body)));
    await webhooks.process(id!);
  };
  return { webhooks, send };
}

const started = (h: Pick<ApiHarness, 'store'>, pid: string) =>
  liveInstances(h.store.state)
    .filter((i) => i.processId === pid)
    .map((i) => (i.variables.webhookPayload as { id: string }).id)
    .sort();

t.test('debounce: a burst of one key is one start, with its last event, once the quiet time passed', async (t) => {
  const h = await apiHarness(t);
  const { webhooks, send } = await events(t, h);
  const pid = await h.publish(FLOW('debounce: 10s, debounceKey: "{webhookPayload.customer}"'));
  for (const [id, customer] of [
    ['e1', 'A'],
    ['e2', 'A'],
    ['e3', 'B'],
    ['e4', 'A'],
  ])
    await send({ id, customer });
  t.same(started(h, pid), [], 'nothing starts within the burst');
  t.equal(Object.keys(h.store.state.debounced).length, 2, 'one start held per key');
  h.clock.advance(10_000);
  webhooks.pacer.pokeTimers();
  await eventually('the held starts ran', () => started(h, pid).length === 2);
  t.same(started(h, pid), ['e3', 'e4'], "each key's last event");
  t.same(h.store.state.debounced, {}, 'nothing held any more');
});

t.test('debounce: a held start survives a restart', async (t) => {
  const before = await apiHarness(t);
  const first = await events(t, before);
  const pid = await before.publish(FLOW('debounce: 1m'));
  await first.send({ id: 'x1' });
  await first.webhooks.close();
  const h = await before.restart();
  t.equal(Object.keys(h.store.state.debounced).length, 1, 'still held after the restart');
  const webhooks = new WebhookReceiver({ store: h.store, engine: h.engine, now: h.clock.now });
  t.teardown(() => webhooks.close());
  await webhooks.recover();
  h.clock.advance(60_000);
  webhooks.pacer.pokeTimers();
  await eventually('the held start ran', () => started(h, pid).length === 1);
  t.same(started(h, pid), ['x1']);
});

t.test('throttle: starts over the rate are dropped, and the delivery says so', async (t) => {
  const h = await apiHarness(t);
  const { send } = await events(t, h);
  const pid = await h.publish(FLOW('throttle: 2/m'));
  for (const id of ['t1', 't2', 't3', 't4']) await send({ id });
  t.same(started(h, pid), ['t1', 't2']);
  const log = h.store.state.webhookDeliveries[Object.keys(h.store.state.webhookDeliveries)[0]!]!;
  t.match(log.at(-1), { startedInstanceIds: [], reason: /1 dropped by a throttle/ });
  h.clock.advance(61_000);
  await send({ id: 't5' });
  t.same(started(h, pid), ['t1', 't2', 't5'], 'the next period starts again');
});
