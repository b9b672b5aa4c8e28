/**
 * Opening a PostgreSQL store (PgStore.open): connect, migrate the schema, take the lease (a
 * standby first loads the state and keeps it current while it waits), then load the snapshots
 * and replay the journal after them. What the store is then built from is handed over; on a
 * failure, what was taken is given back.
 */
import type pg from 'pg';
import { errorMessage, WfxError } from '../../../shared/errors.js';
import { silentLogger } from '../record-store.js';
import { partitionCount } from './fenced-sql.js';
import { JournalFollower } from './journal-follower.js';
import { DEFAULT_LEASE_MS, PartitionLease } from './lease.js';
import { migrate } from './migrations.js';
import { newPool } from './pool.js';
import { DEFAULT_PARTITIONS, hasShared, COMMONS_PARTITION, type PartitionLayout } from './partition-state.js';
import { heldPartitions, type PgStoreOptions } from './pg-store-options.js';

/** What opening the database gave: what a PgStore is built from. */
export interface OpenedDatabase<S, R> {
  readonly pool: pg.Pool;
  /** The lease of the partitions the store holds. */
  readonly lease: PartitionLease;
  /** How the state is cut into partitions. */
  readonly layout: PartitionLayout<S, R>;
  /** The state loaded, and each partition's seqs and snapshot sizes. */
  readonly loaded: JournalFollower<S, R>;
  /** How many journal entries were replayed after the snapshots. */
  readonly replayed: number;
  /** Whether the state is a standby's copy, kept current while it waited. */
  readonly warm: boolean;
}

/**
 * Opens the database for a store: connects, migrates, takes the lease and loads (PgStore.open
 * says what it throws). `onLeaseLost` is told once the lease is lost, from then on.
 */
export async function openDatabase<S, R>(
  options: PgStoreOptions<S, R>,
  onLeaseLost: (err: WfxError) => void,
): Promise<OpenedDatabase<S, R>> {
  const logger = options.logger ?? silentLogger;
  // A connection that breaks is said in the log; the query on it (if any) fails and says so.
  const pool = newPool(
    {
      connectionString: options.connectionString,
      max: 4,
      application_name: `wfx ${options.owner}`,
      connectionTimeoutMillis: 10_000,
      // A query the database never answers (a network that drops packets) fails in time
      // instead of holding a commit, or a stop, for as long as TCP takes to give up.
      query_timeout: 30_000,
      keepAlive: true,
    },
    (err) => logger.warn({ err }, 'store: a database connection broke'),
  );
  let lease: PartitionLease | null = null;
  let renewals: pg.Pool | null = null;
  let follower: JournalFollower<S, R> | null = null;
  try {
    const client = await pool.connect().catch((err: unknown) => {
      throw new WfxError('DATABASE_UNREACHABLE', `cannot connect to the database: ${errorMessage(err)}`, {
        cause: err,
      });
    });
    let count: number;
    let joined: readonly number[] | null = null;
    try {
      const applied = await migrate(client);
      if (applied.length > 0) logger.info({ applied }, 'store: migrated the database schema');
      count = await partitionCount(client, options.partitions ?? DEFAULT_PARTITIONS);
      if (options.join) joined = await options.join(client, options.owner, options.leaseMs ?? DEFAULT_LEASE_MS);
    } finally {
      client.release();
    }
    if (joined?.length === 0)
      throw new WfxError('DATABASE_IN_USE', 'no partition of the database is free for this daemon yet', {
        details: { sharing: true },
      });
    const layout: PartitionLayout<S, R> = {
      count,
      collection: options.snapshotCollection,
      shared: options.shared,
      initialState: options.initialState,
      derived: options.derived,
      keptOnMoves: options.keptOnMoves,
    };
    if (options.partitions !== undefined && options.partitions !== count)
      logger.warn({ partitions: count, asked: options.partitions }, 'store: a database keeps its partition count');
    const all = Array.from({ length: count }, (_, p) => p);
    const partitions = heldPartitions(joined ?? options.held?.(count) ?? all, count);
    // What the store reads, in the order it is applied: partition 0 (the flows executions
    // run), the shared partition, then the executions it holds. A standby follows them all.
    const shared = hasShared(layout) ? [COMMONS_PARTITION] : [];
    const read = [0, ...shared, ...partitions.filter((p) => p !== 0)];
    // Executions load lazily (summaries, decision 077), those of the partitions held; a
    // sharing daemon's takes while running too (PgStore.take).
    const lazy = options.lazy === true;
    const follow = {
      ...layout,
      partitions: [0, ...shared, ...all.slice(1)],
      apply: options.apply,
      lazy,
      rows: options.rows,
      summarize: options.summarize,
    };
    // A standby loads the state before it may serve, and keeps it current while it waits; the
    // lease taken, it reads what was appended since (only that: the old owner is fenced).
    if (options.standby) {
      const copy = (follower = await JournalFollower.load(pool, follow));
      options.standby.loaded?.(copy.state);
      copy.follow(options.connectionString, (options.leaseMs ?? DEFAULT_LEASE_MS) / 3, logger);
      options.standby.following?.(() => copy.lastSeq);
    }
    const standby = options.standby && { ...options.standby, pause: follower?.pause.bind(follower) };
    // A stop during the load must not take the lease (take() tries once before any pause).
    options.standby?.signal?.throwIfAborted();
    // Renewals on a connection of their own, opened before the lease is taken (a slow link
    // takes several round trips to connect) and kept open however long it idles.
    const ttl = options.leaseMs ?? DEFAULT_LEASE_MS;
    renewals = newPool(
      {
        connectionString: options.connectionString,
        max: 1,
        application_name: `wfx ${options.owner} lease`,
        connectionTimeoutMillis: ttl / 2,
        query_timeout: ttl / 2,
        idleTimeoutMillis: 0,
        keepAlive: true,
      },
      (err) => logger.warn({ err }, 'store: the lease connection broke'),
    );
    (await renewals.connect()).release();
    lease = await PartitionLease.take(
      pool,
      { partitions, owner: options.owner, ttlMs: ttl, standby, renewals },
      onLeaseLost,
    );
    await follower?.stop();
    // A copy that broke (its journal unreadable, a record refused) is not used: loaded afresh.
    const warm = follower !== null && !follower.broken && partitions.length === count;
    const loaded = warm ? follower! : await JournalFollower.load(pool, { ...follow, partitions: read });
    const replayed = warm ? await loaded.catchUp() : loaded.lastSeq - loaded.snapshotSeq;
    follower = null;
    return { pool, lease, layout, loaded, replayed, warm };
  } catch (err) {
    options.standby?.following?.(null);
    await follower?.stop();
    await lease?.release().catch(() => undefined);
    if (!lease) await renewals?.end().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw err;
  }
}
