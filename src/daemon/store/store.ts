/**
 * The JSON store: the Store class is one state machine (commit, checkpoint, hold, failure, close)
 * over private fields all of its parts share: the journal, the checkpoint under way, the hold, the
 * executions changed since the last checkpoint. What needs none of them lives beside it:
 * durable-store.ts (the interface), store-options.ts, store-recovery.ts (opening the directory),
 * snapshot-checkpoint.ts (the snapshot a checkpoint writes when the executions are in it, and the
 * last one's bytes it reuses), snapshot-*.ts, segment-*.ts, journal.ts, manifest.ts.
 */
import { join } from 'node:path';
import type { StoreHealth } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import type { AtomicFileWriter } from '../disk/durable-files.js';
import { segmentsAfter, type Journal } from './journal.js';
import type { ReplayReport } from './journal-scan.js';
import { crashPoint } from './crash-point.js';
import type { Manifest, SnapshotMark } from './manifest.js';
import { snapshotPathIn } from './snapshot-file.js';
import type { StoreSegments } from './at-rest-port.js';
import { SegmentChanges, settleForgetting } from './segment-changes.js';
import { RecordStore, silentLogger } from './record-store.js';
import { SnapshotCheckpoint } from './snapshot-checkpoint.js';
import { slicePacer } from './snapshot-write.js';
import type { StoreHold, StoreOptions } from './store-options.js';
import type { Decided, Divert, EvictableEntries, Transaction } from './durable-store.js';
import { recoverStore } from './store-recovery.js';

export type { Divert, DurableStore, ExecutionPartitions, StoreLogger, Transaction } from './durable-store.js';

/**
 * A durable state machine: the live state in memory, every change a record written to the
 * write-ahead journal, periodic snapshots to keep recovery short.
 *
 * `commit(records)` applies the records to the in-memory state at once (so the next decision
 * sees them, in journal order) and resolves only once they are fsynced. Nothing may leave the
 * process (an HTTP answer, a side effect) before the commit it depends on has resolved. The
 * records of one commit form one journal entry, so recovery applies all of them or none.
 *
 * The store is crash-only: if a record's apply throws or a disk write fails, the in-memory
 * state can no longer be trusted to match the disk, so the store fails, every later commit
 * throws STORE_FAILED, and `onFailure` tells the owner to exit; restart recovers from disk.
 */
export class Store<S, R> extends RecordStore<S, R> {
  private journal: Journal<R[]>;
  private snapshotSeq: number;
  /** Size of the last snapshot (bytes; characters for one this process wrote, near enough). */
  private snapshotBytes: number;
  /** `journal.bytes` when the last snapshot was taken (0 at open: every segment read counts). */
  private journalBytesAtSnapshot = 0;
  private checkpointing: Promise<void> | null = null;
  /** Checkpoints written since open and the seconds they took, all told (metrics). */
  readonly checkpointStats = { count: 0, seconds: 0 };
  /** Set while a hold keeps the snapshot and the journal segments as they are (no checkpoint); resolves at its release. */
  private held: Promise<void> | null = null;
  /**
   * The snapshots a checkpoint writes when the executions are in them, not in segments: the last
   * one, whose unchanged entries the next copies as bytes (snapshot-checkpoint.ts).
   */
  private readonly snapshots: SnapshotCheckpoint<S, R>;
  /**
   * The execution segments in effect (snapshotCollection.summarize only): checkpoints write the
   * executions `changes` holds (changed since the last one) into a new one, each as it was at the
   * checkpoint's instant.
   */
  private segments: StoreSegments | null = null;
  private changes = new SegmentChanges();
  private readonly checkpointed: Array<() => void> = [];
  /** The executions that may leave memory, read back from their segments (DurableStore.evictable). */
  readonly evictable: EvictableEntries | null;
  private readonly options: StoreOptions<S, R>;
  /** What the directory should hold (manifest.ts): updated before each step of a checkpoint that changes it. */
  private readonly manifest: Manifest;
  /** What recovery found when the store was opened. */
  readonly recovery: ReplayReport & { readonly snapshotSeq: number };

