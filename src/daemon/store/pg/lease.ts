/**
 * A daemon's lease on partitions of the state in PostgreSQL, as Temporal's shards hold theirs:
 * taking a partition bumps its epoch, every write of the partition is checked against that
 * epoch in the same statement (pg-store.ts), so once another daemon has taken the partition no
 * write of the old owner lands. The lease is renewed well before it lapses; the holder counts
 * it lost, by its own monotonic clock, from when its last successful renewal was *sent*, so it
 * stops before the database's clock lets anyone else take the partition. One lease holds a set
 * of partitions, taken, renewed and released together, each with its own epoch; partitions may
 * be added to it (taken while it is held) and dropped from it (released) on the way.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { WfxError } from '../../../shared/errors.js';
import { inTransaction } from './transaction.js';

export interface LeaseOptions {
  /** The partitions held together (taken all or none), partition 0 first. */
  readonly partitions: readonly number[];
  /** The daemon's id; a daemon that restarts under the same id takes its own lease back at once. */
  readonly owner: string;
  /** How long a lease lasts unrenewed (default 10 s); renewed every third of it. */
  readonly ttlMs?: number;
  /**
   * Where renewals and the release go: a pool of one connection of their own, with a deadline
   * shorter than the lease, ended with the lease. Renewals waiting behind the store's writes in
   * its pool came too late on a slow link (#83). Default: the lease's pool.
   */
  readonly renewals?: pg.Pool;
  /**
   * Wait while another daemon holds the lease (a standby), until it is released, lapses or
   * `signal` aborts; `onWaiting` is told who holds it, once. Without it, a held lease is refused
   * with DATABASE_IN_USE.
   */
  readonly standby?: {
    readonly signal?: AbortSignal;
    readonly onWaiting?: (holder: string) => void;
    /** Waits `ms` between two tries, or less when told the lease was released (default: `ms`). */
    readonly pause?: (ms: number, signal?: AbortSignal) => Promise<void>;
  };
}

/** Who holds a partition, as the database says. */
export interface LeaseHolder {
  readonly owner: string | null;
  readonly pid: number | null;
  readonly host: string | null;
  readonly epoch: number;
  readonly leaseUntil: Date | null;
}

export const DEFAULT_LEASE_MS = 10_000;
/** PostgreSQL's SQLSTATE when lock_timeout ends a wait. */
const LOCK_NOT_AVAILABLE = '55P03';

// Taking is one transaction: the rows locked FOR UPDATE in partition order (two daemons taking
// overlapping sets cannot deadlock; the lock waits for every append in flight of the old owner,
// whose FOR KEY SHARE it conflicts with), then all taken if every one is free, lapsed or this
// daemon's own. An append after it sees the new epoch and writes nothing.
const LOCK = `
  SELECT partition, owner IS NULL OR owner = $2 OR lease_until < now() AS free
    FROM wfx_partitions WHERE partition = ANY($1::int[]) ORDER BY partition FOR UPDATE`;
const TAKE = `
  UPDATE wfx_partitions
     SET owner = $2, owner_pid = $3, owner_host = $4, epoch = epoch + 1,
         lease_until = now() + $5 * interval '1 millisecond', taken_at = now()
   WHERE partition = ANY($1::int[])
  RETURNING partition, epoch`;

// Renewing and releasing lock the rows in partition order too, FOR NO KEY UPDATE: that waits
// for a takeover's FOR UPDATE but not for the owner's appends (FOR KEY SHARE, fenced-sql.ts).
const HELD = `
  SELECT q.partition FROM wfx_partitions q
    JOIN unnest($1::int[], $3::bigint[]) AS l(partition, epoch) ON q.partition = l.partition AND q.epoch = l.epoch
   WHERE q.owner = $2 ORDER BY q.partition FOR NO KEY UPDATE OF q`;

// A renewal that reaches the database after the lease lapsed (held in the network) renews
// nothing: the daemon has counted it lost already, and another may be taking over.
const RENEW = `
  UPDATE wfx_partitions p SET lease_until = now() + $4 * interval '1 millisecond'
    FROM (${HELD}) AS held WHERE p.partition = held.partition AND p.lease_until > now()`;

// A release NOTIFYs the standbys (journal-follower.ts), which try to take the partition at once
// instead of at their next try: a daemon stopped for an upgrade hands over without a pause.
export const LEASE_CHANNEL = 'wfx_lease';
const RELEASE = `
  WITH released AS (
    UPDATE wfx_partitions p SET owner = NULL, owner_pid = NULL, owner_host = NULL, lease_until = NULL
      FROM (${HELD}) AS held WHERE p.partition = held.partition RETURNING p.partition
  )
  SELECT pg_notify('${LEASE_CHANNEL}', partition::text) FROM released`;

