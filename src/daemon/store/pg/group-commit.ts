/**
 * Group commit to a database: items wait in a batch while one write is in flight, then the whole
 * batch goes as one statement. Under load each round trip carries many items, as each fsync does
 * in the file store's AppendFile.
 */

interface Batch<T> {
  readonly items: T[];
  bytes: number;
  readonly written: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<T> {
  /** The batch taking items now; full ones wait in `queued`, behind the one in flight. */
  private pending: Batch<T> | null = null;
  private readonly queued: Batch<T>[] = [];
  private inFlight: Batch<T> | null = null;
  private writing: Promise<void> | null = null;
  /** Set by abandon(): every batch rejects with it at once, the write in flight left to end alone. */
  private abandoned: unknown = null;

  constructor(
    /** Writes one batch; its rejection rejects the batch's items. Batches are written in order. */
    private readonly write: (items: readonly T[]) => Promise<void>,
    /** A batch's cap, so one statement stays a reasonable size; the rest goes in the next. */
    private readonly cap: { readonly items: number; readonly bytes: number },
    private readonly bytesOf: (item: T) => number,
  ) {}

  /** Adds `item` to the next write; resolves once it is written. */
  add(item: T): Promise<void> {
    if (this.abandoned !== null) return rejected(this.abandoned);
    let batch = this.pending;
    if (!batch || batch.items.length >= this.cap.items || batch.bytes >= this.cap.bytes) {
      if (batch) this.queued.push(batch);
      batch = this.pending = newBatch<T>();
    }
    batch.items.push(item);
    batch.bytes += this.bytesOf(item);
    this.writing ??= this.writeAll();
    return batch.written;
  }

  /** Resolves once everything added so far is written; rejects if the last batch failed. */
  async flush(): Promise<void> {
    if (this.abandoned !== null) throw this.abandoned;
    // Batches are written in order: the newest one written, all are.
    await (this.pending ?? this.queued.at(-1) ?? this.inFlight)?.written;
  }

  /** Resolves once no write is under way (whatever its outcome); at once once abandoned. */
  async idle(): Promise<void> {
    if (this.abandoned === null) await this.writing;
  }

  /**
   * Rejects every batch with `err` now, the one in flight included, and every later add: the
   * store failed, and nothing more can be acknowledged. A write in flight is not waited for (a
   * partitioned network may hold it for as long as the query timeout): it may still land, as
   * any write whose answer was lost may (docs/clustering.md says which codes mean that).
   */
  abandon(err: unknown): void {
    if (this.abandoned !== null) return;
    this.abandoned = err;
    for (const batch of [this.inFlight, ...this.queued, this.pending]) batch?.reject(err);
    this.queued.length = 0;
    this.pending = null;
  }

  private async writeAll(): Promise<void> {
    for (;;) {
      const batch = this.abandoned === null ? (this.queued.shift() ?? this.pending) : null;
      if (!batch) break;
      if (batch === this.pending) this.pending = null;
      this.inFlight = batch;
      try {
        await this.write(batch.items);
        batch.resolve();
      } catch (err) {
        batch.reject(err);
      }
    }
    this.inFlight = null;
    this.writing = null;
  }
}

function rejected(err: unknown): Promise<void> {
  const promise = Promise.reject(err as Error);
  promise.catch(() => undefined);
  return promise;
}

function newBatch<T>(): Batch<T> {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const written = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // Rejections are the adders' to see; one nobody awaits must not end the process.
  written.catch(() => undefined);
  return { items: [], bytes: 0, written, resolve, reject };
}
