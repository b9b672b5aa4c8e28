import t from 'tap';
import { applyRecord, type WfxRecord } from '../../../src/daemon/state/records.js';
import { isSeen } from '../../../src/daemon/state/seen-ids.js';
import {
  initialState,
  WEBHOOK_SEEN_IDS_MAX,
  type DeliveryRecord,
  type SeenIds,
  type WebhookRegistration,
  type WfxState,
} from '../../../src/daemon/state/state.js';

const HOUR = 60 * 60 * 1000;
const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function stateWithWebhook(): WfxState {
  const state = initialState();
  state.webhooks.w1 = { webhookId: 'w1', name: 'repo' } as WebhookRegistration;
  return state;
}

function processed(
  eventId: string | null,
  at: number,
  extra: { bodyHash?: string; until?: number; signatureOk?: boolean } = {},
): WfxRecord {
  const record: DeliveryRecord = {
    deliveryId: `d-${eventId}-${at}`,
    receivedAt: iso(at),
    environment: 'ALL',
    eventType: 'ping',
    eventId,
    signatureOk: extra.signatureOk ?? true,
    reason: null,
    startedInstanceIds: [],
    ...(extra.bodyHash && { bodyHash: extra.bodyHash }),
  };
  return {
    type: 'webhook.processed',
    webhookId: 'w1',
    record,
    ...(extra.until !== undefined && { until: iso(extra.until) }),
  };
}

t.test(
  'an id is remembered until its window ends, whatever came between; then it expires and is dropped',
  async (t) => {
    const state = stateWithWebhook();
    applyRecord(state, processed('d0', T0, { bodyHash: 'sha256:aa', until: T0 + 2 * HOUR }));
    for (let i = 1; i <= 1001; i++)
      applyRecord(state, processed(`p${i}`, T0 + i, { bodyHash: `sha256:${i}`, until: T0 + i + 2 * HOUR }));
    const seen = state.webhookEventIds.w1;
    t.ok(isSeen(seen, 'd0', iso(T0 + HOUR)), 'the event id, 1,001 deliveries later');
    t.ok(isSeen(seen, 'sha256:aa', iso(T0 + HOUR)), 'the body hash too');
    t.notOk(isSeen(seen, 'd0', iso(T0 + 2 * HOUR)), 'not once the window ended');
    t.notOk(isSeen(seen, 'constructor', iso(T0)), 'an id never seen (a name Object.prototype has) is not seen');

    applyRecord(state, processed('later', T0 + 2 * HOUR + 1000, { until: T0 + 4 * HOUR }));
    const after = state.webhookEventIds.w1 as SeenIds;
    t.notOk(Object.hasOwn(after.until, 'd0'), 'expired ids are dropped at the next delivery');
    t.same(Object.keys(after.until).sort(), ['later', 'p1001', 'sha256:1001'], 'only ids still in their window remain');
    t.same(
      after.order.slice(after.head).map(([id]) => id),
      ['p1001', 'sha256:1001', 'later'],
      'the order holds the same entries, oldest first',
    );
    t.equal(after.head, 0, 'the dropped front is compacted away');
  },
);

t.test('a duplicate does not extend the window; an id seen again after its window is remembered anew', async (t) => {
  const state = stateWithWebhook();
  applyRecord(state, processed('d0', T0, { until: T0 + HOUR }));
  applyRecord(state, processed('d0', T0 + 30 * 60_000, { until: T0 + 90 * 60_000 }));
  t.notOk(isSeen(state.webhookEventIds.w1, 'd0', iso(T0 + HOUR)), 'the first window holds');
  applyRecord(state, processed('d0', T0 + 2 * HOUR, { until: T0 + 3 * HOUR }));
  t.ok(isSeen(state.webhookEventIds.w1, 'd0', iso(T0 + 150 * 60_000)), 'seen again: a new window');
  applyRecord(state, processed('x', T0 + 3 * HOUR, { until: T0 + 4 * HOUR }));
  t.notOk(isSeen(state.webhookEventIds.w1, 'd0', iso(T0 + 3 * HOUR)));
});

t.test('a refused signature is not remembered; "__proto__" is an id like any other', async (t) => {
  const state = stateWithWebhook();
  applyRecord(state, processed('forged', T0, { until: T0 + HOUR, signatureOk: false }));
  t.notOk(isSeen(state.webhookEventIds.w1, 'forged', iso(T0)));
  applyRecord(state, processed('__proto__', T0, { until: T0 + HOUR }));
  t.ok(isSeen(state.webhookEventIds.w1, '__proto__', iso(T0)));
  t.equal(Object.getPrototypeOf((state.webhookEventIds.w1 as SeenIds).until), Object.prototype);
  t.ok(
    isSeen(JSON.parse(JSON.stringify(state.webhookEventIds.w1)) as SeenIds, '__proto__', iso(T0)),
    'also once through the snapshot (JSON)',
  );
});

t.test(
  'earlier versions: a record without `until` keeps the default 72 hours; a snapshot list is still seen, then converted',
  async (t) => {
    const state = stateWithWebhook();
    applyRecord(state, processed('old', T0));
    t.ok(isSeen(state.webhookEventIds.w1, 'old', iso(T0 + 71 * HOUR)));
    t.notOk(isSeen(state.webhookEventIds.w1, 'old', iso(T0 + 72 * HOUR)));

    const legacy = stateWithWebhook();
    legacy.webhookEventIds.w1 = ['a', 'sha256:b'];
    const snapshot = JSON.parse(JSON.stringify(legacy)) as WfxState;
    t.ok(isSeen(snapshot.webhookEventIds.w1, 'a', iso(T0)), 'the old list: its ids are seen');
    applyRecord(snapshot, processed('c', T0, { until: T0 + HOUR }));
    const seen = snapshot.webhookEventIds.w1 as SeenIds;
    t.notOk(Array.isArray(seen), 'converted at the next delivery');
    t.ok(isSeen(seen, 'sha256:b', iso(T0 + 71 * HOUR)), 'its ids kept for the default window from then');
    t.ok(isSeen(seen, 'c', iso(T0)));
  },
);

t.test('past WEBHOOK_SEEN_IDS_MAX ids the oldest are dropped first', async (t) => {
  const state = stateWithWebhook();
  const deliveries = WEBHOOK_SEEN_IDS_MAX / 2 + 1;
  for (let i = 0; i < deliveries; i++)
    applyRecord(state, processed(`e${i}`, T0, { bodyHash: `h${i}`, until: T0 + HOUR }));
  const seen = state.webhookEventIds.w1 as SeenIds;
  t.equal(seen.order.length - seen.head, WEBHOOK_SEEN_IDS_MAX);
  t.notOk(isSeen(seen, 'e0', iso(T0)), 'the oldest forgotten');
  t.notOk(isSeen(seen, 'h0', iso(T0)));
  t.ok(isSeen(seen, 'e1', iso(T0)), 'the next kept');
  t.ok(isSeen(seen, `h${deliveries - 1}`, iso(T0)));
});
