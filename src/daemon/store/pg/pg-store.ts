/**
 * The durable store on PostgreSQL: the same state machine as the JSON store (store.ts), the
 * live state in memory and every commit a journal entry, but the journal is rows of
 * `wfx_journal` and the snapshot a row of `wfx_snapshots`. Entries are group-committed: one
 * INSERT of every entry waiting, in flight one at a time, the commit of that statement being the
 * acknowledgement as the fsync is in the JSON store. Every write names the epoch of this daemon's
 * lease (lease.ts) and lands only while the partition's row still carries it: a daemon that lost
 * its lease cannot write, whatever it still holds in memory (docs/decisions/035 and 037).
 *
 * This first stage has one partition, the whole state: one daemon serves a database at a time,
 * and another one started on it waits as a standby, keeping a copy of the state current, and
 * takes over when the lease lapses.
 */
import pg from 'pg';
import { WfxError } from '../../../shared/errors.js';
import type { StoreLogger } from '../durable-store.js';
import { RecordStore, silentLogger, type Reducer } from '../record-store.js';
import { DEFAULT_LEASE_MS, PartitionLease, type LeaseOptions } from './lease.js';
import { GroupCommit } from './group-commit.js';
import { migrate } from './migrations.js';
import { PgBlobs } from './pg-blobs.js';
import { PgHistory } from './pg-history.js';
import { JOURNAL_CHANNEL, JournalFollower } from './journal-follower.js';

export interface PgStoreOptions<S, R> extends Reducer<S, R> {
  /** `postgres://user:password@host:port/database` (libpq's URL form; `?host=/dir` for a socket). */
  readonly connectionString: string;
  /** The state of an empty store. */
  readonly initialState: () => S;
  /** Top-level keys of the state its owner rebuilds after open (see StoreOptions.derived). */
  readonly derived?: readonly string[];
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

/** The one partition of this stage: the whole state. */
const PARTITION = 0;
/** A group commit's cap, so one INSERT stays a reasonable size; the rest goes in the next. */
const BATCH_ENTRIES = 2_000;
const BATCH_BYTES = 8 * 1024 * 1024;

// The fence: the INSERT takes the lease row FOR SHARE and inserts only while it carries this
// daemon's epoch. A takeover's UPDATE of that row waits for this statement's commit, or this
// statement sees the new epoch and inserts nothing; no write of a stale owner commits. While
// standbys follow the journal (journal-follower.ts) the same statement NOTIFYs them, at its
// commit; without any it does not, since a NOTIFY costs each commit a write to the queue.
const appendStatement = (notify: boolean): string => `
  WITH lease AS (
    SELECT 1 FROM wfx_partitions WHERE partition = $1 AND owner = $2 AND epoch = $3 FOR SHARE
  )${notify ? `, notified AS (SELECT pg_notify('${JOURNAL_CHANNEL}', $1::text) FROM lease)` : ''}
  INSERT INTO wfx_journal (partition, seq, epoch, entry)
  SELECT $1, e.seq, $3, e.entry FROM lease${notify ? ', notified' : ''}, unnest($4::bigint[], $5::text[]) AS e(seq, entry)`;
const APPEND = appendStatement(false);
const APPEND_NOTIFY = appendStatement(true);

const FENCE = 'SELECT 1 FROM wfx_partitions WHERE partition = $1 AND owner = $2 AND epoch = $3 FOR SHARE';

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
  private lastSeqValue: number;
  private snapshotSeq: number;
  private snapshotBytes: number;
  private bytesSinceSnapshot = 0;
  private readonly journal = new GroupCommit<{ readonly seq: number; readonly entry: string }>(
    (entries) => this.writeEntries(entries),
    { items: BATCH_ENTRIES, bytes: BATCH_BYTES },
    (e) => e.entry.length,
  );
  private checkpointing: Promise<void> | null = null;
  readonly counters: PgStoreCounters = { appends: 0, entries: 0, bytes: 0, checkpoints: 0 };

