/**
 * The snapshot a JSON store's checkpoint writes when its executions are in it, not in execution
 * segments: the large collection copied a slice at a time, its entries unchanged since the last
 * snapshot as bytes of that file (docs/decisions/013-incremental-checkpoints.md), or the whole
 * state serialized at once when there is no large collection. It keeps what that copy needs
 * between checkpoints: the last snapshot open for reading and where its unchanged entries lie,
 * the snapshot loaded at open while it is indexed, the copy under way, and the snapshots
 * replaced, being freed. Store (store.ts) decides when; this writes.
 */
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { AtomicFileWriter, Freeings } from '../disk/durable-files.js';
import { crashPoint } from './crash-point.js';
import type { StoreLogger } from './durable-store.js';
import type { SnapshotMark } from './manifest.js';
import { SnapshotCopy, type EntryRanges } from './snapshot-copy.js';
import { snapshotPathIn } from './snapshot-file.js';
import { indexLoadedSnapshot, SnapshotIndex, type SnapshotLayout } from './snapshot-index.js';
import { SNAPSHOT_SLICE_MS, writePieces, writeSnapshotText } from './snapshot-write.js';
import type { SnapshotFile, StoreOptions } from './store-options.js';

/** What a snapshot checkpoint reads of its store (Store's fields, read when used). */
export interface SnapshotStore<S, R> {
  readonly options: StoreOptions<S, R>;
  readonly logger: StoreLogger;
  /** The live state. */
  state(): S;
  /** The store's failure, once it has failed: no snapshot is written from a store that failed. */
  failure(): Error | null;
  /** Whether background work stops: the store failed or closed. */
  stopped(): boolean;
  /** The pacer of background slices (snapshot-write.ts, slicePacer). */
  pacer(): (tookMs: number) => Promise<void>;
  /** Records a snapshot synced but not yet renamed into place in the manifest (Store.markPending). */
  markPending(seq: number, file: AtomicFileWriter): Promise<void>;
}

/** What a snapshot checkpoint wrote. */
export interface SnapshotWritten {
  readonly mark: SnapshotMark | null;
  /** Its size (bytes; characters for one serialized whole, near enough). */
  readonly size: number;
  /** Bytes copied from the last snapshot instead of serialized. */
  readonly reused: number;
}

/** The snapshots of a store that keeps its executions in them: the last one, the copy under way. */
export class SnapshotCheckpoint<S, R> {
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

  constructor(private readonly store: SnapshotStore<S, R>) {}

  private get snapshotPath(): string {
    return snapshotPathIn(this.store.options.dir);
  }

  /**
   * Indexes the snapshot loaded at open (its layout checked against its bytes), a slice at a
   * time from the next turn on, as a snapshot copy runs: then the first checkpoint copies the
   * entries unchanged since as bytes of it, as every later checkpoint does, instead of
   * serializing every entry again (docs/decisions/013-incremental-checkpoints.md). A snapshot
   * that cannot be opened again is logged, and the first checkpoint serializes every entry.
   */
  async indexLoaded(
    size: number,
    layout: SnapshotLayout,
    changed: Set<string>,
    change: (key: string) => void,
  ): Promise<void> {
    const { logger } = this.store;
    const file = await openFile(this.snapshotPath, 'r').catch((err: unknown) => {
      logger.warn(
        { err },
        'store: the snapshot cannot be read again to index it; the next checkpoint serializes every entry',
      );
      return null;
    });
    if (!file) return;
    const large = this.store.options.snapshotCollection!;
    const index = new SnapshotIndex(
      file,
      size,
      layout,
      () => (this.store.state() as Record<string, unknown>)[large.key] as Record<string, unknown>,
    );
    const loading = { changed, change, stop: false, done: Promise.resolve() };
    this.loading = loading;
    const stopped = (): boolean => loading.stop || this.store.stopped();
    const pace = this.store.pacer();
    loading.done = indexLoadedSnapshot(index, file, pace, stopped, large.sliceEntries, logger, (ranges) => {
      // Every record applied until now is in `changed`: its entries' ranges are out of date.
      this.loading = null;
      if (ranges === null) return;
      for (const key of changed) ranges.delete(key);
      this.source = { file, ranges };
    });
  }

  /** Resolves once the snapshot loaded at open is indexed for the next checkpoint, or given up. */
  indexed(): Promise<void> {
    return this.loading?.done ?? Promise.resolve();
  }

