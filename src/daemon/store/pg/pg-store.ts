/**
 * The durable store on PostgreSQL: the same state machine as the JSON store (store.ts), the
 * live state in memory and every commit a journal entry, but the journal is rows of
 * `wfx_journal` and the snapshot a row of `wfx_snapshots`. Entries are group-committed: one
 * INSERT of every entry waiting, in flight one at a time, the commit of that statement being the
 * acknowledgement as the fsync is in the JSON store. Every write names the epoch of this daemon's
 * lease (lease.ts) and lands only while the partition's row still carries it: a daemon that lost
 * its lease cannot write, whatever it still holds in memory (docs/decisions/035 and 037).
 *
 * The state is cut into partitions (partition-state.ts): executions spread by their id, the
 * rest in partition 0. Each commit's records go to the journal of the partition they change,
 * all of a group commit in one fenced statement. For now one daemon holds every partition's
 * lease and serves the database; another one started on it waits as a standby, keeping a copy
 * of the state current, and takes over when the lease lapses.
 */
import pg from 'pg';
import { WfxError } from '../../../shared/errors.js';
import type { StoreLogger } from '../durable-store.js';
import { RecordStore, silentLogger, type Reducer } from '../record-store.js';
import { partitionedIds } from '../../engine/ids.js';
import { DEFAULT_LEASE_MS, describePartitions, PartitionLease, type LeaseOptions } from './lease.js';
import { GroupCommit } from './group-commit.js';
import { migrate } from './migrations.js';
import { PgBlobs } from './pg-blobs.js';
import { PgHistory } from './pg-history.js';
import { JournalFollower } from './journal-follower.js';
import { APPEND, APPEND_NOTIFY, DELETE_COVERED, FENCE, partitionCount, PUT_SNAPSHOT } from './fenced-sql.js';
import {
  DEFAULT_PARTITIONS,
  cutCommit,
  partitionOfExecution,
  serializePartitions,
  type PartitionedCollection,
  type PartitionLayout,
} from './partition-state.js';

export interface PgStoreOptions<S, R> extends Reducer<S, R> {
  /** `postgres://user:password@host:port/database` (libpq's URL form; `?host=/dir` for a socket). */
  readonly connectionString: string;
  /** The state of an empty store. */
  readonly initialState: () => S;
  /** Top-level keys of the state its owner rebuilds after open (see StoreOptions.derived). */
  readonly derived?: readonly string[];
  /**
   * The state's collection spread over partitions (the executions: the file store's
   * snapshotCollection); absent, every record is partition 0's.
   */
  readonly snapshotCollection?: PartitionedCollection<R>;
  /** How many partitions a database not used before is cut into (default DEFAULT_PARTITIONS). */
  readonly partitions?: number;
  /** Checkpoint after this many entries since the last snapshot (default 50,000; see Store). */
  readonly checkpointEvery?: number;
  /** This daemon's id in the lease (lease.ts). */
  readonly owner: string;
  readonly leaseMs?: number;
  /**
   * Whether standbys follow the journal now (cluster.ts), asked at each group commit: without
   * any, appends do not NOTIFY. Absent: they always do.
   */
  readonly followed?: () => boolean;
  /**
   * Wait as a standby while another daemon holds the lease (lease.ts); refused otherwise. A
   * standby keeps a copy of the state current while it waits (journal-follower.ts): `following`
   * is given the sequence number of the last entry it applied (null once that copy is gone).
   */
  readonly standby?: LeaseOptions['standby'] & { readonly following?: (appliedSeq: (() => number) | null) => void };
  readonly logger?: StoreLogger;
}

/** A group commit's cap, so one INSERT stays a reasonable size; the rest goes in the next. */
const BATCH_ENTRIES = 2_000;
const BATCH_BYTES = 8 * 1024 * 1024;

