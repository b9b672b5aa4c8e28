import t from 'tap';
import { initialState, type DeliveryRecord } from '../../../src/daemon/state/state.js';
import {
  appendDeliveries,
  insertByReceipt,
  recordBytes,
  WEBHOOK_LOG_BYTES,
  WEBHOOK_LOG_SIZE,
} from '../../../src/daemon/state/webhook-log.js';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const record = (i: number, extra: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  deliveryId: `d-${i}`,
  receivedAt: new Date(T0 + i * 1000).toISOString(),
  environment: 'ALL',
  eventType: 'push',
  eventId: `e-${i}`,
  signatureOk: true,
  reason: null,
  startedInstanceIds: [],
  ...extra,
});
const bytesOf = (log: readonly DeliveryRecord[]) => log.reduce((n, r) => n + recordBytes(r), 0);

t.test('the log keeps the last WEBHOOK_LOG_SIZE deliveries', async (t) => {
  const state = initialState();
  for (let i = 0; i < 250; i++) appendDeliveries(state, 'w', [record(i)]);
  const log = state.webhookDeliveries.w!;
  t.equal(log.length, WEBHOOK_LOG_SIZE);
  t.equal(log[0]!.deliveryId, 'd-150');
  t.equal(log.at(-1)!.deliveryId, 'd-249');
});

t.test('and at most WEBHOOK_LOG_BYTES of them, the newest always kept', async (t) => {
  const state = initialState();
  // Large records (a long reason, many started executions): the count alone would keep 100 of them.
  const big = (i: number) =>
    record(i, {
      reason: 'r'.repeat(2000),
      startedInstanceIds: Array.from(
        { length: 100 },
        (_, k) => `01a1fd8c-6900-7000-8000-${String(k).padStart(12, '0')}`,
      ),
    });
  t.ok(recordBytes(big(0)) * WEBHOOK_LOG_SIZE > WEBHOOK_LOG_BYTES, 'the count alone would not bound these');
  for (let i = 0; i < 200; i++) appendDeliveries(state, 'w', [big(i)]);
  const log = state.webhookDeliveries.w!;
  t.ok(bytesOf(log) <= WEBHOOK_LOG_BYTES, `${bytesOf(log)} bytes kept`);
  t.ok(log.length < WEBHOOK_LOG_SIZE);
  t.equal(log.at(-1)!.deliveryId, 'd-199', 'the newest is kept');
  const huge = record(500, { reason: 'x'.repeat(WEBHOOK_LOG_BYTES * 2) });
  appendDeliveries(state, 'w', [huge]);
  t.same(state.webhookDeliveries.w!, [huge], 'one record over the budget alone: kept, alone');
});

t.test('records take their place by time of receipt (refused ones are written later)', async (t) => {
  const log: DeliveryRecord[] = [];
  for (const i of [1, 3, 5]) insertByReceipt(log, record(i));
  insertByReceipt(log, record(4));
  insertByReceipt(log, record(0));
  insertByReceipt(log, record(3, { deliveryId: 'd-3b' }));
  t.same(
    log.map((r) => r.deliveryId),
    ['d-0', 'd-1', 'd-3', 'd-3b', 'd-4', 'd-5'],
    'same instant: in the order written',
  );
});
