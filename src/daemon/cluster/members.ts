/**
 * The daemons on one database, as each of them sees the others. Every daemon on `--store`, the
 * one serving and those standing by, registers in `wfx_daemons` where it answers (its URL) and
 * renews its row every third of a lease. Whoever holds a partition's lease serves it (lease.ts);
 * a standby forwards what it is asked to that daemon (standby-listener.ts), so that any daemon
 * of the database answers any call, and `GET /admin/cluster` (`wfx daemon status`) lists them
 * all. The member outlives the daemon's starts in one process (rejoin.ts): its pool is its own,
 * and a database that cannot be reached only makes its view go stale, which it then says.
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import type { ClusterDaemon } from '../../shared/api/index.js';
import { VERSION } from '../../shared/version.js';
import { migrate } from '../store/pg/migrations.js';
import { newPool } from '../store/pg/pool.js';
import type { ShareView } from './partition-plan.js';

/** The daemon serving the database now, as last read: where a standby sends what it is asked. */
export interface ServingDaemon {
  readonly id: string;
  readonly url: string;
  readonly epoch: number;
}

// A standby's applied entries ($6, summed over the partitions) are compared with the journals'
// heads in the same statement, so how far it is behind is as of one moment, not the heads now
// against its progress a beat ago.
const REGISTER = `
  INSERT INTO wfx_daemons (id, url, pid, host, version, applied_seq, shares, shared_seq, behind_entries)
  SELECT $1, $2, $3, $4, $5, $6::bigint, $7, $8::bigint, CASE WHEN $6::bigint IS NOT NULL THEN (
           SELECT coalesce(sum(greatest(
             (SELECT max(seq) FROM wfx_journal j WHERE j.partition = p.partition),
             (SELECT seq FROM wfx_snapshots s WHERE s.partition = p.partition), 0)), 0)
             FROM wfx_partitions p) - $6::bigint END
  ON CONFLICT (id) DO UPDATE
     SET url = EXCLUDED.url, pid = EXCLUDED.pid, host = EXCLUDED.host, version = EXCLUDED.version,
         started_at = CASE WHEN wfx_daemons.pid = EXCLUDED.pid THEN wfx_daemons.started_at ELSE now() END,
         applied_seq = EXCLUDED.applied_seq, behind_entries = EXCLUDED.behind_entries,
         shares = EXCLUDED.shares, shared_seq = EXCLUDED.shared_seq, seen_at = now()
  RETURNING behind_entries`;

// Who shares the partitions (seen within a lease) and who holds each one whose lease runs,
// with where it answers: what sharing plans with (partition-plan.ts) and requests are routed by.
const SHARING = `
  SELECT (SELECT partitions FROM wfx_cluster) AS count,
         (SELECT coalesce(json_agg(id ORDER BY id), '[]') FROM wfx_daemons
           WHERE shares AND seen_at > now() - $1 * interval '1 millisecond') AS members,
         (SELECT coalesce(json_agg(json_build_object('partition', p.partition, 'owner', p.owner, 'url', d.url)), '[]')
            FROM wfx_partitions p LEFT JOIN wfx_daemons d ON d.id = p.owner
           WHERE p.owner IS NOT NULL AND p.lease_until > now()) AS holders`;

// Partition 0's owner while its lease runs, and where that daemon said it answers.
const SERVING = `
  SELECT d.id, d.url, p.epoch FROM wfx_partitions p JOIN wfx_daemons d ON d.id = p.owner
   WHERE p.partition = 0 AND p.lease_until > now()`;

const LIST = `
  SELECT d.id, d.url, d.pid, d.host, d.version, d.started_at, d.applied_seq, d.behind_entries,
         (extract(epoch FROM now() - d.seen_at) * 1000)::bigint AS seen_ms_ago,
         coalesce(json_agg(json_build_object(
           'partition', p.partition, 'epoch', p.epoch,
           'leaseMsLeft', (extract(epoch FROM p.lease_until - now()) * 1000)::bigint,
           'replayEntries', (SELECT count(*) FROM wfx_journal j WHERE j.partition = p.partition)
         ) ORDER BY p.partition) FILTER (WHERE p.partition IS NOT NULL), '[]') AS partitions
    FROM wfx_daemons d LEFT JOIN wfx_partitions p ON p.owner = d.id AND p.lease_until > now()
   GROUP BY d.id ORDER BY d.started_at, d.id`;

// Whether a standby other than this daemon follows the journal and was seen within a lease.
const FOLLOWED = `
  SELECT EXISTS (SELECT 1 FROM wfx_daemons WHERE id <> $1 AND applied_seq IS NOT NULL
                    AND seen_at > now() - $2 * interval '1 millisecond') AS followed`;

// A daemon not seen for a day is gone (killed, its host retired): its row is dropped.
const FORGET = `DELETE FROM wfx_daemons WHERE seen_at < now() - interval '1 day' AND id <> $1`;