export class PartitionLease {
  private timer: NodeJS.Timeout | null = null;
  private expiry: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  /** performance.now() past which the lease may have lapsed (from the last renewal sent). */
  private validUntil: number;
  private lost: WfxError | null = null;
  /** performance.now() when the last renewal that succeeded (or the take) was sent. */
  private renewedAt: number;
  private released = false;
  /** The partitions held, in order. */
  private held: number[];
  /** Renewals and changes (partitions added, dropped), one at a time, in the order asked. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: LeaseOptions,
    /** The epoch each partition's writes carry, by partition. */
    private readonly epochs: Map<number, number>,
    sentAt: number,
    private readonly onLost: (err: WfxError) => void,
  ) {
    this.held = [...options.partitions].sort((a, b) => a - b);
    this.validUntil = sentAt + this.ttlMs;
    this.renewedAt = sentAt;
  }

  /** The epoch the writes of `partition` carry (it must be held). */
  epochOf(partition: number): number {
    const epoch = this.epochs.get(partition);
    if (epoch === undefined) throw new RangeError(`partition ${partition} is not held`);
    return epoch;
  }

  /** The epoch of the first partition held (partition 0, the directory's, when held): what status shows. */
  get epoch(): number {
    return this.epochOf(this.held[0]!);
  }

  /** The partitions held, in order. */
  get partitions(): readonly number[] {
    return this.held;
  }

  private epochsOf(partitions: readonly number[]): number[] {
    return partitions.map((p) => this.epochOf(p));
  }

  /**
   * Takes `partitions` too, if every one is free, lapsed or this daemon's own (one try, all or
   * none): true once held, with their own epochs; false when another daemon holds one.
   */
  add(partitions: readonly number[]): Promise<boolean> {
    return this.change(async () => {
      const wanted = partitions.filter((p) => !this.held.includes(p));
      if (wanted.length === 0) return true;
      await this.pool.query('INSERT INTO wfx_partitions (partition) SELECT unnest($1::int[]) ON CONFLICT DO NOTHING', [
        wanted,
      ]);
      const epochs = await PartitionLease.tryTake(this.pool, wanted, this.options.owner, this.ttlMs, this.ttlMs / 3);
      if (!epochs) return false;
      for (const [p, epoch] of epochs) this.epochs.set(p, epoch);
      this.held = [...this.held, ...wanted].sort((a, b) => a - b);
      return true;
    });
  }

  /** Gives `partitions` up (another daemon may take them at once), keeping the rest. */
  drop(partitions: readonly number[]): Promise<void> {
    return this.change(async () => {
      const going = this.held.filter((p) => partitions.includes(p));
      if (going.length === 0) return;
      if (going.length === this.held.length) throw new RangeError('a lease keeps at least one partition');
      // No longer written from now on, whatever the release's outcome (it lapses otherwise).
      this.held = this.held.filter((p) => !going.includes(p));
      const epochs = this.epochsOf(going);
      for (const p of going) this.epochs.delete(p);
      await this.pool.query(RELEASE, [going, this.options.owner, epochs]);
    });
  }

  private change<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.lost) throw this.lost;
      if (this.released) throw new Error('the lease was released');
      return fn();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** How long the lease lasts unrenewed, and how long ago its last renewal that succeeded was sent. */
  health(): { readonly leaseMs: number; readonly renewedMsAgo: number } {
    return { leaseMs: this.ttlMs, renewedMsAgo: Math.round(performance.now() - this.renewedAt) };
  }

  private get ttlMs(): number {
    return this.options.ttlMs ?? DEFAULT_LEASE_MS;
  }

  /**
   * Takes the partitions' lease: every one free, lapsed or this daemon's own, or none. Throws
   * DATABASE_IN_USE when another daemon holds one and `standby` was not given. `onLost` is
   * called once if the lease is lost.
   */
  static async take(pool: pg.Pool, options: LeaseOptions, onLost: (err: WfxError) => void): Promise<PartitionLease> {
    const ttl = options.ttlMs ?? DEFAULT_LEASE_MS;
    const partitions = [...options.partitions];
    await pool.query('INSERT INTO wfx_partitions (partition) SELECT unnest($1::int[]) ON CONFLICT DO NOTHING', [
      partitions,
    ]);
    let told = false;
    for (;;) {
      options.standby?.signal?.throwIfAborted();
      const sentAt = performance.now();
      const epochs = await PartitionLease.tryTake(pool, partitions, options.owner, ttl);
      if (epochs) {
        const lease = new PartitionLease(pool, options, epochs, sentAt, onLost);
        lease.schedule();
        return lease;
      }
      const holder = await PartitionLease.holder(pool, partitions[0]!);
      const who = holder ? `daemon ${holder.owner} (pid ${holder.pid} on ${holder.host})` : 'another daemon';
      const held = `${who} holds this database's lease until ${holder?.leaseUntil?.toISOString() ?? 'it lapses'}`;
      if (!options.standby) throw new WfxError('DATABASE_IN_USE', held, { details: holder });
      if (!told) options.standby.onWaiting?.(held);
      told = true;
      const pause = options.standby.pause ?? ((ms, signal) => sleep(ms, undefined, { signal }));
      await pause(ttl / 3, options.standby.signal);
    }
  }

  /** One try: the epochs taken, by partition, or null when another daemon holds one of them. */
  private static async tryTake(
    pool: pg.Pool,
    partitions: readonly number[],
    owner: string,
    ttl: number,
    lockTimeoutMs?: number,
  ): Promise<Map<number, number> | null> {
    const take = async (client: pg.PoolClient): Promise<Map<number, number> | null> => {
      // Partitions added to a lease held wait for a row another daemon locks (an append, a
      // takeover) for a while at most: the renewals of what this daemon holds wait behind them.
      if (lockTimeoutMs !== undefined)
        await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
      const locked = await client.query<{ free: boolean }>(LOCK, [partitions, owner]);
      if (locked.rows.length !== partitions.length || !locked.rows.every((r) => r.free)) return null;
      const { rows } = await client.query<{ partition: number; epoch: string }>(TAKE, [
        partitions,
        owner,
        process.pid,
        hostname(),
        ttl,
      ]);
      return new Map(rows.map((r) => [r.partition, Number(r.epoch)]));
    };
    return inTransaction(pool, take).catch((err: unknown) => {
      if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return null;
      throw err;
    });
  }

  /** Who holds the partition now (null: no row yet). */
  static async holder(pool: pg.Pool, partition: number): Promise<LeaseHolder | null> {
    const { rows } = await pool.query<{
      owner: string | null;
      owner_pid: number | null;
      owner_host: string | null;
      epoch: string;
      lease_until: Date | null;
    }>('SELECT owner, owner_pid, owner_host, epoch, lease_until FROM wfx_partitions WHERE partition = $1', [partition]);
    const row = rows[0];
    return row
      ? {
          owner: row.owner,
          pid: row.owner_pid,
          host: row.owner_host,
          epoch: Number(row.epoch),
          leaseUntil: row.lease_until,
        }
      : null;
  }

  /** Null while held; the reason once lost. */
  get lostBecause(): WfxError | null {
    return this.lost;
  }

  private schedule(): void {
    if (this.released || this.lost) return;
    this.timer = setTimeout(() => void this.renew(), this.ttlMs / 3);
    this.timer.unref();
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = setTimeout(() => this.expired(), Math.max(0, this.validUntil - performance.now()));
    this.expiry.unref();
  }

  private expired(): void {
    if (this.released || this.lost) return;
    if (performance.now() < this.validUntil) return this.schedule();
    this.lose(
      new WfxError('STORE_LEASE_LOST', `the lease on ${describePartitions(this.held)} lapsed before it was renewed`),
    );
  }

  private renew(): Promise<void> {
    let sentAt = 0;
    let held: readonly number[] = [];
    // After any change under way (add, drop): the set renewed is the one held when it is sent.
    const sent = this.queue.then(() => {
      sentAt = performance.now();
      held = this.held;
      return this.renewals.query(RENEW, [held, this.options.owner, this.epochsOf(held), this.ttlMs]);
    });
    this.queue = sent.catch(() => undefined);
    this.renewing = sent
      .then(
        (result) => {
          if (this.released || this.lost) return;
          if (result.rowCount === held.length) {
            this.validUntil = sentAt + this.ttlMs;
            this.renewedAt = sentAt;
          } else
            return this.lose(
              new WfxError(
                'STORE_LEASE_LOST',
                `another daemon took ${describePartitions(held)} or part of it (this daemon's epochs were ${this.epochsOf(held).join(', ')})`,
              ),
            );
          this.schedule();
        },
        // Unreachable for now: try again at the next tick; the expiry timer ends it in time.
        () => this.schedule(),
      )
      .finally(() => (this.renewing = null));
    return this.renewing;
  }

  private lose(err: WfxError): void {
    if (this.lost) return;
    this.lost = err;
    this.stopTimers();
    this.onLost(err);
  }

  private stopTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.expiry) clearTimeout(this.expiry);
    this.timer = this.expiry = null;
  }

  /** Gives the partition up (a clean stop): another daemon may take it at once. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.stopTimers();
    try {
      await this.queue;
      await this.renewing?.catch(() => undefined);
      if (this.lost) return;
      await this.renewals.query(RELEASE, [this.held, this.options.owner, this.epochsOf(this.held)]);
    } finally {
      await this.options.renewals?.end().catch(() => undefined);
    }
  }

  private get renewals(): pg.Pool {
    return this.options.renewals ?? this.pool;
  }
}

/** "partition 0", "partitions 0-15": for messages. */
export function describePartitions(partitions: readonly number[]): string {
  if (partitions.length === 1) return `partition ${partitions[0]}`;
  const sorted = [...partitions].sort((a, b) => a - b);
  const contiguous = sorted.every((p, i) => i === 0 || p === sorted[i - 1]! + 1);
  return contiguous ? `partitions ${sorted[0]}-${sorted.at(-1)}` : `partitions ${sorted.join(', ')}`;
}
