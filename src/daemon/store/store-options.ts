/**
 * What the JSON store (store.ts) is opened with, and what it gives: its options (the reducer,
 * checkpoints, snapshots a slice at a time), the snapshot file's format, and a hold on its files.
 */
import type { SegmentsAtRest } from './at-rest-port.js';
import type { SnapshotMark } from './manifest.js';
import type { StoreLogger } from './durable-store.js';
import type { ExecutionSummary } from '../state/execution-summary.js';

/** What the snapshot file holds: the live state as of journal entry `seq`. */
export interface SnapshotFile<S> {
  /** 1: the large collection inside `state`; 2: in the execution segments `executions` lists. */
  readonly format: 1 | 2;
  readonly seq: number;
  readonly savedAt: string;
  readonly state: S;
  /** Where the large collection's entries lie in the file (snapshotCollection only; SnapshotCopy). */
  readonly layout?: unknown;
  /**
   * Format 2: the execution segments in effect, oldest first (at-rest/segments/execution-segments.ts), and about
   * how many live executions they hold (absent in snapshots written before it): the lazy open
   * sizes its directory by it.
   */
  readonly executions?: { readonly segments: readonly number[]; readonly live?: number };
}

/** How the JSON store is opened (Store.open): its directory, its state and reducer, its checkpoints. */
export interface StoreOptions<S, R> {
  /** Directory for `snapshot.json` and `journal/`; created 0700. */
  readonly dir: string;
  /**
   * `snapshot.json`'s bytes (null: no such file), read already by whoever holds the directory's
   * lock (`readFileBytes`): a daemon starts the read before its code loads, which the read
   * then overlaps (process/prepare.ts). Read here when not given.
   */
  readonly snapshotBytes?: Promise<Buffer | null>;
  /** The state of an empty store. */
  readonly initialState: () => S;
  /**
   * Top-level keys of the state derived from the rest, which the store's owner rebuilds after
   * `open` (an index, say): snapshots leave them out, and after `open` they hold what
   * `initialState` gives (before the journal is replayed), whatever an older snapshot held.
   */
  readonly derived?: readonly string[];
  /**
   * Applies one record to the state, in place. Must be deterministic and depend on nothing
   * but its arguments: recovery replays the same records through it and must reach the same
   * state. It should not throw for a record its writer validated; if it does, the store
   * fails (see `commit`). It may keep the record's objects in the state (the record is
   * serialized before it is applied) but must never change the record itself.
   */
  readonly apply: (state: S, record: R) => void;
  /**
   * Checkpoint after this many journal entries since the last snapshot (default 50,000), once
   * the journal since then is also at least as big as that snapshot (see `append`).
   */
  readonly checkpointEvery?: number;
  /**
   * With `snapshotCollection.summarize` and a snapshot of format 2: the open reads no entry of
   * the large collection but those the journal's replay changes; the others are left unread on
   * disk, their summaries in `Store.evictable.unread`, for the store's owner to read back when
   * needed (EvictableEntries.read).
   */
  readonly lazy?: boolean;
  /** With `lazy`: the fewest executions an open writes a directory image for (decision 076; tests lower it). */
  readonly imageMin?: number;
  /** Past this many segments listed, checkpoints merge some (MAX_LISTED_SEGMENTS; tests lower it). */
  readonly maxListedSegments?: number;
  readonly logger?: StoreLogger;
  /**
   * The execution segments the large collection is kept in (at-rest/segments/), given by who
   * builds the store: needed with `snapshotCollection.summarize`, or to open a snapshot of
   * format 2.
   */
  readonly segments?: SegmentsAtRest;
  /**
   * Journals a run of small records emitted one after the other in a transaction as one
   * record. `candidate` records are applied at once, as every record is, but serialized only
   * when the run ends, so `apply` must not keep their objects. `merge(last, next)` gives the
   * record to journal instead of both (applying it must equal applying both, in order), or
   * null to end the run; it may extend a record it returned before, which is the store's own
   * until serialized.
   */
  readonly coalesce?: { readonly candidate: (record: R) => boolean; readonly merge: (last: R, next: R) => R | null };
  /**
   * Writes snapshots a slice at a time while commits go on (SnapshotCopy), instead of in one
   * JSON.stringify of the whole state that stalls every request for as long as it runs. `key`
   * names the state's large collection (an object of entries). `touched(record, visit)` must
   * visit the key of every entry of it that applying `record` changes or removes; missing one
   * would put a later version of that entry in the snapshot. `sliceEntries` caps the entries
   * copied per slice (tests use it to interleave commits; otherwise a slice runs for
   * SNAPSHOT_SLICE_MS).
   * `keys(collection)`, when given, lists the collection's keys as Object.keys would (the same
   * keys, in the same order) from a list its owner keeps: a copy starts with them, and
   * enumerating a large dictionary's keys held the event loop
   * (docs/decisions/012-resume-young-copy-and-tombstones.md).
   */
  readonly snapshotCollection?: {
    readonly key: string;
    readonly touched: (record: R, visit: (key: string) => void) => void;
    readonly keys?: (collection: Record<string, unknown>, state: object) => string[];
    readonly sliceEntries?: number;
    /**
     * Given: checkpoints write the collection's changed entries into execution segments
     * (at-rest/segments/), each with this summary of it as of the checkpoint, and the
     * snapshot (format 2) lists the segments instead of holding the entries. Must not throw.
     */
    readonly summarize?: (entry: unknown, state: object) => ExecutionSummary;
    /**
     * Puts an entry read at open into the collection (with `lazy`: one the journal's replay
     * changes), as the state's owner keeps it (the daemon's: ExecutionTable.put).
     */
    readonly adopt?: (state: object, entry: unknown) => void;
  };
}

/** What a store's directory holds as of one instant, kept as it is until `release` (Store.hold). */
export interface StoreHold {
  /** The snapshot in place (null: the store has none yet): its seq, size and CRC-32. */
  readonly snapshot: SnapshotMark | null;
  /** Where that snapshot is. */
  readonly snapshotPath: string;
  /**
   * The journal segments that may hold entries after the snapshot, oldest first: the first
   * sequence number, the path, and how many of its bytes are durable (null: all, a closed one).
   */
  readonly segments: ReadonlyArray<{ readonly first: number; readonly path: string; readonly bytes: number | null }>;
  /** The execution segments that snapshot lists (both files of each), oldest first. */
  readonly executions: readonly string[];
  /** Lets checkpoints run again; call it once, when the copy of the files above is done. */
  readonly release: () => void;
}