/** Who shares a database's partitions and who holds them (ClusterMember.sharingView). */
export interface Sharing extends ShareView {
  /** Where the holder of each partition whose lease runs answers. */
  readonly urls: ReadonlyMap<number, string>;
}

/** Reads who shares the partitions and who holds them now. */
export async function readSharing(pool: pg.Pool | pg.ClientBase, leaseMs: number): Promise<Sharing> {
  const { rows } = await pool.query<{
    count: number | null;
    members: string[];
    holders: { partition: number; owner: string; url: string | null }[];
  }>(SHARING, [leaseMs]);
  const row = rows[0]!;
  const holders = new Map<number, string>();
  const urls = new Map<number, string>();
  for (const h of row.holders) {
    holders.set(h.partition, h.owner);
    if (h.url !== null) urls.set(h.partition, h.url);
  }
  return { count: row.count ?? 0, members: row.members, holders, urls };
}

export interface ClusterMemberOptions {
  readonly connectionString: string;
  /** This daemon's id: the lease's owner (open-store.ts's daemon.id). */
  readonly id: string;
  /** How long a lease lasts (the renewal period is a third of it). */
  readonly leaseMs: number;
  /** Whether this daemon shares the partitions with the others (decision 041), or stands by to take them all. */
  readonly shares?: boolean;
  readonly logger: { info(line: string): void; warn(line: string): void };
}

export class ClusterMember {
  private readonly pool: pg.Pool;
  private url: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private migrated = false;
  private closed = false;
  private unreachable = false;
  private beat: Promise<void> | null = null;
  private serving: ServingDaemon | null = null;
  /** performance.now() of the last read of the serving daemon that succeeded. */
  private readAt = -Infinity;
  /** Whether another daemon's copy follows the journal, as last read. */
  private followedNow = true;
  /** While it stands by: the last journal entry its copy of the state applied. */
  private appliedSeq: (() => number) | null = null;
  /** While it stands by: how many journal entries its copy lacked at the last registration. */
  private behind: number | null = null;
  /** Who shares the partitions and who holds them, as last read (with `shares`). */
  private sharing: Sharing | null = null;
  private secret: Promise<string> | null = null;
  private sharedSeq: (() => number) | null = null;
  private readonly sharingWatchers = new Set<(view: Sharing) => void>();

  constructor(private readonly options: ClusterMemberOptions) {
    // A connection that broke: the next beat says so (it fails, or reconnects).
    this.pool = newPool(
      {
        connectionString: options.connectionString,
        max: 1,
        application_name: `wfx ${options.id} cluster`,
        connectionTimeoutMillis: 10_000,
        query_timeout: 10_000,
        keepAlive: true,
      },
      () => undefined,
    );
  }

  /** This daemon's id. */
  get id(): string {
    return this.options.id;
  }

