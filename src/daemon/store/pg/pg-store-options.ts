/** What a PostgreSQL store is opened with (pg-store.ts), and what it counts. */
import type pg from 'pg';
import type { ExecutionSummary } from '../../state/execution-summary.js';
import type { StoreLogger } from '../durable-store.js';
import type { Reducer } from '../record-store.js';
import type { LeaseOptions } from './lease.js';
import type { PartitionedCollection, SharedPart } from './partition-state.js';
import type { PgRowsAtRest } from './rows-at-rest-port.js';

export interface PgStoreOptions<S, R> extends Reducer<S, R> {
  /** `postgres://user:password@host:port/database` (libpq's URL form; `?host=/dir` for a socket). */
  readonly connectionString: string;
  /** The state of an empty store. */
  readonly initialState: () => S;
  /** Top-level keys of the state its owner rebuilds after open (see StoreOptions.derived). */
  readonly derived?: readonly string[];
  /** Those of `derived` a partition taken or given up while running leaves as they are (PartitionLayout.keptOnMoves). */
  readonly keptOnMoves?: readonly string[];
  /**
   * The state's collection spread over partitions (the executions: the file store's
   * snapshotCollection); absent, every record is partition 0's.
   */
  readonly snapshotCollection?: PartitionedCollection<R>;
  /**
   * With `snapshotCollection`: the summary of an execution (an entry of the collection) as of
   * `state`, written beside its row (pg-execution-rows.ts); absent, the summary columns stay null.
   */
  readonly summarize?: (execution: unknown, state: S) => ExecutionSummary;
  /**
   * With `summarize` and the collection's `adopt`, on a store holding every partition: load the
   * executions' rows as summaries, each document read once touched (the engine's cache reads
   * them back: `evictable`). Else every execution is loaded whole. Needs `rows`.
   */
  readonly lazy?: boolean;
  /**
   * The executions at rest on the database (at-rest/rows/, ROWS_AT_REST): their rows loaded as
   * summaries and read back by key. Given by who builds the store, as the JSON store is given
   * its segments; a lazy store opened without them fails with INTERNAL_ERROR.
   */
  readonly rows?: PgRowsAtRest;
  /** With `snapshotCollection`: what executions share, journaled in the shared partition (state/commons.ts). */
  readonly shared?: SharedPart<R>;
  /** How many partitions a database not used before is cut into (default DEFAULT_PARTITIONS). */
  readonly partitions?: number;
  /**
   * The partitions whose leases this store holds (default: every one). A store without
   * partition 0 reads it (the directory) as another daemon writes it, and must not write it.
   */
  readonly held?: (count: number) => readonly number[];
  /**
   * Hold what `join` reads is free for this daemon among the daemons sharing the database
   * (given by the cluster room: cluster/partition-plan.ts's joinShare), on the connection that
   * migrated it, instead of `held`; none free: DATABASE_IN_USE. Its partitions then move with
   * take and drop (decision 041).
   */
  readonly join?: (client: pg.ClientBase, owner: string, leaseMs: number) => Promise<readonly number[]>;
  /** Checkpoint after this many entries since the last snapshot (default 50,000; see Store). */
  readonly checkpointEvery?: number;
  /** This daemon's id in the lease (lease.ts). */
  readonly owner: string;
  readonly leaseMs?: number;
  /**
   * Whether standbys follow the journal now (cluster/members.ts), asked at each group commit: without
   * any, appends do not NOTIFY. Absent: they always do.
   */
  readonly followed?: () => boolean;
  /**
   * Wait as a standby while another daemon holds the lease (lease.ts); refused otherwise. A
   * standby keeps a copy of the state current while it waits (journal-follower.ts): `following`
   * is given the sequence number of the last entry it applied (null once that copy is gone);
   * `loaded`, the copy once loaded, before the wait: a throw refuses the open.
   */
  readonly standby?: LeaseOptions['standby'] & {
    readonly following?: (appliedSeq: (() => number) | null) => void;
    readonly loaded?: (state: S) => void;
  };
  readonly logger?: StoreLogger;
}

/** Counts kept for status and the benchmarks: what reached the database. */
export interface PgStoreCounters {
  /** INSERTs of journal entries (group commits) that committed. */
  appends: number;
  /** Journal entries written. */
  entries: number;
  /** Bytes of entries and snapshots sent. */
  bytes: number;
  /** Snapshots written. */
  checkpoints: number;
}

/** The partitions a store is told to hold, checked: some, each one of the database's, partition 0 first. */
export function heldPartitions(held: readonly number[], count: number): number[] {
  const sorted = [...new Set(held)].sort((a, b) => a - b);
  if (sorted.length === 0 || sorted.some((p) => !Number.isInteger(p) || p < 0 || p >= count))
    throw new RangeError(`a store holds some of the partitions 0 to ${count - 1}, not [${held.join(', ')}]`);
  return sorted;
}

/** GET /health's `store` on PostgreSQL: the lease this daemon holds (PgStore.health). */
export interface PgStoreHealth {
  readonly kind: 'postgres';
  readonly epoch: number;
  readonly leaseMs: number;
  readonly renewedMsAgo: number;
}
