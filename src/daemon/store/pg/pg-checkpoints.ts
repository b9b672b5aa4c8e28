/**
 * A PostgreSQL store's checkpoints (pg-store.ts): each partition's snapshot written as of a
 * seq, the journal it covers deleted, in one transaction checked against the lease; when one is
 * due (as many entries and bytes since as the store's snapshots hold, as in the JSON store).
 */
import type pg from 'pg';
import type { ErrorCode, WfxError } from '../../../shared/errors.js';
import type { StoreLogger } from '../durable-store.js';
import { putSnapshots } from './fenced-sql.js';
import type { JournalFollower } from './journal-follower.js';
import type { JournalWriter } from './journal-writer.js';
import { DEFAULT_LEASE_MS, describePartitions, type PartitionLease } from './lease.js';
import { serializePartitions, COMMONS_PARTITION, type PartitionLayout } from './partition-state.js';
import type { PgStoreOptions } from './pg-store-options.js';
import { holdsExecutions, serializeRows, type DirtyExecutions, type RowChanges } from './pg-execution-rows.js';

/** What of its store a PgCheckpoints reads and calls. */
export interface CheckpointedStore<S, R> {
  readonly pool: pg.Pool;
  readonly lease: PartitionLease;
  readonly journal: JournalWriter<R>;
  readonly options: PgStoreOptions<S, R>;
  readonly layout: PartitionLayout<S, R>;
  readonly state: S;
  /** The executions changed since their rows were written. */
  readonly dirty: DirtyExecutions;
  /** Whether execution `id` was changed by a diverted transaction not settled yet: its row waits. */
  readonly unjournaled: (id: string) => boolean;
  readonly logger: StoreLogger;
  /** The store's follower of what others write (null: none). */
  readonly follower: () => JournalFollower<S, R> | null;
  /** Whether the store holds every partition. */
  readonly alone: () => boolean;
  readonly flush: () => Promise<void>;
  /** Fails the store for good (RecordStore.fail); `failure` is why, once failed. */
  readonly fail: (what: string, cause: unknown, code?: ErrorCode) => WfxError;
  readonly failure: () => WfxError | null;
}

/** The snapshots of a store's partitions, and the checkpoint that writes them: one at a time. */
export class PgCheckpoints<S, R> {
  /** Per partition: the snapshot's seq. */
  private readonly snapshotSeqs: number[];
  /** Per partition: the size of its snapshot and rows (the sum is the next checkpoint's threshold). */
  private readonly snapshotSizes: number[];
  /** Per partition: how many execution rows it has. */
  private readonly rowCounts: number[];
  /** Rows read or written so far, and their bytes: a row's mean size, for snapshotSizes. */
  private rowsSeen = 0;
  private rowBytesSeen = 0;
  /** The shared partition's snapshot: its seq (null: none written yet) and size. */
  private sharedSnapshotSeq: number | null;
  private sharedSnapshotSize: number;
  private bytesSinceSnapshot = 0;
  private entriesSinceSnapshot = 0;
  private checkpointing: Promise<void> | null = null;
  /** Called after each checkpoint, once durable (DurableStore.evictable's onCheckpoint). */
  readonly durable: Array<() => void> = [];

  /** Starts from the snapshots `loaded` (each partition's seq and size). */
  constructor(
    private readonly store: CheckpointedStore<S, R>,
    loaded: Pick<JournalFollower<S, R>, 'snapshotSeqs' | 'snapshotSizes' | 'rowCounts'>,
  ) {
    const count = store.layout.count;
    this.snapshotSeqs = Array.from({ length: count }, (_, p) => loaded.snapshotSeqs.get(p) ?? 0);
    this.snapshotSizes = Array.from({ length: count }, (_, p) => loaded.snapshotSizes.get(p) ?? 0);
    this.rowCounts = Array.from({ length: count }, (_, p) => loaded.rowCounts.get(p) ?? 0);
    for (let p = 0; p < count; p++) this.sawRows(this.rowCounts[p]!, this.snapshotSizes[p]!);
    const sharedLoaded = loaded.snapshotSizes.has(COMMONS_PARTITION);
    this.sharedSnapshotSeq = sharedLoaded ? loaded.snapshotSeqs.get(COMMONS_PARTITION)! : null;
    this.sharedSnapshotSize = loaded.snapshotSizes.get(COMMONS_PARTITION) ?? 0;
  }

