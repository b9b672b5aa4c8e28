/**
 * What the engine, the API and the triggers ask of a store: records in, the live state out,
 * durability promised per commit. The JSON store (store.ts) implements it.
 */
import type { WfxError } from '../../shared/errors.js';
import type { ExecutionIndex } from '../state/execution-index/execution-index.js';

/** The store's own log lines (the daemon passes its pino logger). */
export interface StoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The narrow interface the engine and the API use: records in, queries out. The JSON store
 * (store.ts) implements it; a PostgreSQL backend would too (one transaction per commit), without
 * the engine or the API changing. See docs/architecture.md.
 */
export interface DurableStore<S, R> {
  /** The live state, to query. Changed only through `commit`. */
  readonly state: S;
  /** Applies the records at once and resolves once they are durable, all or none. */
  commit(...records: R[]): Promise<void>;
  /**
   * Runs `fn` synchronously: it decides on a draft of the state and returns the records it
   * wrote and the draft's commit; the records become one journal entry (unless `divert` takes
   * them) and the commit changes the state. See `RecordStore.transact`.
   */
  transact<T>(fn: () => Decided<T, R>, divert?: Divert<R>): Transaction<T, R>;
  /** Resolves once everything committed so far is durable. */
  flush(): Promise<void>;
  /**
   * Writes a snapshot of the state and drops the journal it covers (absent in stores that keep
   * no journal). A rotation of the secrets key uses it, so that old ciphertexts leave the disk.
   */
  checkpoint?(): Promise<void>;
  /** Set once the store has failed: it refuses writes, its owner must stop. */
  readonly failed: WfxError | null;
  /**
   * A new execution's id, on a store cut into partitions (pg/partition-state.ts): a child's in
   * its parent's partition, a root's in one this store holds. Absent: any id will do.
   */
  readonly newExecutionId?: (now: Date, parentInstanceId: string | null) => string;
  /**
   * On a store cut into partitions: the partitions executions are spread over, and which this
   * store serves now (a bulk operation works through its executions partition by partition).
   * Absent: every execution is in partition 0, served here.
   */
  readonly partitioning?: ExecutionPartitions;
  /**
   * A store that can read an execution back from its own files (the JSON store's segments):
   * what lets the engine keep only a bounded cache of them in memory. Absent: all stay resident.
   */
  readonly evictable?: EvictableEntries | null;
}

/**
 * The entries of a store's large collection (its executions) that may leave memory and be read
 * back from the store's files (at-rest/execution-cache.ts).
 */
export interface EvictableEntries {
  /**
   * Whether entry `key` as the state holds it is the one a durable checkpoint wrote, unchanged
   * since: it may leave memory, `read` gives it back. False while a checkpoint runs.
   */
  clean(key: string): boolean;
  /** Entry `key` as the last checkpoint wrote it (its document parsed). Throws what the read throws. */
  read(key: string): Promise<unknown>;
  /**
   * The entries the open left unread (StoreOptions.lazy), summaries and locations: the owner's
   * to keep (the engine's cache uses it as its own), removing each it reads back once `read`
   * resolved. Null: the open read every entry.
   */
  readonly unread: ExecutionIndex | null;
  /** Calls `fn` after each checkpoint, once durable (its entries clean). */
  onCheckpoint(fn: () => void): void;
  /**
   * On a store whose partitions move: the epoch of its hold on entry `key`'s partition, a new one
   * each time it takes the partition; null while it does not serve it. A read back under an
   * epoch that is not the current one when it lands must not enter the state: the entry may
   * have changed elsewhere meanwhile. Absent: every entry is held for good.
   */
  epoch?(key: string): number | null;
  /**
   * Sets what is called with each key a record is about to change, before it applies: a record
   * reaching an entry not in memory must fail loudly (throw), never apply to nothing.
   */
  guard(fn: (key: string) => void): void;
}

/** The partitions of executions, as a store cut into them has them (DurableStore.partitioning). */
export interface ExecutionPartitions {
  /** Every partition that holds executions, in order. */
  readonly all: readonly number[];
  /** Execution `id`'s partition. */
  of(id: string): number;
  /** Whether this store serves `partition` now (holds it, and it is not moving). */
  serves(partition: number): boolean;
}

/**
 * Takes a transaction's records out of the journal when their whole effect on the state is
 * undone by `settle`, records of the caller's: recovery then needs neither, so they need not be
 * journaled, and `durable` makes them durable elsewhere instead. The engine's use: an execution
 * that starts and finishes in one step is written to history alone, and `settle` removes it
 * from the live state (see ExecutionArchive.oneStep). An execution such a transaction changes
 * that is gone once it settles was made by it: no checkpoint holds it, and the stores forget
 * that it changed. Given the records as they would have been journaled (and their JSON); returns
 * null to journal them as usual.
 */
export type Divert<R> = (
  records: readonly R[],
  serialized: readonly string[],
) => { readonly durable: Promise<void>; readonly settle: readonly R[] } | null;

/** The outcome of `transact`. */
/** What a transaction's function decided (DurableStore.transact). */
export interface Decided<T, R> {
  readonly result: T;
  /** The records it wrote, in order, applied to its draft only. */
  readonly records: readonly R[];
  /**
   * Each record's JSON made as it was written, before it was applied to the draft (a later
   * record may change an object the reducer kept of it); null where the record is one the
   * reducer's `coalesce` may merge (serialized once its run ends). Absent: none was kept
   * (records nothing changes once written), so each is serialized at the transaction.
   */
  readonly json?: readonly (string | null)[];
  /** Hands its draft's changes to the live state (the records' effect); a throw fails the store. */
  commit(): void;
}

export interface Transaction<T, R> {
  readonly result: T;
  /** What `fn` emitted, in order, as journaled (a coalesced run of records as its one record). */
  readonly records: readonly R[];
  /** Each record as it was journaled (JSON), in the same order. */
  readonly serialized: readonly string[];
  /** Resolves once the records are durable (at once when there were none). */
  readonly durable: Promise<void>;
  /**
   * For a transaction `divert` took: applies its settle records (once; not journaled). Call it
   * once `durable` has resolved and nothing needs the records' effect any more. Null otherwise.
   */
  readonly settle: (() => void) | null;
}