  /** Registers this daemon as answering at `url` now, and from then on every third of a lease. */
  async announce(url: string): Promise<void> {
    this.url = url;
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => void this.heartbeat(), this.options.leaseMs / 3);
      this.timer.unref();
    }
    await this.heartbeat();
  }

  /**
   * The daemon serving the database, another than this one, as read at most a lease ago; null
   * when none is (a takeover under way), or the database has not answered for that long.
   */
  servingDaemon(): ServingDaemon | null {
    if (performance.now() - this.readAt > this.options.leaseMs) return null;
    return this.serving && this.serving.id !== this.options.id ? this.serving : null;
  }

  /**
   * While this daemon stands by, how far its copy of the state has come (said with each
   * registration, so status shows how far behind it is); null once it serves.
   */
  following(appliedSeq: (() => number) | null): void {
    this.appliedSeq = appliedSeq;
    if (appliedSeq === null) this.behind = null;
  }

  /**
   * While this daemon stands by with a copy of the state: the journal entries (summed over the
   * partitions) the copy had not applied, as of its last registration (every third of a lease),
   * counted against the journals' heads in the statement that registered it. Null otherwise.
   */
  behindEntries(): number | null {
    return this.behind;
  }

  /**
   * Whether a standby follows the journal (so the serving daemon's appends NOTIFY it): as read
   * at most a lease ago, and true when the database has not answered for that long.
   */
  followed(): boolean {
    return this.followedNow || performance.now() - this.readAt > this.options.leaseMs;
  }

  /**
   * Who shares the partitions and who holds each, as read at most a lease ago; null when the
   * database has not answered for that long (or before the first read).
   */
  sharingView(): Sharing | null {
    if (performance.now() - this.readAt > this.options.leaseMs) return null;
    return this.sharing;
  }

  /**
   * Who shares and holds what as last read, however long ago: where to send a request. A holder
   * read before it moved on refuses what it no longer serves, and one gone cannot be reached:
   * either way the request answers 503 and the view is read again, so an old view is safe to
   * route by, and better than none while a slow database delays a read.
   */
  lastSharingView(): Sharing | null {
    return this.sharing;
  }

  /** Calls `fn` with each view of who shares and holds what read from now on. Returns the unsubscribe. */
  watchSharing(fn: (view: Sharing) => void): () => void {
    this.sharingWatchers.add(fn);
    return () => this.sharingWatchers.delete(fn);
  }

  /**
   * While this daemon shares the database, how far it has read the shared partition's journal
   * (said with each registration, so that its deletion waits for it); null between starts.
   */
  readingShared(sharedSeq: (() => number) | null): void {
    this.sharedSeq = sharedSeq;
  }

  /** The secret daemons of this database sign requests they pass on with (request-signing.ts): read once. */
  hopSecret(): Promise<string> {
    this.secret ??= this.pool
      .query<{ secret: string }>('SELECT secret FROM wfx_hop_secret')
      .then(({ rows }) => {
        if (!rows[0]) throw new Error('the database has no wfx_hop_secret row');
        return rows[0].secret;
      })
      .catch((err: unknown) => {
        this.secret = null; // asked again next time
        throw err;
      });
    return this.secret;
  }

  /** Reads the serving daemon again now (a forward to the one it knew failed). */
  refresh(): Promise<void> {
    return this.heartbeat();
  }

  /** Every daemon on the database, with the partitions each serves. */
  async list(): Promise<ClusterDaemon[]> {
    const { rows } = await this.pool.query<{
      id: string;
      url: string;
      pid: number;
      host: string;
      version: string;
      started_at: Date;
      applied_seq: string | null;
      behind_entries: string | null;
      seen_ms_ago: string;
      partitions: { partition: number; epoch: number; leaseMsLeft: number; replayEntries: number }[];
    }>(LIST);
    return rows.map((r) => ({
      id: r.id,
      url: r.url,
      pid: r.pid,
      host: r.host,
      version: r.version,
      startedAt: r.started_at.toISOString(),
      seenMsAgo: Math.max(0, Number(r.seen_ms_ago)),
      self: r.id === this.options.id,
      following:
        r.applied_seq === null
          ? null
          : { appliedSeq: Number(r.applied_seq), behindEntries: Math.max(0, Number(r.behind_entries)) },
      partitions: r.partitions.map((p) => ({
        partition: p.partition,
        epoch: Number(p.epoch),
        leaseMsLeft: Math.max(0, Number(p.leaseMsLeft)),
        replayEntries: Number(p.replayEntries),
      })),
    }));
  }

  private heartbeat(): Promise<void> {
    // One beat at a time: a slow database does not pile them up.
    this.beat ??= this.beatOnce().finally(() => (this.beat = null));
    return this.beat;
  }

  private async beatOnce(): Promise<void> {
    if (this.closed || this.url === null) return;
    const sentAt = performance.now();
    try {
      if (!this.migrated) {
        const client = await this.pool.connect();
        try {
          await migrate(client);
        } finally {
          client.release();
        }
        this.migrated = true;
      }
      const applied = this.appliedSeq?.() ?? null;
      const registered = await this.pool.query<{ behind_entries: string | null }>(REGISTER, [
        this.options.id,
        this.url,
        process.pid,
        hostname(),
        VERSION,
        applied,
        this.options.shares ?? false,
        this.sharedSeq?.() ?? null,
      ]);
      const behind = registered.rows[0]?.behind_entries ?? null;
      this.behind = applied === null || behind === null || !this.appliedSeq ? null : Math.max(0, Number(behind));
      if (this.options.shares) this.sharing = await readSharing(this.pool, this.options.leaseMs);
      const { rows } = await this.pool.query<{ id: string; url: string; epoch: string }>(SERVING);
      const row = rows[0];
      this.serving = row ? { id: row.id, url: row.url, epoch: Number(row.epoch) } : null;
      const followed = await this.pool.query<{ followed: boolean }>(FOLLOWED, [this.options.id, this.options.leaseMs]);
      this.followedNow = followed.rows[0]?.followed ?? true;
      this.readAt = sentAt;
      if (this.sharing) for (const fn of this.sharingWatchers) fn(this.sharing);
      await this.pool.query(FORGET, [this.options.id]);
      if (this.unreachable) this.options.logger.info('cluster: the database answers again');
      this.unreachable = false;
    } catch (err) {
      // Said once per outage; the store's own writes say the rest.
      if (!this.unreachable && !this.closed)
        this.options.logger.warn(`cluster: cannot register with the database: ${(err as Error).message}`);
      this.unreachable = true;
    }
  }

  /** Stops renewing and leaves the cluster (a clean stop): the others no longer list this daemon. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.beat?.catch(() => undefined);
    if (this.url !== null)
      await this.pool.query('DELETE FROM wfx_daemons WHERE id = $1', [this.options.id]).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