  /** The checkpoint under way, if any. */
  get running(): Promise<void> | null {
    return this.checkpointing;
  }

  /**
   * Partition `partition`'s snapshot is now at `seq`, `bytes` long with its `rows` execution
   * rows (loaded, or written).
   */
  snapshotAt(partition: number, seq: number, bytes: number, rows: number): void {
    this.snapshotSeqs[partition] = seq;
    this.snapshotSizes[partition] = bytes;
    this.rowCounts[partition] = rows;
    this.sawRows(rows, bytes);
  }

  /**
   * The rows to write of `partitions`' executions changed since their rows were (no longer
   * marked changed: mark `ids` again if they are not written), as the state has them now.
   */
  rowsOf(partitions: readonly number[]): RowChanges {
    const { layout, options, dirty } = this.store;
    const taken = dirty.take(
      layout,
      partitions.filter((p) => holdsExecutions(layout, p)),
    );
    // Those of diverted transactions not settled wait, still marked, for the next checkpoint.
    const ids: string[] = [];
    const waiting: string[] = [];
    for (const id of taken) (this.store.unjournaled(id) ? waiting : ids).push(id);
    dirty.mark(waiting);
    return serializeRows(this.store.state, layout, ids, options.summarize);
  }

  /** Partitions `partitions` were loaded by `follower` (a take): their snapshots, and what it changed since. */
  loadedBy(follower: JournalFollower<S, R>, partitions: readonly number[]): void {
    for (const p of partitions)
      this.snapshotAt(
        p,
        follower.snapshotSeqs.get(p)!,
        follower.snapshotSizes.get(p) ?? 0,
        follower.rowCounts.get(p) ?? 0,
      );
    this.store.dirty.mark(follower.dirty.take(this.store.layout, partitions));
  }

  /** Counts `rows` rows of `bytes` (a snapshot's included, when loaded) towards a row's mean size. */
  private sawRows(rows: number, bytes: number): void {
    if (rows === 0) return;
    this.rowsSeen += rows;
    this.rowBytesSeen += bytes;
  }

  /**
   * Counts a commit's entries and bytes journaled; starts a checkpoint once as many entries as
   * `checkpointEvery` and as many bytes as the snapshots hold were journaled since the last.
   */
  journaled(entries: number, bytes: number): void {
    this.bytesSinceSnapshot += bytes;
    this.entriesSinceSnapshot += entries;
    if (
      !this.checkpointing &&
      this.entriesSinceSnapshot >= (this.store.options.checkpointEvery ?? 50_000) &&
      this.bytesSinceSnapshot >= this.snapshotBytes
    ) {
      void this.checkpoint().catch(() => undefined);
    }
  }

  private get snapshotBytes(): number {
    return this.snapshotSizes.reduce((a, b) => a + b, this.sharedSnapshotSize);
  }

  /**
   * Writes the state as of now as the partition's snapshot and deletes the journal it covers,
   * in one transaction checked against the lease. The state is serialized at once (its records
   * keep being applied after), then written once every entry it holds is durable.
   */
  checkpoint(): Promise<void> {
    const failure = this.store.failure();
    if (failure) return Promise.reject(failure);
    this.checkpointing ??= this.write().finally(() => (this.checkpointing = null));
    return this.checkpointing;
  }