  /** Whether the snapshot loaded at open is still being indexed: a checkpoint waits for it (`indexed`). */
  get indexing(): boolean {
    return this.loading !== null;
  }

  /**
   * Tells what `record` changes (the large collection's `touched`): the copy under way copies
   * those entries first; otherwise they lose their range in the last snapshot.
   */
  touched(record: R): void {
    if (this.copying) this.store.options.snapshotCollection!.touched(record, this.copying.touch);
    else if (this.source) this.store.options.snapshotCollection!.touched(record, this.source.ranges.delete);
    else if (this.loading) this.store.options.snapshotCollection!.touched(record, this.loading.change);
  }

  /**
   * Starts writing the snapshot of the state at entry `seq`, as of now: the large collection
   * copied a slice at a time (entries about to change copied first), or the whole state
   * serialized before this returns. Resolves once it is renamed into place.
   */
  write(seq: number, savedAt: string): Promise<SnapshotWritten> {
    const { options } = this.store;
    const large = options.snapshotCollection;
    if (large === undefined) {
      const state = { ...(this.store.state() as object) } as Record<string, unknown>;
      for (const key of options.derived ?? []) delete state[key];
      const snapshot: SnapshotFile<S> = { format: 1, seq, savedAt, state: state as S };
      const text = JSON.stringify(snapshot); // serialized now
      const size = text.length;
      return writeSnapshotText(this.snapshotPath, text, seq, (file) => this.store.markPending(seq, file)).then(
        (mark) => ({ mark, size, reused: 0 }),
      );
    }
    // The state as of now, copied a slice at a time (entries about to change copied first),
    // the entries unchanged since the last snapshot as bytes of that file.
    const previous = this.source;
    this.source = null;
    const copy = new SnapshotCopy(
      { format: 1, seq, savedAt },
      this.store.state() as object,
      large.key,
      previous?.ranges ?? null,
      options.derived,
      large.keys,
    );
    this.copying = copy;
    return (async () => {
      let file: AtomicFileWriter | null = null;
      let replaced: FileHandle | null = null;
      try {
        file = await AtomicFileWriter.open(this.snapshotPath);
        // Each slice's text goes to the file before the next slice: the copy's strings die
        // young instead of piling up (and being promoted) until the end.
        const pause = this.store.pacer();
        for (;;) {
          const failure = this.store.failure();
          if (failure) throw failure; // no snapshot from a store that failed meanwhile
          const started = performance.now();
          const done = copy.step(SNAPSHOT_SLICE_MS, large.sliceEntries);
          const took = performance.now() - started;
          await writePieces(file, copy.drain(), previous?.file ?? null);
          if (done) break;
          await pause(took);
        }
        // No snapshot from a store that failed meanwhile (its journal, say).
        const failure = this.store.failure();
        if (failure) throw failure;
        // The snapshot it replaces is freed gradually, once the copy's reader of it is closed.
        const writer = file;
        replaced = await file.commitKeepingReplaced(() => this.store.markPending(seq, writer));
        crashPoint('checkpoint:renamed');
        const reader = await openFile(this.snapshotPath, 'r');
        // No await from here on: every record applied until now went through the copy's touch.
        this.source = { file: reader, ranges: copy.unchangedRanges() };
        this.copying = null;
        return { mark: { seq, bytes: writer.bytes, crc32: writer.crc32 }, size: copy.bytes, reused: copy.reusedBytes };
      } catch (err) {
        await file?.abort();
        throw err;
      } finally {
        this.copying = null;
        await previous?.file.close().catch(() => undefined);
        this.freeings.add(replaced);
      }
    })();
  }

  /** Stops indexing the snapshot loaded at open, and waits for the slice under way. */
  async stopIndexing(): Promise<void> {
    if (this.loading) {
      this.loading.stop = true;
      await this.loading.done;
    }
  }

  /** Closes the last snapshot's reader. */
  async close(): Promise<void> {
    await this.source?.file.close().catch(() => undefined);
    this.source = null;
  }

  /** Frees what is left of the snapshots replaced, at once. */
  finish(): Promise<void> {
    return this.freeings.finish();
  }

  /** Resolves once the snapshots replaced so far are freed. */
  freed(): Promise<void> {
    return this.freeings.settled();
  }
}
