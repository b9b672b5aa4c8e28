/**
 * What the JSON store asks of the room of executions at rest (src/daemon/at-rest/, above it in
 * the rooms' order): execution segments to keep its executions in instead of its snapshot,
 * opened with the store, written by its checkpoints, imaged and closed with it. Who builds the
 * store gives them (StoreOptions.segments; the daemon's: engine/executions-at-rest.ts's
 * wfxJsonStore), as the cluster's ports are given: the store imports nothing of that room.
 * Types only.
 */
import type { AtomicFileWriter } from '../disk/durable-files.js';
import type { ExecutionIndex, Location } from '../state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../state/execution-summary.js';
import type { EvictableEntries, StoreLogger } from './durable-store.js';
import type { SnapshotMark } from './manifest.js';

/** Opens a store directory's execution segments (at-rest/segments/, ExecutionSegments). */
export interface SegmentsAtRest {
  /**
   * Opens the segments `listed` (a snapshot's list): removes the files of any other, and puts
   * each live entry's document into `collection`. Throws EXECUTION_SEGMENT_DAMAGED.
   */
  open(storeDir: string, listed: readonly number[], collection: Record<string, unknown>): Promise<StoreSegments>;
  /** Opens the segments `listed` reading no document: each live entry's summary and place go into `unread`. */
  openLazy(storeDir: string, listed: readonly number[], o?: LazyOpen): Promise<StoreSegments>;
}

/** How the lazy open goes (SegmentsAtRest.openLazy). */
export interface LazyOpen {
  /** How many live executions the snapshot counted (the directory's reserve). */
  readonly live?: number;
  /** The fewest executions worth a directory image (IMAGE_MIN_EXECUTIONS by default). */
  readonly imageMin?: number;
  readonly logger?: StoreLogger;
}

/** What an image written while the daemon runs goes by: the store's image minimum and logger (StoreOptions). */
export interface RefreshOptions {
  readonly imageMin?: number | undefined;
  readonly logger?: StoreLogger | undefined;
}

/** What a close's image is made with (StoreOptions: the collection and its summary, the image minimum). */
export interface ImageOptions extends RefreshOptions {
  readonly snapshotCollection?: {
    readonly key: string;
    readonly summarize?: ((entry: unknown, state: object) => ExecutionSummary) | undefined;
  };
}

/** The execution segments of one store directory in effect, as the JSON store uses them. */
export interface StoreSegments {
  /** Past this many listed segments, checkpoints merge some (StoreOptions.maxListedSegments). */
  maxListed: number;
  /** The entries a lazy open left unread: their summaries and places (null: the open read them all). */
  readonly unread: ExecutionIndex | null;
  /** Where entry `id`'s last written frame is, else undefined. */
  locationOf(id: string): Location | undefined;
  /** Entry `id`'s document, read synchronously (the open's replay): then `adopt`. */
  readSync(id: string): unknown;
  /** Keeps the place of unread entry `id` before it leaves `unread` (it is read back). */
  adopt(id: string): void;
  /** Closes what `readSync` opened (the open is over). */
  doneReadingSync(): void;
  /** The store's executions that may leave memory (DurableStore.evictable), given what only the store knows of them. */
  evictable(store: Omit<EvictableEntries, 'read' | 'unread'>): EvictableEntries;
  /**
   * Starts a checkpoint into a new segment: the entries `dirty` names and the rest of the state
   * taken at the call, the snapshot of format 2 written once the segment is. The caller routes
   * each record's touches to `copy` until `written` settles.
   */
  checkpoint(o: SegmentCheckpointStart): { copy: SegmentTouch; written: Promise<SegmentCheckpointDone> };
  /** Removes the files of segments a durable snapshot no longer lists (and refreshes an outdated image). */
  retire(dropped: readonly number[], o: RefreshOptions): Promise<void>;
  /** Leaves an image of the index for the next open (a close's last checkpoint durable). */
  leaveImage(state: object, o: ImageOptions): Promise<void>;
  /** Resolves once no image is being written in the background (tests). */
  imageRefreshed(): Promise<void>;
  /** The files of the listed segments, for a copy of the store. */
  files(): string[];
  /** Closes the files kept open for reads. */
  close(): Promise<void>;
}

/** What a checkpoint's copy is told of each record before it applies: the entry it is about to change. */
export interface SegmentTouch {
  readonly touch: (key: string) => void;
}

/** What a checkpoint into segments starts from (StoreSegments.checkpoint). */
export interface SegmentCheckpointStart {
  readonly state: object;
  /** The store's large collection (StoreOptions.snapshotCollection). */
  readonly large: {
    readonly key: string;
    readonly sliceEntries?: number | undefined;
    readonly summarize?: ((entry: unknown, state: object) => ExecutionSummary) | undefined;
  };
  /** The state's keys a snapshot leaves out (StoreOptions.derived). */
  readonly derived: readonly string[] | undefined;
  /** The entries changed since the last checkpoint. */
  readonly dirty: ReadonlySet<string>;
  readonly head: { readonly seq: number; readonly savedAt: string };
  readonly snapshotPath: string;
  /** Paces the slices, given each one's duration. */
  readonly pace: (tookMs: number) => Promise<void>;
  /** The store's failure, if it failed meanwhile: no snapshot is written then. */
  readonly failure: () => Error | null;
  /** Called with the snapshot written and synced, before its rename. */
  readonly markPending: (file: AtomicFileWriter) => Promise<void>;
}

/** What a checkpoint into segments wrote: the snapshot's mark and size, and the segments to retire once it is named. */
export interface SegmentCheckpointDone {
  readonly mark: SnapshotMark;
  /** The snapshot's size plus the live bytes of the segments it lists: what a recovery reads. */
  readonly size: number;
  /** Of `size`, the bytes this checkpoint did not write (executions unchanged since the last). */
  readonly reused: number;
  readonly dropped: readonly number[];
}
