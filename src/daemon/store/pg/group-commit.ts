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

  constructor(
    /** Writes one batch; its rejection rejects the batch's items. Batches are written in order. */
    private readonly write: (items: readonly T[]) => Promise<void>,
    /** A batch's cap, so one statement stays a reasonable size; the rest goes in the next. */
    private readonly cap: { readonly items: number; readonly bytes: number },
    private readonly bytesOf: (item: T) => number,
  ) {}

  /** Adds `item` to the next write; resolves once it is written. */
  add(item: T): Promise<void> {
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
    // Batches are written in order: the newest one written, all are.
    await (this.pending ?? this.queued.at(-1) ?? this.inFlight)?.written;
  }

  /** Resolves once no write is under way (whatever its outcome). */
  async idle(): Promise<void> {
    await this.writing;
  }

  private async writeAll(): Promise<void> {
    for (;;) {
      const batch = this.queued.shift() ?? this.pending;
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

function newBatch<T>(): Batch<T> {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const written = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // Rejections are the adders' to see; one nobody awaits must not end the process.
  written.catch(() => undefined);
  return { items: [], bytes: 0, written, resolve, reject };
}
