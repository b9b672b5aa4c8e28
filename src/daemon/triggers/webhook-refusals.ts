/**
 * Deliveries refused as they arrived (a bad signature, a replay, a body over the limit),
 * written to the journal in batches rather than one entry each: a flood of refused deliveries
 * costs a small entry now and then, never one per delivery and never a body. Until written
 * they are kept in memory and shown with the delivery log; a crash loses at most the last
 * interval's (they started nothing, and their senders were answered as for any delivery).
 *
 * A batch holds at most WEBHOOK_LOG_SIZE records per registration (the log would drop older
 * ones at once) and counts the rest. While batches come full (a flood), the interval between
 * writes doubles up to REFUSALS_MAX_INTERVAL_MS, so the journal grows by at most one full log
 * per registration per interval; it is back to REFUSALS_INTERVAL_MS once the flood ends.
 */
import { insertByReceipt, WEBHOOK_LOG_SIZE } from '../state/webhook-log.js';
import type { WfxRecord } from '../state/records.js';
import type { DeliveryRecord, WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';

/** How long refused deliveries wait in memory before they are written, at first. */
export const REFUSALS_INTERVAL_MS = 1000;
/** How long at most, while a flood fills every batch. */
export const REFUSALS_MAX_INTERVAL_MS = 60_000;

export interface RefusalLogOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly onError: (err: unknown, what: string) => void;
  /** REFUSALS_INTERVAL_MS unless given (tests). */
  readonly intervalMs?: number;
}

interface Batch {
  /** The newest refused deliveries, oldest first (WEBHOOK_LOG_SIZE at most). */
  records: DeliveryRecord[];
  /** How many were refused since the last write (records.length or more). */
  count: number;
}

/** Refused deliveries, buffered per registration and written together (see the module's comment). */
export class RefusalLog {
  private readonly store: DurableStore<WfxState, WfxRecord>;
  private readonly onError: (err: unknown, what: string) => void;
  private readonly baseMs: number;
  private intervalMs: number;
  private readonly batches = new Map<string, Batch>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(options: RefusalLogOptions) {
    this.store = options.store;
    this.onError = options.onError;
    this.baseMs = options.intervalMs ?? REFUSALS_INTERVAL_MS;
    this.intervalMs = this.baseMs;
  }

  /** Keeps `record` (a delivery of `webhookId` refused as it arrived) until the next write. */
  add(webhookId: string, record: DeliveryRecord): void {
    let batch = this.batches.get(webhookId);
    if (!batch) this.batches.set(webhookId, (batch = { records: [], count: 0 }));
    insertByReceipt(batch.records, record);
    batch.count++;
    if (batch.records.length > WEBHOOK_LOG_SIZE) batch.records.shift();
    if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush(), this.intervalMs);
      // Nothing waits on it: a process may end before (the daemon writes them at its stop).
      this.timer.unref();
    }
  }

  /** The refused deliveries of `webhookId` not written yet, oldest first. */
  unwritten(webhookId: string): readonly DeliveryRecord[] {
    return this.batches.get(webhookId)?.records ?? [];
  }

  /** How many deliveries of `webhookId` were refused and not written yet. */
  unwrittenCount(webhookId: string): number {
    return this.batches.get(webhookId)?.count ?? 0;
  }

  /** Writes what is kept, one journal entry for every registration; resolves once it is durable. */
  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.batches.size === 0) return this.writing;
    const records: WfxRecord[] = [];
    let full = false;
    for (const [webhookId, batch] of this.batches) {
      records.push({ type: 'webhook.refused', webhookId, records: batch.records, count: batch.count });
      full ||= batch.count > WEBHOOK_LOG_SIZE;
    }
    this.batches.clear();
    this.intervalMs = full ? Math.min(this.intervalMs * 2, REFUSALS_MAX_INTERVAL_MS) : this.baseMs;
    // Applied to the state at once (the log shows them from there), durable when this resolves.
    const commit = this.store.commit(...records);
    this.writing = commit.catch((err: unknown) => this.onError(err, 'writing refused webhook deliveries'));
    return this.writing;
  }

  /** Writes what is kept and stops; resolves once it is durable. */
  close(): Promise<void> {
    return this.flush();
  }
}