  private constructor(
    options: StoreOptions<S, R>,
    journal: Journal<R[]>,
    state: S,
    recovery: ReplayReport & { snapshotSeq: number },
    snapshotBytes: number,
    manifest: Manifest,
    segments: StoreSegments | null,
  ) {
    super(state, options, options.logger ?? silentLogger);
    this.manifest = manifest;
    this.snapshotBytes = snapshotBytes;
    this.options = options;
    this.journal = journal;
    this.snapshotSeq = recovery.snapshotSeq;
    this.recovery = recovery;
    this.segments = segments;
    this.snapshots = new SnapshotCheckpoint({
      options,
      logger: this.logger,
      state: () => this.state,
      failure: () => this.failure,
      stopped: () => this.failure !== null || this.closed,
      pacer: () => this.pacer(),
      markPending: (seq, file) => this.markPending(seq, file),
    });
    this.evictable =
      segments?.evictable({
        clean: (key) => this.checkpointing === null && this.changes.isClean(key),
        onCheckpoint: (fn) => void this.checkpointed.push(fn),
        guard: (fn) => this.changes.guard(fn),
      }) ?? null;
  }

  /**
   * Opens the store in `options.dir`: loads the snapshot, replays the journal after it, cuts a torn
   * tail (logged as WARN), and writes the directory's manifest (manifest.ts). Throws WfxError
   * JOURNAL_CORRUPT or SNAPSHOT_CORRUPT when acknowledged data is damaged, DATA_DIR_DAMAGED when the
   * manifest is damaged, the snapshot it names is gone, or it is missing beside a snapshot or a
   * journal (refuseUnlisted); never starts with records silently dropped, nor empty over a snapshot.
   */
  static async open<S, R>(options: StoreOptions<S, R>): Promise<Store<S, R>> {
    const { journal, state, recovery, snapshotBytes, manifest, layout, changed, change, segments } =
      await recoverStore(options);
    const store = new Store(options, journal, state, recovery, snapshotBytes, manifest, segments);
    if (segments) store.changes = new SegmentChanges(changed);
    if (layout) await store.snapshots.indexLoaded(snapshotBytes, layout, changed, change);
    return store;
  }

  /** The pacer of background slices (snapshot-write.ts, slicePacer). */
  private pacer(): (tookMs: number) => Promise<void> {
    return slicePacer(() => this.journal.lastSeq);
  }

  /** Resolves once the snapshot loaded at open is indexed for the next checkpoint, or given up (tests, benchmarks). */
  indexed(): Promise<void> {
    return this.snapshots.indexed();
  }

  private get snapshotPath(): string {
    return snapshotPathIn(this.options.dir);
  }

  /** GET /health's `store`: the data directory's (where it is, the daemon's info says). */
  health(): StoreHealth {
    return { kind: 'json' };
  }

  /** How many executions changed since the last checkpoint began: the next one writes them (or that they are gone). */
  get changedSinceCheckpoint(): number {
    return this.changes.size;
  }

  /** Sequence number of the last journal entry. */
  get lastSeq(): number {
    return this.journal.lastSeq;
  }

  /**
   * Applies one record. While a snapshot is being copied, the entries it changes are copied
   * first; otherwise they lose their range in the last snapshot (their text there is out of date).
   */
  protected override beginApplies(): void {
    this.changes.runBegins();
  }

  /** As RecordStore's; a diverted transaction's settle forgets the marks of what it made (settleForgetting). */
  override transact<T>(fn: () => Decided<T, R>, divert?: Divert<R>): Transaction<T, R> {
    const epoch = this.changes.epoch;
    const tx = super.transact(fn, divert);
    const collection = this.options.snapshotCollection;
    if (tx.settle === null || this.segments === null || collection === undefined) return tx;
    // Gone, and in no segment.
    const forgettable = (key: string) =>
      this.entryGone(collection.key, key) && this.segments?.locationOf(key) === undefined;
    return settleForgetting(tx, collection.touched, forgettable, (key) => this.changes.forget(key, epoch));
  }