/** One journal entry: the records of one commit that change one partition. */
interface Entry {
  readonly partition: number;
  readonly seq: number;
  readonly entry: string;
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

export class PgStore<S, R> extends RecordStore<S, R> {
  /** Per partition: the last journal entry and the snapshot's. */
  private readonly lastSeqs: number[];
  private readonly snapshotSeqs: number[];
  /** Per partition: the size of its snapshot (the sum is the next checkpoint's threshold). */
  private readonly snapshotSizes: number[];
  private bytesSinceSnapshot = 0;
  private entriesSinceSnapshot = 0;
  /** Each commit's entries, one per partition it changes: written in one statement, all or none. */
  private readonly journal = new GroupCommit<readonly Entry[]>(
    (commits) => this.writeEntries(commits.flat()),
    { items: BATCH_ENTRIES, bytes: BATCH_BYTES },
    (entries) => entries.reduce((n, e) => n + e.entry.length, 0),
  );
  private checkpointing: Promise<void> | null = null;
  readonly counters: PgStoreCounters = { appends: 0, entries: 0, bytes: 0, checkpoints: 0 };

  private constructor(
    private readonly pool: pg.Pool,
    private readonly lease: PartitionLease,
    private readonly options: PgStoreOptions<S, R>,
    /** How the state is cut into partitions. */
    readonly layout: PartitionLayout<S, R>,
    loaded: JournalFollower<S, R>,
  ) {
    super(loaded.state, options, options.logger ?? silentLogger);
    // By partition number (the lease holds 0..count-1 for now).
    this.lastSeqs = Array.from({ length: layout.count }, (_, p) => loaded.lastSeqs.get(p) ?? 0);
    this.snapshotSeqs = Array.from({ length: layout.count }, (_, p) => loaded.snapshotSeqs.get(p) ?? 0);
    const executionPartitions = lease.partitions.filter((p) => p !== 0);
    this.newExecutionId =
      layout.count > 1 && layout.collection ? partitionedIds(layout.count, () => executionPartitions) : undefined;
    this.snapshotSizes = Array.from({ length: layout.count }, (_, p) => loaded.snapshotSizes.get(p) ?? 0);
  }

  private get snapshotBytes(): number {
    return this.snapshotSizes.reduce((a, b) => a + b, 0);
  }

  /**
   * Connects, migrates the schema, takes the lease, then loads the snapshot and replays the
   * journal after it (in that order: what it loads cannot move on under it). A standby loads
   * first and follows the journal while it waits, then replays only what it had not applied when
   * the lease was taken. Throws WfxError
   * DATABASE_UNREACHABLE, DATABASE_TOO_NEW, DATABASE_IN_USE, SNAPSHOT_CORRUPT or JOURNAL_CORRUPT.
   */
  static async open<S, R>(options: PgStoreOptions<S, R>): Promise<PgStore<S, R>> {
    const logger = options.logger ?? silentLogger;
    const pool = new pg.Pool({
      connectionString: options.connectionString,
      max: 4,
      application_name: `wfx ${options.owner}`,
      connectionTimeoutMillis: 10_000,
      // A query the database never answers (a network that drops packets) fails in time
      // instead of holding a commit, or a stop, for as long as TCP takes to give up.
      query_timeout: 30_000,
      keepAlive: true,
    });
    // An idle connection that breaks is reported here; the next query fails and says so.
    pool.on('error', (err) => logger.warn({ err }, 'store: a database connection broke'));
    let lease: PartitionLease | null = null;
    let store: PgStore<S, R> | null = null;
    let follower: JournalFollower<S, R> | null = null;
    try {
      const client = await pool.connect().catch((err: unknown) => {
        throw new WfxError('DATABASE_UNREACHABLE', `cannot connect to the database: ${describe(err)}`, { cause: err });
      });
      let count: number;
      try {
        const applied = await migrate(client);
        if (applied.length > 0) logger.info({ applied }, 'store: migrated the database schema');
        count = await partitionCount(client, options.partitions ?? DEFAULT_PARTITIONS);
      } finally {
        client.release();
      }
      const layout: PartitionLayout<S, R> = {
        count,
        collection: options.snapshotCollection,
        initialState: options.initialState,
        derived: options.derived,
      };
      if (options.partitions !== undefined && options.partitions !== count)
        logger.warn({ partitions: count, asked: options.partitions }, 'store: a database keeps its partition count');
      const partitions = Array.from({ length: count }, (_, p) => p);
      const follow = { ...layout, partitions, apply: options.apply };
      // A standby loads the state before it may serve, and keeps it current while it waits; the
      // lease taken, it reads what was appended since (only that: the old owner is fenced).
      if (options.standby) {
        const copy = (follower = await JournalFollower.load(pool, follow));
        copy.follow(options.connectionString, (options.leaseMs ?? DEFAULT_LEASE_MS) / 3, logger);
        options.standby.following?.(() => copy.lastSeq);
      }
      const standby = options.standby && { ...options.standby, pause: follower?.pause.bind(follower) };
      // A stop during the load must not take the lease (take() tries once before any pause).
      options.standby?.signal?.throwIfAborted();
      lease = await PartitionLease.take(
        pool,
        { partitions, owner: options.owner, ttlMs: options.leaseMs, standby },
        (err) => store?.leaseLost(err),
      );
      await follower?.stop();
      // A copy that broke (its journal unreadable, a record refused) is not used: loaded afresh.
      const warm = follower !== null && !follower.broken;
      const loaded = warm ? follower! : await JournalFollower.load(pool, follow);
      const replayed = warm ? await loaded.catchUp() : loaded.lastSeq - loaded.snapshotSeq;
      follower = null;
      store = new PgStore(pool, lease, options, layout, loaded);
      logger.info(
        {
          partitions: count,
          snapshotSeq: loaded.snapshotSeq,
          replayed,
          epoch: lease.epoch,
          warm,
        },
        warm ? 'store: took over from the copy kept while standing by' : 'store: recovered from the database',
      );
      return store;
    } catch (err) {
      options.standby?.following?.(null);
      await follower?.stop();
      await lease?.release().catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw err;
    }
  }

