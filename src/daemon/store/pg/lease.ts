/**
 * A daemon's lease on a partition of the state in PostgreSQL, as Temporal's shards hold theirs:
 * taking it bumps the partition's epoch, every write of the partition is checked against that
 * epoch in the same statement (pg-store.ts), so once another daemon has taken the partition no
 * write of the old owner lands. The lease is renewed well before it lapses; the holder counts
 * it lost, by its own monotonic clock, from when its last successful renewal was *sent*, so it
 * stops before the database's clock lets anyone else take the partition.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { WfxError } from '../../../shared/errors.js';

export interface LeaseOptions {
  readonly partition: number;
  /** The daemon's id; a daemon that restarts under the same id takes its own lease back at once. */
  readonly owner: string;
  /** How long a lease lasts unrenewed (default 10 s); renewed every third of it. */
  readonly ttlMs?: number;
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

const TAKE = `
  UPDATE wfx_partitions
     SET owner = $2, owner_pid = $3, owner_host = $4, epoch = epoch + 1,
         lease_until = now() + $5 * interval '1 millisecond', taken_at = now()
   WHERE partition = $1 AND (owner IS NULL OR owner = $2 OR lease_until < now())
  RETURNING epoch`;

const RENEW = `
  UPDATE wfx_partitions SET lease_until = now() + $4 * interval '1 millisecond'
   WHERE partition = $1 AND owner = $2 AND epoch = $3`;

// A release NOTIFYs the standbys (journal-follower.ts), which try to take the partition at once
// instead of at their next try: a daemon stopped for an upgrade hands over without a pause.
export const LEASE_CHANNEL = 'wfx_lease';
const RELEASE = `
  WITH released AS (
    UPDATE wfx_partitions SET owner = NULL, owner_pid = NULL, owner_host = NULL, lease_until = NULL
     WHERE partition = $1 AND owner = $2 AND epoch = $3 RETURNING partition
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

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: LeaseOptions,
    /** The epoch this daemon's writes of the partition carry. */
    readonly epoch: number,
    sentAt: number,
    private readonly onLost: (err: WfxError) => void,
  ) {
    this.validUntil = sentAt + this.ttlMs;
    this.renewedAt = sentAt;
  }

  /** How long the lease lasts unrenewed, and how long ago its last renewal that succeeded was sent. */
  health(): { readonly leaseMs: number; readonly renewedMsAgo: number } {
    return { leaseMs: this.ttlMs, renewedMsAgo: Math.round(performance.now() - this.renewedAt) };
  }

  private get ttlMs(): number {
    return this.options.ttlMs ?? DEFAULT_LEASE_MS;
  }

  /**
   * Takes the partition's lease: free, lapsed or this daemon's own. Throws DATABASE_IN_USE when
   * another daemon holds it and `standby` was not given. `onLost` is called once if it is lost.
   */
  static async take(pool: pg.Pool, options: LeaseOptions, onLost: (err: WfxError) => void): Promise<PartitionLease> {
    const ttl = options.ttlMs ?? DEFAULT_LEASE_MS;
    await pool.query('INSERT INTO wfx_partitions (partition) VALUES ($1) ON CONFLICT DO NOTHING', [options.partition]);
    let told = false;
    for (;;) {
      options.standby?.signal?.throwIfAborted();
      const sentAt = performance.now();
      const { rows } = await pool.query<{ epoch: string }>(TAKE, [
        options.partition,
        options.owner,
        process.pid,
        hostname(),
        ttl,
      ]);
      if (rows[0]) {
        const lease = new PartitionLease(pool, options, Number(rows[0].epoch), sentAt, onLost);
        lease.schedule();
        return lease;
      }
      const holder = await PartitionLease.holder(pool, options.partition);
      const who = holder ? `daemon ${holder.owner} (pid ${holder.pid} on ${holder.host})` : 'another daemon';
      const held = `${who} holds this database's lease until ${holder?.leaseUntil?.toISOString() ?? 'it lapses'}`;
      if (!options.standby) throw new WfxError('DATABASE_IN_USE', held, { details: holder });
      if (!told) options.standby.onWaiting?.(held);
      told = true;
      const pause = options.standby.pause ?? ((ms, signal) => sleep(ms, undefined, { signal }));
      await pause(ttl / 3, options.standby.signal);
    }
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
      new WfxError('STORE_LEASE_LOST', `the lease on partition ${this.options.partition} lapsed before it was renewed`),
    );
  }

  private renew(): Promise<void> {
    const sentAt = performance.now();
    this.renewing = this.pool
      .query(RENEW, [this.options.partition, this.options.owner, this.epoch, this.ttlMs])
      .then(
        (result) => {
          if (this.released || this.lost) return;
          if (result.rowCount === 1) {
            this.validUntil = sentAt + this.ttlMs;
            this.renewedAt = sentAt;
          } else
            return this.lose(
              new WfxError(
                'STORE_LEASE_LOST',
                `another daemon took partition ${this.options.partition} (this daemon's epoch was ${this.epoch})`,
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
    await this.renewing?.catch(() => undefined);
    if (this.lost) return;
    await this.pool.query(RELEASE, [this.options.partition, this.options.owner, this.epoch]);
  }
}
