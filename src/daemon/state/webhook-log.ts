/**
 * The delivery log of each webhook registration (state.webhookDeliveries): its last
 * deliveries, newest last, bounded in count and in bytes, so that neither many deliveries nor
 * large records (a long reason, many started executions) grow the state, the snapshot or an
 * answer without bound.
 */
import { WEBHOOK_KEPT_BYTES, type DeliveryRecord } from '../../shared/api/index.js';

/** Deliveries kept in a registration's log, at most. */
export const WEBHOOK_LOG_SIZE = 100;
/** Bytes of JSON a registration's log keeps, at most: past it the oldest records go first. */
export const WEBHOOK_LOG_BYTES = 256 * 1024;

/** Each record's size, computed once: the log is summed at every append. */
const sizes = new WeakMap<DeliveryRecord, number>();

/** The bytes of `record` as JSON. */
export function recordBytes(record: DeliveryRecord): number {
  let n = sizes.get(record);
  if (n === undefined) {
    n = Buffer.byteLength(JSON.stringify(record));
    sizes.set(record, n);
  }
  return n;
}

/**
 * Inserts `record` into `log` (ordered by receipt, oldest first) after every record received
 * at the same instant or before: a delivery refused as it arrived is written after deliveries
 * received later and processed meanwhile, and still takes its place by time.
 */
export function insertByReceipt(log: DeliveryRecord[], record: DeliveryRecord): void {
  let i = log.length;
  while (i > 0 && log[i - 1]!.receivedAt > record.receivedAt) i--;
  if (i === log.length) log.push(record);
  else log.splice(i, 0, record);
}

/**
 * Adds `records` to the log of `webhookId` in order of receipt, then drops the oldest past
 * WEBHOOK_LOG_SIZE records or WEBHOOK_LOG_BYTES bytes; the newest record is always kept. Of the
 * records left, the newest keep their bodies (`kept`) up to `keptBytes` in all (default
 * WEBHOOK_KEPT_BYTES); older ones forget theirs (the file store's sweep removes a blob no
 * record keeps). Deterministic (the reducer's).
 */
export function appendDeliveries(
  state: { readonly webhookDeliveries: Record<string, DeliveryRecord[]> },
  webhookId: string,
  records: readonly DeliveryRecord[],
  keptBytes = WEBHOOK_KEPT_BYTES,
): void {
  const log = (state.webhookDeliveries[webhookId] ??= []);
  for (const r of records) insertByReceipt(log, r);
  let drop = Math.max(0, log.length - WEBHOOK_LOG_SIZE);
  let bytes = 0;
  for (let i = drop; i < log.length; i++) bytes += recordBytes(log[i]!);
  while (bytes > WEBHOOK_LOG_BYTES && drop < log.length - 1) bytes -= recordBytes(log[drop++]!);
  if (drop > 0) log.splice(0, drop);
  let kept = 0;
  for (let i = log.length - 1; i >= 0; i--) {
    const r = log[i]!;
    if (!r.kept) continue;
    kept += r.kept.bytes;
    if (kept <= keptBytes) continue;
    const { kept: _forgotten, ...rest } = r;
    log[i] = rest;
  }
}

/** The blobs (hex SHA-256) that keep a delivery's body and headers in any registration's log. */
export function keptBlobs(state: { readonly webhookDeliveries: Record<string, DeliveryRecord[]> }): Set<string> {
  const out = new Set<string>();
  for (const log of Object.values(state.webhookDeliveries)) for (const r of log) if (r.kept) out.add(r.kept.blob);
  return out;
}