  private async write(): Promise<void> {
    // What other daemons wrote to the shared partition is read first: its snapshot is this
    // state's only once every entry before its seq is applied (SharedJournal.exactAt).
    if (this.store.follower() && this.store.journal.shared && this.store.lease.partitions.includes(0)) {
      await this.store.flush();
      await this.store.follower()!.catchUp();
    }
    const seqs = [...this.store.journal.lastSeqs];
    // Executions changed without an entry since (a snapshot's own, moved into rows) count too.
    const dirty = this.store.dirty.partitions(this.store.layout);
    const moved = this.store.lease.partitions.filter(
      (p) => (seqs[p] !== this.snapshotSeqs[p] || dirty.has(p)) && !this.store.journal.moving.has(p),
    );
    const sharedAt = this.sharedCheckpoint(moved);
    if (moved.length === 0 && sharedAt === null) {
      // Nothing to write now: the next try waits for as many entries again.
      this.bytesSinceSnapshot = 0;
      this.entriesSinceSnapshot = 0;
      return;
    }
    const states = serializePartitions(
      this.store.state,
      this.store.layout,
      sharedAt === null ? moved : [...moved, COMMONS_PARTITION],
    );
    const rows = this.rowsOf(moved);
    this.bytesSinceSnapshot = 0;
    this.entriesSinceSnapshot = 0;
    // The shared partition's snapshot is written under partition 0's lease, and its journal
    // deleted a checkpoint late: a daemon following it a little behind reads on rather than find
    // a gap (its own writes are in no snapshot it could load instead).
    const fenced = sharedAt !== null && !moved.includes(0) ? [0, ...moved] : moved;
    const snapshots = moved.map((p) => ({ partition: p, seq: seqs[p]!, epoch: this.store.lease.epochOf(p) }));
    const covered = [...snapshots];
    if (sharedAt !== null) {
      snapshots.push({ partition: COMMONS_PARTITION, seq: sharedAt, epoch: this.store.lease.epochOf(0) });
      if (this.sharedSnapshotSeq !== null) covered.push({ ...snapshots.at(-1)!, seq: this.sharedSnapshotSeq });
    }
    let grown: Map<number, number>;
    try {
      // In the try: a flush that fails must mark the executions taken changed again too.
      await this.store.flush();
      const written = await putSnapshots(this.store.pool, {
        owner: this.store.options.owner,
        fenced: fenced.map((p) => ({ partition: p, epoch: this.store.lease.epochOf(p) })),
        snapshots: snapshots.map((s) => ({ ...s, state: states.get(s.partition)! })),
        covered,
        leaseMs: this.store.options.leaseMs ?? DEFAULT_LEASE_MS,
        rows,
      });
      if (!written)
        throw this.store.fail(
          'a checkpoint was fenced',
          new Error(`${describePartitions(fenced)} no longer carry this daemon's epochs`),
          'STORE_LEASE_LOST',
        );
      grown = written;
    } catch (err) {
      // Their rows are as they were: the next checkpoint writes them.
      this.store.dirty.mark(rows.ids);
      // A failed checkpoint loses nothing (the journal is still there); a fenced one fails the store.
      if (!this.store.failure()) this.store.logger.warn({ err }, 'store: a checkpoint failed; the journal is kept');
      throw err;
    }
    let bytes = rows.bytes;
    this.sawRows(rows.upserts.length, rows.bytes);
    const rowBytes = this.rowsSeen > 0 ? this.rowBytesSeen / this.rowsSeen : 0;
    for (const p of moved) {
      this.snapshotSeqs[p] = seqs[p]!;
      this.rowCounts[p] = this.rowCounts[p]! + (grown.get(p) ?? 0);
      this.snapshotSizes[p] = states.get(p)!.length + Math.round(this.rowCounts[p] * rowBytes);
      bytes += states.get(p)!.length;
    }
    if (sharedAt !== null) {
      this.sharedSnapshotSeq = sharedAt;
      this.sharedSnapshotSize = states.get(COMMONS_PARTITION)!.length;
      bytes += this.sharedSnapshotSize;
    }
    // On the next turn: `checkpointing` is cleared by then, so what it wrote is clean.
    if (this.durable.length > 0) setImmediate(() => this.durable.forEach((fn) => fn()));
    this.store.journal.counters.checkpoints++;
    this.store.journal.counters.bytes += bytes;
    this.store.logger.info(
      { partitions: states.size, bytes, rows: rows.upserts.length, deleted: rows.deletes.length },
      'store: checkpoint written to the database',
    );
  }

  /**
   * The seq to write the shared partition's snapshot at in this checkpoint, or null: it is
   * written by partition 0's holder, when it moved and the state is the journal's at some seq.
   * When it cannot be written yet and none ever was, partition 0 is left out of `moved` (its
   * journal may still hold shared records, from before the shared partition).
   */
  private sharedCheckpoint(moved: number[]): number | null {
    const shared = this.store.journal.shared;
    if (!shared || !this.store.lease.partitions.includes(0)) return null;
    const at = shared.exactAt(this.store.alone());
    if (at !== null) return at === this.sharedSnapshotSeq ? null : at;
    if (this.sharedSnapshotSeq === null && moved.includes(0)) moved.splice(moved.indexOf(0), 1);
    return null;
  }
}