  private historyStore: PgHistory | null = null;

  /**
   * History in this database (pg-history.ts), written under this store's lease: a fenced write
   * fails the store as a fenced journal write does; another failed write fails only the put
   * (the archive tries it again).
   */
  history(): PgHistory {
    this.historyStore ??= new PgHistory(
      this.pool,
      {
        owner: this.options.owner,
        partitionOf: (id) => partitionOfExecution(this.layout, id),
        epochOf: (partition) => this.lease.epochOf(partition),
      },
      (err, fenced) => (fenced ? this.fail('a history write was fenced', err, 'STORE_LEASE_LOST') : err),
    );
    return this.historyStore;
  }

  /** The file store's content in this database (pg-blobs.ts). */
  blobs(): PgBlobs {
    return new PgBlobs(this.pool);
  }

  /**
   * A new execution's id (DurableStore.newExecutionId): a child's in its parent's partition, a
   * root's in one of the execution partitions this store holds (all of them, for now).
   */
  readonly newExecutionId: ((now: Date, parentInstanceId: string | null) => string) | undefined;

  /** Journal entries written so far, summed over the partitions (each one's last seq). */
  get lastSeq(): number {
    return this.lastSeqs.reduce((a, b) => a + b, 0);
  }

  /** The last journal entry of `partition`. */
  lastSeqOf(partition: number): number {
    return this.lastSeqs[partition] ?? 0;
  }

  /** GET /health's `store`: the lease this daemon holds. */
  health(): {
    readonly kind: 'postgres';
    readonly epoch: number;
    readonly leaseMs: number;
    readonly renewedMsAgo: number;
  } {
    return { kind: 'postgres', epoch: this.lease.epoch, ...this.lease.health() };
  }

  /** The epoch of this daemon's lease: what its writes carry. */
  get epoch(): number {
    return this.lease.epoch;
  }

  private leaseLost(err: WfxError): void {
    this.fail('the lease was lost', err, 'STORE_LEASE_LOST');
  }

  protected append(serialized: readonly string[], records: readonly R[]): Promise<void> {
    let entries: Entry[];
    try {
      entries = this.entriesOf(serialized, records);
    } catch (err) {
      return Promise.reject(this.fail('a commit could not be cut into partitions', err));
    }
    let bytes = 0;
    for (const e of entries) bytes += e.entry.length;
    this.bytesSinceSnapshot += bytes;
    this.entriesSinceSnapshot += entries.length;
    const durable = this.journal.add(entries);
    if (
      !this.checkpointing &&
      this.entriesSinceSnapshot >= (this.options.checkpointEvery ?? 50_000) &&
      this.bytesSinceSnapshot >= this.snapshotBytes
    ) {
      void this.checkpoint().catch(() => undefined);
    }
    return durable;
  }

