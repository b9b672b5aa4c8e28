/**
 * What the PostgreSQL store asks of the room of executions at rest (src/daemon/at-rest/, above
 * it in the rooms' order): its cold rows, the execution rows a start, a standby or a takeover
 * loads as summaries and reads back by key when named (decision 077). Who builds the store gives
 * them (PgStoreOptions.rows; the daemon's: process/open-store.ts), as the JSON store is given
 * its segments (at-rest-port.ts): the store imports nothing of that room. Types only.
 */
import type pg from 'pg';
import type { ExecutionIndex } from '../../state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../../state/execution-summary.js';
import type { EvictableEntries } from '../durable-store.js';
import type { PartitionLayout } from './partition-state.js';
import type { DirtyExecutions } from './pg-execution-rows.js';

/** A PostgreSQL store's executions at rest (at-rest/rows/, ROWS_AT_REST). */
export interface PgRowsAtRest {
  /** What a lazy follower (journal-follower.ts) keeps of the executions it has not read. */
  lazyRows<S, R>(options: LazyRowsOptions<S, R>, state: S): LazyRows<R>;
  /** The store's port for its engine's cache (DurableStore.evictable): the rows read back by key. */
  evictable<S, R>(o: PgEvictableOptions<S, R>): EvictableEntries;
  /**
   * Puts the summaries of `from` (the executions of partitions just taken, left unread) into
   * `into` (the store's, its engine cache's), in the turn the resident ones join the state.
   * Returns their ids.
   */
  mergeUnread(from: ExecutionIndex | null, into: ExecutionIndex | null | undefined): string[];
  /** Takes every execution of partitions `partitions` out of `directory` (their rows are loaded again, or another daemon's now). */
  forgetPartitions<S, R>(
    directory: ExecutionIndex | null | undefined,
    layout: PartitionLayout<S, R>,
    partitions: readonly number[],
  ): void;
}

/** How a follower's executions load lazily: the state's layout, and how an execution is summarized. */
export type LazyRowsOptions<S, R> = PartitionLayout<S, R> & {
  readonly summarize?: (execution: unknown, state: S) => ExecutionSummary;
};

/** What a lazy follower keeps of the executions it has not read, and of those it read back the last entry that changed each. */
export interface LazyRows<R> {
  /** The executions not in the state, their summaries: what a store built on it hands its engine's cache. */
  readonly unread: ExecutionIndex;
  /** Whether `settle` can let executions go (it can summarize them and take them out). */
  readonly settles: boolean;
  /**
   * Loads partition `partition`'s rows as summaries, `into` the snapshot's own entries those it
   * loads whole; `again`: the partition was loaded before, and its executions leave the state
   * with it. Returns how many rows, their bytes, and the ids loaded whole; a document that does
   * not parse throws a SyntaxError naming its execution.
   */
  load(
    client: pg.ClientBase,
    partition: number,
    into: Record<string, unknown>,
    again: boolean,
  ): Promise<{ rows: number; bytes: number; whole: string[] }>;
  /** Reads back, on the catch-up's transaction, the executions not in the state that `entries` change. */
  readBack(
    client: pg.ClientBase,
    partition: number,
    entries: ReadonlyArray<{ readonly records: readonly R[] }>,
  ): Promise<void>;
  /** `record`, of entry `seq`, was applied. */
  touched(record: R, seq: number): void;
  /**
   * Partition `partition`'s rows are now as of its entry `seq`, which the copy has applied: an
   * execution no later entry changed leaves the state for its summary. Returns the ids whose
   * rows are current now (gone ones included).
   */
  settle(partition: number, seq: number): string[];
}

/** What of its store the engine cache's port reads (ROWS_AT_REST.evictable). */
export interface PgEvictableOptions<S, R> {
  readonly pool: pg.Pool;
  readonly layout: PartitionLayout<S, R>;
  readonly unread: ExecutionIndex;
  /** The executions changed since their rows were written. */
  readonly dirty: DirtyExecutions;
  /**
   * The store's checkpoints (PgCheckpoints): while one runs, the executions it writes are marked changed no
   * longer and not yet written; `durable` is told after each.
   */
  readonly checkpoints: { readonly running: Promise<void> | null; readonly durable: Array<() => void> };
  /** Whether the store holds the partition, and it is not moving: a row of another's may change under it. */
  readonly serves: (partition: number) => boolean;
  /** The epoch of the store's lease on a partition it serves: a new one each time it takes the partition. */
  readonly epochOf: (partition: number) => number;
  readonly guard: (fn: (key: string) => void) => void;
}
