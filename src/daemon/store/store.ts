/**
 * The JSON store: the Store class is one state machine (commit, checkpoint, hold, failure, close)
 * over private fields all of its parts share: the journal, the snapshot's ranges, the copy under way.
 * What needs none of them lives beside it: durable-store.ts (the interface), store-options.ts,
 * store-recovery.ts (opening the directory), snapshot-*.ts, segment-*.ts, journal.ts, manifest.ts.
 */
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoreHealth } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { AtomicFileWriter, Freeings } from '../disk/durable-files.js';
import { segmentsAfter, type Journal } from './journal.js';
import type { ReplayReport } from './journal-scan.js';
import { SnapshotCopy, type EntryRanges } from './snapshot-copy.js';
import { crashPoint } from './crash-point.js';
import type { Manifest, SnapshotMark } from './manifest.js';
import { snapshotPathIn } from './snapshot-file.js';
import { indexLoadedSnapshot, SnapshotIndex, type SnapshotLayout } from './snapshot-index.js';
import type { StoreSegments } from './at-rest-port.js';
import { SegmentChanges, settleForgetting } from './segment-changes.js';
import { RecordStore, silentLogger } from './record-store.js';
import { SNAPSHOT_SLICE_MS, slicePacer, writePieces, writeSnapshotText } from './snapshot-write.js';
import type { SnapshotFile, StoreHold, StoreOptions } from './store-options.js';
import type { Divert, EvictableEntries, Transaction } from './durable-store.js';
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
  /** The snapshot being copied while a checkpoint runs, until `source` takes its unchanged entries: sees every record meanwhile. */
  private copying: SnapshotCopy | null = null;
  /**
   * The last snapshot (snapshotCollection only), open for reading, and where its entries that no
   * record has changed since lie in it: the next checkpoint copies their bytes instead of
   * serializing them. The one loaded at open becomes it once indexed (`loading`); one written
   * before snapshots had layouts never does, and the first checkpoint serializes every entry.
   */
  private source: { readonly file: FileHandle; readonly ranges: EntryRanges } | null = null;
  /** Snapshots replaced by a checkpoint, their blocks being freed a chunk at a time (Freeings). */
  private readonly freeings = new Freeings();
  /**
   * The snapshot loaded at open while its layout is checked against its bytes (SnapshotIndex),
   * a slice at a time after the open. `changed` collects the entries changed since the file was
   * written (the journal replayed at open, commits since), whose ranges are dropped at the end.
   */
  private loading: {
    readonly changed: Set<string>;
    readonly change: (key: string) => void;
    stop: boolean;
    done: Promise<void>;
  } | null = null;
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
    const logger = options.logger ?? silentLogger;
    const store = new Store(options, journal, state, recovery, snapshotBytes, manifest, segments);
    if (segments) store.changes = new SegmentChanges(changed);
    if (layout) {
      const file = await openFile(snapshotPathIn(options.dir), 'r').catch((err: unknown) => {
        logger.warn(
          { err },
          'store: the snapshot cannot be read again to index it; the next checkpoint serializes every entry',
        );
        return null;
      });
      if (file) store.indexLoaded(file, snapshotBytes, layout, changed, change);
    }
    return store;
  }

  /**
   * Indexes the snapshot loaded at open (its layout checked against its bytes), a slice at a
   * time from the next turn on, as a snapshot copy runs: then the first checkpoint copies the
   * entries unchanged since as bytes of it, as every later checkpoint does, instead of
   * serializing every entry again (docs/decisions/013-incremental-checkpoints.md).
   */
  private indexLoaded(
    file: FileHandle,
    size: number,
    layout: SnapshotLayout,
    changed: Set<string>,
    change: (key: string) => void,
  ): void {
    const large = this.options.snapshotCollection!;
    const index = new SnapshotIndex(
      file,
      size,
      layout,
      () => (this.state as Record<string, unknown>)[large.key] as Record<string, unknown>,
    );
    const loading = { changed, change, stop: false, done: Promise.resolve() };
    this.loading = loading;
    const stopped = (): boolean => loading.stop || this.failure !== null || this.closed;
    const pace = this.pacer();
    loading.done = indexLoadedSnapshot(index, file, pace, stopped, large.sliceEntries, this.logger, (ranges) => {
      // Every record applied until now is in `changed`: its entries' ranges are out of date.
      this.loading = null;
      if (ranges === null) return;
      for (const key of changed) ranges.delete(key);
      this.source = { file, ranges };
    });
  }

  /** The pacer of background slices (snapshot-write.ts, slicePacer). */
  private pacer(): (tookMs: number) => Promise<void> {
    return slicePacer(() => this.journal.lastSeq);
  }

  /** Resolves once the snapshot loaded at open is indexed for the next checkpoint, or given up (tests, benchmarks). */
  indexed(): Promise<void> {
    return this.loading?.done ?? Promise.resolve();
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
  override transact<T>(fn: (emit: (record: R) => void) => T, divert?: Divert<R>): Transaction<T, R> {
    const epoch = this.changes.epoch;
    const tx = super.transact(fn, divert);
    const collection = this.options.snapshotCollection;
    if (tx.settle === null || this.segments === null || collection === undefined) return tx;
    // Gone, and in no segment.
    const forgettable = (key: string) =>
      this.entryGone(collection.key, key) && this.segments?.locationOf(key) === undefined;
    return settleForgetting(tx, collection.touched, forgettable, (key) => this.changes.forget(key, epoch));
  }

  protected override applyOne(record: R): void {
    if (this.segments) this.options.snapshotCollection!.touched(record, this.changes.touch);
    else if (this.copying) this.options.snapshotCollection!.touched(record, this.copying.touch);
    else if (this.source) this.options.snapshotCollection!.touched(record, this.source.ranges.delete);
    else if (this.loading) this.options.snapshotCollection!.touched(record, this.loading.change);
    super.applyOne(record);
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
      if (this.loading) {
        // Then the entries of the snapshot loaded at open are copied too. Otherwise the state is
        // taken now, at the call, with no await before.
        await this.loading.done;
        if (this.failure) throw this.failure;
      }
      const t0 = performance.now();
      const seq = this.journal.lastSeq;
      const journalBytes = this.journal.bytes;
      const savedAt = new Date().toISOString();
      const large = this.options.snapshotCollection;
      let written: Promise<void>;
      let mark: SnapshotMark | null = null;
      let size = 0;
      let reused = 0;
      let dropped: readonly number[] = [];
      if (this.segments) {
        const started = this.segments.checkpoint({
          state: this.state as object,
          large: large!,
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
      } else if (large) {
        // The state as of now, copied a slice at a time (entries about to change copied first),
        // the entries unchanged since the last snapshot as bytes of that file.
        const previous = this.source;
        this.source = null;
        const copy = new SnapshotCopy(
          { format: 1, seq, savedAt },
          this.state as object,
          large.key,
          previous?.ranges ?? null,
          this.options.derived,
          large.keys,
        );
        this.copying = copy;
        written = (async () => {
          let file: AtomicFileWriter | null = null;
          let replaced: FileHandle | null = null;
          try {
            file = await AtomicFileWriter.open(this.snapshotPath);
            // Each slice's text goes to the file before the next slice: the copy's strings die
            // young instead of piling up (and being promoted) until the end.
            const pause = this.pacer();
            for (;;) {
              if (this.failure) throw this.failure; // no snapshot from a store that failed meanwhile
              const started = performance.now();
              const done = copy.step(SNAPSHOT_SLICE_MS, large.sliceEntries);
              const took = performance.now() - started;
              await writePieces(file, copy.drain(), previous?.file ?? null);
              if (done) break;
              await pause(took);
            }
            // No snapshot from a store that failed meanwhile (its journal, say).
            if (this.failure) throw this.failure;
            // The snapshot it replaces is freed gradually, once the copy's reader of it is closed.
            const writer = file;
            replaced = await file.commitKeepingReplaced(() => this.markPending(seq, writer));
            crashPoint('checkpoint:renamed');
            const reader = await openFile(this.snapshotPath, 'r');
            // No await from here on: every record applied until now went through the copy's touch.
            this.source = { file: reader, ranges: copy.unchangedRanges() };
            this.copying = null;
            size = copy.bytes;
            reused = copy.reusedBytes;
            mark = { seq, bytes: writer.bytes, crc32: writer.crc32 };
          } catch (err) {
            await file?.abort();
            throw err;
          } finally {
            this.copying = null;
            await previous?.file.close().catch(() => undefined);
            this.freeings.add(replaced);
          }
        })();
        written.catch(() => undefined); // awaited below, unless roll() throws first
      } else {
        const state = { ...(this.state as object) } as Record<string, unknown>;
        for (const key of this.options.derived ?? []) delete state[key];
        const snapshot: SnapshotFile<S> = { format: 1, seq, savedAt, state: state as S };
        const text = JSON.stringify(snapshot); // serialized now
        size = text.length;
        written = writeSnapshotText(this.snapshotPath, text, seq, (file) => this.markPending(seq, file)).then((m) => {
          mark = m;
        });
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
    if (this.loading) {
      this.loading.stop = true;
      await this.loading.done;
    }
    this.closed = true;
    await this.journal.close().catch(() => undefined);
    await this.source?.file.close().catch(() => undefined);
    const asWritten = final && !this.failure && this.changes.size === 0 && this.journal.lastSeq === this.snapshotSeq;
    if (asWritten) await this.segments?.leaveImage(this.state as object, this.options);
    await this.segments?.close();
    this.source = null;
    await this.freeings.finish();
  }

  /** Resolves once the files replaced or retired so far (snapshots, journal segments) are freed. */
  async freed(): Promise<void> {
    await Promise.all([this.freeings.settled(), this.journal.freed()]);
  }
}