  protected override beforeApply(record: R): void {
    if (this.segments) this.options.snapshotCollection!.touched(record, this.changes.touch);
    else this.snapshots.touched(record);
  }

  protected append(serialized: readonly string[]): Promise<void> {
    let appended: { durable: Promise<void> };
    try {
      appended = this.journal.appendJson({ open: '[', parts: serialized, close: ']' });
    } catch (err) {
      return Promise.reject(this.fail('the journal cannot be written', err));
    }
    // A checkpoint costs about as much as the state is big. Waiting until the journal since the
    // last one is as big as that snapshot keeps the checkpoints' cost at most that of what was
    // journaled (Redis rewrites its append-only file at 100 % growth for the same reason; see
    // docs/decisions/006-checkpoints-in-slices.md). Recovery replays at most about a snapshot's
    // size of journal.
    if (
      !this.checkpointing &&
      !this.held &&
      this.journal.lastSeq - this.snapshotSeq >= (this.options.checkpointEvery ?? 50_000) &&
      this.journal.bytes - this.journalBytesAtSnapshot >= this.snapshotBytes
    ) {
      void this.checkpoint().catch(() => undefined);
    }
    return appended.durable.catch((err: unknown) => {
      throw this.fail('a journal write failed', err);
    });
  }

  /** Resolves once everything committed so far is durable (diverted transactions too). */
  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    await this.journal.flush().catch((err: unknown) => {
      throw this.fail('a journal write failed', err);
    });
    await this.diverted.idle();
    if (this.failure) throw this.failure;
  }

  /**
   * Writes a snapshot of the current state and retires the journal segments it covers.
   * The snapshot is the state at `lastSeq` as of the call (copied a slice at a time from then
   * on, see SnapshotCopy), or, while the snapshot loaded at open is still being indexed, as of
   * when that ends; entries appended after go to a new segment. One checkpoint at a time.
   */
  checkpoint(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    // It would replace the snapshot and retire segments a hold's owner is copying: after it.
    if (this.held) return this.held.then(() => this.checkpoint());
    return this.checkpointNow();
  }

  /**
   * Takes a checkpoint (or joins the one under way), then keeps every other from starting, and
   * so the snapshot in place and the journal segments after it, until `release` is called: a
   * consistent copy of the store taken while commits go on (`wfx daemon backup`). Holds are
   * taken one at a time. Throws STORE_FAILED / STORE_CLOSED.
   */
  async hold(): Promise<StoreHold> {
    while (this.held) await this.held;
    if (this.failure) throw this.failure;
    if (this.closed) throw new WfxError('STORE_CLOSED', 'the store is closed');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.held = held;
    const done = (): void => {
      if (this.held === held) this.held = null;
      release();
    };
    try {
      await this.checkpointNow();
    } catch (err) {
      done();
      throw err;
    }
    // No await from here on: the segments and the durable end of the last are of one instant.
    const dir = join(this.options.dir, 'journal');
    const segments = segmentsAfter(dir, this.journal.segmentList, this.snapshotSeq, this.journal.durableBytes);
    return {
      snapshot: this.manifest.content.snapshot,
      snapshotPath: this.snapshotPath,
      segments,
      executions: this.segments?.files() ?? [],
      release: done,
    };
  }

  private checkpointNow(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.checkpointing) return this.checkpointing;
    if (this.journal.lastSeq === this.snapshotSeq) return Promise.resolve();
    const run = async (): Promise<void> => {
      if (this.snapshots.indexing) {
        // Then the entries of the snapshot loaded at open are copied too. Otherwise the state is
        // taken now, at the call, with no await before.
        await this.snapshots.indexed();
        if (this.failure) throw this.failure;
      }
      const t0 = performance.now();
      const seq = this.journal.lastSeq;
      const journalBytes = this.journal.bytes;
      const savedAt = new Date().toISOString();
      let written: Promise<void>;
      let mark: SnapshotMark | null = null;
      let size = 0;
      let reused = 0;
      let dropped: readonly number[] = [];
      if (this.segments) {
        const started = this.segments.checkpoint({
          state: this.state as object,
          large: this.options.snapshotCollection!,
          derived: this.options.derived,
          dirty: this.changes.take(),
          head: { seq, savedAt },
          snapshotPath: this.snapshotPath,
          pace: this.pacer(),
          failure: () => this.failure,
          markPending: (file) => this.markPending(seq, file),
        });
        this.changes.copying(started.copy);
        written = started.written.then((w) => {
          ({ mark, size, reused, dropped } = w);
        });
        written.catch(() => undefined); // awaited below, unless roll() throws first
      } else {
        // The snapshot of the state as of now, the executions in it.
        written = this.snapshots.write(seq, savedAt).then((w) => {
          ({ mark, size, reused } = w);
        });
        written.catch(() => undefined); // awaited below, unless roll() throws first
      }
      const { closed } = this.journal.roll();
      // Both settled before anything throws: a snapshot still being written when the old
      // segment's close fails must not go on (and rename itself into place) after close().
      const [wrote, rolled] = await Promise.allSettled([written, closed]);
      this.changes.copying(null);
      if (wrote.status === 'rejected') throw wrote.reason;
      if (rolled.status === 'rejected') throw rolled.reason;
      this.snapshotSeq = seq;
      this.snapshotBytes = size;
      this.journalBytesAtSnapshot = journalBytes;
      // The manifest names the new snapshot and drops the segments it covers before they are
      // deleted: a crash between the two leaves them unlisted, which the next open ignores.
      const live = this.journal.segmentList;
      let from = 0;
      while (from < live.length - 1 && live[from + 1]! - 1 <= seq) from++;
      this.manifest.content = { format: 1, snapshot: mark, pending: null, segments: live.slice(from) };
      await this.manifest.save();
      crashPoint('checkpoint:named');
      await this.segments?.retire(dropped, this.options);
      const retired = await this.journal.retire(seq);
      this.logger.info(
        { seq, bytes: size, reusedBytes: reused, retiredSegments: retired },
        'store: checkpoint written',
      );
      this.checkpointStats.count++;
      this.checkpointStats.seconds += (performance.now() - t0) / 1000;
      for (const fn of this.checkpointed) fn();
    };
    this.checkpointing = run()
      .catch((err: unknown) => {
        throw this.fail('a checkpoint failed', err);
      })
      .finally(() => {
        this.checkpointing = null;
      });
    return this.checkpointing;
  }

  /**
   * Records a snapshot written and synced but not yet renamed into place (its `beforeRename`):
   * whichever of the two snapshots a crash leaves, the manifest vouches for it.
   */
  private async markPending(seq: number, file: AtomicFileWriter): Promise<void> {
    crashPoint('checkpoint:synced');
    this.manifest.content = { ...this.manifest.content, pending: { seq, bytes: file.bytes, crc32: file.crc32 } };
    await this.manifest.save();
    crashPoint('checkpoint:pending');
  }

  /** Resolves once no directory image is being written in the background (StoreSegments.imageRefreshed; tests). */
  imageRefreshed(): Promise<void> {
    return this.segments?.imageRefreshed() ?? Promise.resolve();
  }

  /** Flushes, checkpoints (so the next start replays nothing), leaves a directory image of it (decision 076), closes. */
  async close(options: { checkpoint?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    await this.diverted.idle(); // their settle records come after
    await this.checkpointing?.catch(() => undefined); // a copy under way stops at its next slice if the store failed
    const final = !this.failure && options.checkpoint !== false;
    if (final) await this.checkpoint();
    await this.snapshots.stopIndexing();
    this.closed = true;
    await this.journal.close().catch(() => undefined);
    await this.snapshots.close();
    const asWritten = final && !this.failure && this.changes.size === 0 && this.journal.lastSeq === this.snapshotSeq;
    if (asWritten) await this.segments?.leaveImage(this.state as object, this.options);
    await this.segments?.close();
    await this.snapshots.finish();
  }

  /** Resolves once the files replaced or retired so far (snapshots, journal segments) are freed. */
  async freed(): Promise<void> {
    await Promise.all([this.snapshots.freed(), this.journal.freed()]);
  }
}