  /** A commit's records as one entry per partition they change, each given its partition's next seq. */
  private entriesOf(serialized: readonly string[], records: readonly R[]): Entry[] {
    return cutCommit(this.layout, serialized, records).map(({ partition, entry }) => ({
      partition,
      seq: ++this.lastSeqs[partition]!,
      entry,
    }));
  }

  /** One group commit of journal entries, fenced (APPEND); a failure fails the store. */
  private async writeEntries(entries: readonly Entry[]): Promise<void> {
    if (this.failure) throw this.failure;
    const partitions = [...new Set(entries.map((e) => e.partition))];
    let result: pg.QueryResult;
    try {
      result = await this.pool.query(this.options.followed?.() === false ? APPEND : APPEND_NOTIFY, [
        this.options.owner,
        partitions,
        partitions.map((p) => this.lease.epochOf(p)),
        entries.map((e) => e.partition),
        entries.map((e) => e.seq),
        entries.map((e) => this.lease.epochOf(e.partition)),
        entries.map((e) => e.entry),
      ]);
    } catch (err) {
      throw this.fail('a journal write to the database failed', err);
    }
    if (result.rowCount !== entries.length) {
      throw this.fail(
        'a journal write was fenced',
        new Error(`${describePartitions(partitions)} no longer carry this daemon's epochs`),
        'STORE_LEASE_LOST',
      );
    }
    this.counters.appends++;
    this.counters.entries += entries.length;
    for (const e of entries) this.counters.bytes += e.entry.length;
  }

  /** Resolves once everything committed so far is durable (diverted transactions too). */
  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    await this.journal.flush();
    await this.diverted.idle();
    if (this.failure) throw this.failure;
  }

  /**
   * Writes the state as of now as the partition's snapshot and deletes the journal it covers,
   * in one transaction checked against the lease. The state is serialized at once (its records
   * keep being applied after), then written once every entry it holds is durable.
   */
  checkpoint(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.checkpointing ??= this.checkpointNow().finally(() => (this.checkpointing = null));
    return this.checkpointing;
  }

  private async checkpointNow(): Promise<void> {
    const seqs = [...this.lastSeqs];
    const moved = this.lease.partitions.filter((p) => seqs[p] !== this.snapshotSeqs[p]);
    if (moved.length === 0) return;
    const states = serializePartitions(this.state, this.layout, moved);
    this.bytesSinceSnapshot = 0;
    this.entriesSinceSnapshot = 0;
    await this.flush();
    const epochs = moved.map((p) => this.lease.epochOf(p));
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const fence = await client.query(FENCE, [this.options.owner, moved, epochs]);
      if (fence.rowCount !== moved.length) {
        throw this.fail(
          'a checkpoint was fenced',
          new Error(`${describePartitions(moved)} no longer carry this daemon's epochs`),
          'STORE_LEASE_LOST',
        );
      }
      for (const [i, p] of moved.entries()) await client.query(PUT_SNAPSHOT, [p, seqs[p], epochs[i], states.get(p)!]);
      await client.query(DELETE_COVERED, [moved, moved.map((p) => seqs[p])]);
      await client.query('COMMIT');
      let bytes = 0;
      for (const p of moved) {
        this.snapshotSeqs[p] = seqs[p]!;
        this.snapshotSizes[p] = states.get(p)!.length;
        bytes += states.get(p)!.length;
      }
      this.counters.checkpoints++;
      this.counters.bytes += bytes;
      this.logger.info({ partitions: moved.length, bytes }, 'store: checkpoint written to the database');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      // A failed checkpoint loses nothing (the journal is still there); a fenced one fails the store.
      if (!this.failure) this.logger.warn({ err }, 'store: a checkpoint failed; the journal is kept');
      throw err;
    } finally {
      client.release();
    }
  }

  /** Flushes, checkpoints unless told not to (or failed), gives up the lease and disconnects. */
  async close(options: { checkpoint?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    await this.diverted.idle();
    await this.checkpointing?.catch(() => undefined);
    await this.flush().catch(() => undefined);
    if (!this.failure && options.checkpoint !== false) await this.checkpoint().catch(() => undefined);
    this.closed = true;
    await this.journal.idle();
    await this.historyStore?.close();
    await this.lease.release().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