  private constructor(
    private readonly pool: pg.Pool,
    private readonly lease: PartitionLease,
    private readonly options: PgStoreOptions<S, R>,
    state: S,
    loaded: { readonly snapshotSeq: number; readonly lastSeq: number; readonly snapshotBytes: number },
  ) {
    super(state, options, options.logger ?? silentLogger);
    this.snapshotSeq = loaded.snapshotSeq;
    this.lastSeqValue = loaded.lastSeq;
    this.snapshotBytes = loaded.snapshotBytes;
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
      try {
        const applied = await migrate(client);
        if (applied.length > 0) logger.info({ applied }, 'store: migrated the database schema');
      } finally {
        client.release();
      }
      // A standby loads the state before it may serve, and keeps it current while it waits; the
      // lease taken, it reads what was appended since (only that: the old owner is fenced).
      if (options.standby) {
        const copy = (follower = await JournalFollower.load(pool, { ...options, partition: PARTITION }));
        copy.follow(options.connectionString, (options.leaseMs ?? DEFAULT_LEASE_MS) / 3, logger);
        options.standby.following?.(() => copy.lastSeq);
      }
      const standby = options.standby && { ...options.standby, pause: follower?.pause.bind(follower) };
      // A stop during the load must not take the lease (take() tries once before any pause).
      options.standby?.signal?.throwIfAborted();
      lease = await PartitionLease.take(
        pool,
        { partition: PARTITION, owner: options.owner, ttlMs: options.leaseMs, standby },
        (err) => store?.leaseLost(err),
      );
      await follower?.stop();
      // A copy that broke (its journal unreadable, a record refused) is not used: loaded afresh.
      const warm = follower !== null && !follower.broken;
      const loaded = warm ? follower! : await JournalFollower.load(pool, { ...options, partition: PARTITION });
      const replayed = warm ? await loaded.catchUp() : loaded.lastSeq - loaded.snapshotSeq;
      follower = null;
      store = new PgStore(pool, lease, options, loaded.state, loaded);
      logger.info(
        {
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
      () => ({ partition: PARTITION, owner: this.options.owner, epoch: this.lease.epoch }),
      (err, fenced) => (fenced ? this.fail('a history write was fenced', err, 'STORE_LEASE_LOST') : err),
    );
    return this.historyStore;
  }

  /** The file store's content in this database (pg-blobs.ts). */
  blobs(): PgBlobs {
    return new PgBlobs(this.pool);
  }

  /** Sequence number of the last journal entry. */
  get lastSeq(): number {
    return this.lastSeqValue;
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

  protected append(serialized: string[]): Promise<void> {
    const entry = `[${serialized.join(',')}]`;
    const seq = ++this.lastSeqValue;
    this.bytesSinceSnapshot += entry.length;
    const durable = this.journal.add({ seq, entry });
    if (
      !this.checkpointing &&
      seq - this.snapshotSeq >= (this.options.checkpointEvery ?? 50_000) &&
      this.bytesSinceSnapshot >= this.snapshotBytes
    ) {
      void this.checkpoint().catch(() => undefined);
    }
    return durable;
  }

  /** One group commit of journal entries, fenced (APPEND); a failure fails the store. */
  private async writeEntries(entries: readonly { readonly seq: number; readonly entry: string }[]): Promise<void> {
    if (this.failure) throw this.failure;
    let result: pg.QueryResult;
    try {
      result = await this.pool.query(this.options.followed?.() === false ? APPEND : APPEND_NOTIFY, [
        PARTITION,
        this.options.owner,
        this.lease.epoch,
        entries.map((e) => e.seq),
        entries.map((e) => e.entry),
      ]);
    } catch (err) {
      throw this.fail('a journal write to the database failed', err);
    }
    if (result.rowCount !== entries.length) {
      throw this.fail(
        'a journal write was fenced',
        new Error(`partition ${PARTITION} no longer carries this daemon's epoch ${this.lease.epoch}`),
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
    const seq = this.lastSeqValue;
    if (seq === this.snapshotSeq) return;
    const state = serializeState(this.state, this.options.derived);
    this.bytesSinceSnapshot = 0;
    await this.flush();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const fence = await client.query(FENCE, [PARTITION, this.options.owner, this.lease.epoch]);
      if (fence.rowCount !== 1) {
        throw this.fail(
          'a checkpoint was fenced',
          new Error(`partition ${PARTITION} no longer carries epoch ${this.lease.epoch}`),
          'STORE_LEASE_LOST',
        );
      }
      await client.query(
        `INSERT INTO wfx_snapshots (partition, seq, epoch, state) VALUES ($1, $2, $3, $4)
         ON CONFLICT (partition) DO UPDATE SET seq = $2, epoch = $3, state = $4, saved_at = now()`,
        [PARTITION, seq, this.lease.epoch, state],
      );
      await client.query('DELETE FROM wfx_journal WHERE partition = $1 AND seq <= $2', [PARTITION, seq]);
      await client.query('COMMIT');
      this.snapshotSeq = seq;
      this.snapshotBytes = state.length;
      this.counters.checkpoints++;
      this.counters.bytes += state.length;
      this.logger.info({ seq, bytes: state.length }, 'store: checkpoint written to the database');
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

/** The state as a snapshot holds it: without the keys its owner derives. */
function serializeState(state: unknown, derived: readonly string[] | undefined): string {
  if (!derived?.length) return JSON.stringify(state);
  const skip = new Set(derived);
  return JSON.stringify(state, function (this: unknown, key, value: unknown) {
    return this === state && skip.has(key) ? undefined : value;
  });
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
