/*
 * Reads asked for by the event stream, batched: however many events arrive for a row, it is
 * read at most once per interval, and probes of new executions are capped per batch (a burst of
 * starts is reported as missed instead of read one by one).
 */
import type { RowRead } from './live-list.js';

/** The clock and timer RowReads runs on (the browser's, or a test's). */
export interface ReadSchedule {
  readonly now: () => number;
  readonly setTimer: (fn: () => void, ms: number) => unknown;
  readonly clearTimer: (handle: unknown) => void;
}

/** Options of RowReads. */
export interface RowReadsOptions {
  /** Carries out one read (its answer is applied by the caller). */
  readonly read: (read: RowRead) => void;
  /** Called with how many probes a batch left out (the list may lack new executions). */
  readonly missed: (count: number) => void;
  /** The shortest time between two batches, in milliseconds. */
  readonly intervalMs: number;
  /** Probes read per batch at most. */
  readonly maxProbes: number;
  readonly schedule: ReadSchedule;
}

/** Reads requested since the last batch, each execution once, carried out a batch at a time. */
export class RowReads {
  /** Each execution asked for since the last batch, and how (a refresh wins over a probe). */
  private readonly pending = new Map<string, RowRead['kind']>();
  private timer: unknown = null;
  private lastBatch = Number.NEGATIVE_INFINITY;
  private disposed = false;

  constructor(private readonly options: RowReadsOptions) {}

  /** Asks for a read; it is carried out with the next batch, at most one interval after the last one. */
  request(read: RowRead): void {
    if (this.disposed) return;
    if (this.pending.get(read.id) !== 'refresh') this.pending.set(read.id, read.kind);
    if (this.timer !== null) return;
    const { now, setTimer } = this.options.schedule;
    const wait = Math.max(0, this.lastBatch + this.options.intervalMs - now());
    this.timer = setTimer(() => this.batch(), wait);
  }

  /** Carries out the pending reads now. */
  private batch(): void {
    this.timer = null;
    this.lastBatch = this.options.schedule.now();
    const reads = [...this.pending];
    this.pending.clear();
    let probes = 0;
    let missed = 0;
    for (const [id, kind] of reads) {
      if (kind === 'probe' && ++probes > this.options.maxProbes) missed++;
      else this.options.read({ id, kind });
    }
    if (missed > 0) this.options.missed(missed);
  }

  /** Drops what is pending and asks for nothing more. */
  dispose(): void {
    this.disposed = true;
    this.pending.clear();
    if (this.timer !== null) this.options.schedule.clearTimer(this.timer);
    this.timer = null;
  }
}
