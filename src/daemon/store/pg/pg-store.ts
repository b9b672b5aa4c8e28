/**
 * PgStore is one state machine (open, commit, checkpoint, partitions taken and given
 * up, failure, close) over private fields all of its parts share: the lease, the journal's seqs,
 * the state. What needs none of them lives beside it: pg-open.ts (connecting and loading),
 * journal-writer.ts, fenced-sql.ts, partition-state.ts, shared-journal.ts, pg-store-options.ts;
 * what needs some of them is given them: pg-checkpoints.ts (the snapshots' marks and the
 * checkpoints that write them), handover.ts (partitions taken and given up),
 * followed-partitions.ts (what other daemons write to the partitions it does not hold).
 *
 * The durable store on PostgreSQL: the same state machine as the JSON store (store.ts), the
 * live state in memory and every commit a journal entry, but the journal is rows of
 * `wfx_journal` and the snapshot a row of `wfx_snapshots`. Entries are group-committed: one
 * INSERT of every entry waiting, in flight one at a time, the commit of that statement being the
 * acknowledgement as the fsync is in the JSON store. Every write names the epoch of this daemon's
 * lease (lease.ts) and lands only while the partition's row still carries it: a daemon that lost
 * its lease cannot write, whatever it still holds in memory (docs/decisions/035 and 037).
 *
 * The state is cut into partitions (partition-state.ts): executions spread by their id, what
 * they share in the shared partition, the rest in partition 0. Each commit's records go to the
 * journal of the partition they change, a group commit in one fenced statement. A store holds
 * the leases it is given and follows what other daemons write to partition 0 and the shared
 * partition (shared-journal.ts, decision 039). A daemon started on the database while another
 * serves waits as a standby, keeping a copy of the state current, and takes over.
 */
import type pg from 'pg';
import type { ErrorCode } from '../../../shared/errors.js';
import { RecordStore, silentLogger } from '../record-store.js';
import type { Decided, Divert, EvictableEntries, ExecutionPartitions, Transaction } from '../durable-store.js';
import { Unjournaled } from './unjournaled.js';
import { partitionedIds } from '../../state/ids.js';
import type { PartitionLease } from './lease.js';
import { PgMessageClaims } from './pg-message-claims.js';
import { PgRateLimits } from './pg-rate-limits.js';
import { PgBlobs } from './pg-blobs.js';
import { PgAuditTrail } from './pg-audit.js';
import { PgHistory } from './pg-history.js';
import type { JournalFollower } from './journal-follower.js';
import { FollowedPartitions } from './followed-partitions.js';
import { JournalWriter } from './journal-writer.js';
import type { PgStoreCounters, PgStoreHealth, PgStoreOptions } from './pg-store-options.js';
import { dropPartitions, takePartitions, type HandedOver } from './handover.js';
import { openDatabase } from './pg-open.js';
import { PgCheckpoints } from './pg-checkpoints.js';
import type { DirtyExecutions } from './pg-execution-rows.js';
import { partitionOfExecution, COMMONS_PARTITION, type PartitionLayout } from './partition-state.js';

export type { PgStoreCounters, PgStoreHealth, PgStoreOptions } from './pg-store-options.js';
export class PgStore<S, R> extends RecordStore<S, R> {
  /** Where commits go: their partitions' journals (lastSeqs, the shared journal's numbering). */
  private readonly journal: JournalWriter<R>;
  /** What other daemons write to the partitions this store reads and does not hold (followed-partitions.ts). */
  private readonly followed: FollowedPartitions<S, R>;
  /** The partitions' snapshots, and the checkpoints that write them. */
  private readonly checkpoints: PgCheckpoints<S, R>;
  /** The executions changed since their rows were written (pg-execution-rows.ts). */
  private readonly dirty: DirtyExecutions;
  /** The executions that may leave memory, read back from their rows (PgStoreOptions.rows): a lazy load's. */
  readonly evictable: EvictableEntries | null;
  private coldGuard: ((key: string) => void) | null = null;
  /** Executions of diverted transactions not settled yet: their rows wait (unjournaled.ts). */
  private readonly unjournaled: Unjournaled<S, R>;
  /** What partitions taken and given up share of this store (handover.ts). */
  private readonly handover: HandedOver<S, R>;

  /** What reached the database, for status and the benchmarks; `changed`: executions to write at the next checkpoint. */
  get counters(): PgStoreCounters & { readonly changed: number } {
    return { ...this.journal.counters, changed: this.dirty.size };
  }

  private constructor(
    private readonly pool: pg.Pool,
    private readonly lease: PartitionLease,
    private readonly options: PgStoreOptions<S, R>,
    /** How the state is cut into partitions. */
    readonly layout: PartitionLayout<S, R>,
    loaded: JournalFollower<S, R>,
  ) {
    super(loaded.state, options, options.logger ?? silentLogger);
    this.dirty = loaded.dirty;
    this.unjournaled = new Unjournaled(layout, this.dirty, (key, id) => this.entryGone(key, id));
    this.journal = new JournalWriter(pool, lease, layout, options, loaded.lastSeqs, {
      fail: (what, err, code) => this.fail(what, err, code),
      failure: () => this.failure,
    });
    this.partitioning =
      layout.count > 1 && layout.collection
        ? {
            all: Array.from({ length: layout.count - 1 }, (_, i) => i + 1),
            of: (id) => partitionOfExecution(layout, id),
            serves: (p) => this.serves(p),
          }
        : undefined;
    this.newExecutionId =
      layout.count > 1 && layout.collection
        ? partitionedIds(layout.count, () => lease.partitions.filter((p) => p !== 0 && !this.journal.moving.has(p)))
        : undefined;
    const parts = {
      pool,
      lease,
      journal: this.journal,
      options,
      layout,
      state: this.state,
      logger: this.logger,
      follower: () => this.followed.current,
      flush: () => this.flush(),
      fail: (what: string, err: unknown, code?: ErrorCode) => this.fail(what, err, code),
      failure: () => this.failure,
    };
    this.followed = new FollowedPartitions({ ...parts, alone: () => this.alone });
    this.checkpoints = new PgCheckpoints(
      { ...parts, dirty: this.dirty, unjournaled: (id) => this.unjournaled.has(id), alone: () => this.alone },
      loaded,
    );
    const guard = (fn: (key: string) => void): void => void (this.coldGuard = fn);
    const port = { pool, layout, dirty: this.dirty, checkpoints: this.checkpoints, guard };
    const holds = { serves: (p: number) => this.serves(p), epochOf: (p: number) => this.lease.epochOf(p) };
    this.evictable = loaded.unread && options.rows!.evictable({ ...port, ...holds, unread: loaded.unread });
    this.handover = {
      ...parts,
      checkpoints: this.checkpoints,
      evictable: () => this.evictable,
      followOthers: (from) => this.followed.follow(from),
      lastSeqOf: (p) => this.lastSeqOf(p),
    };
    this.followed.follow(loaded.lastSeqs, false);
    // Failed, nothing more is acknowledged: writes held in a partitioned network are not waited for.
    this.onFailure((err) => [this.journal, this.historyStore, this.auditStore].forEach((w) => w?.abandon(err)));
  }

  /** Whether this store holds every partition: no other daemon's store writes any of the state. */
  private get alone(): boolean {
    return this.lease.partitions.length === this.layout.count;
  }

  /**
   * Connects, migrates the schema, takes the lease, then loads the snapshot and replays the
   * journal after it (in that order: what it loads cannot move on under it). A standby loads
   * first and follows the journal while it waits, then replays only what it had not applied when
   * the lease was taken. Throws WfxError
   * DATABASE_UNREACHABLE, DATABASE_TOO_NEW, DATABASE_IN_USE, SNAPSHOT_CORRUPT or JOURNAL_CORRUPT.
   */
  static async open<S, R>(options: PgStoreOptions<S, R>): Promise<PgStore<S, R>> {
    let store: PgStore<S, R> | null = null;
    const { pool, lease, layout, loaded, replayed, warm } = await openDatabase(options, (err) =>
      store?.fail('the lease was lost', err, 'STORE_LEASE_LOST'),
    );
    try {
      store = new PgStore(pool, lease, options, layout, loaded);
      store.followed.start();
      (options.logger ?? silentLogger).info(
        {
          partitions: layout.count,
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
      await lease.release().catch(() => undefined);
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
    const partitionOf = (id: string) => partitionOfExecution(this.layout, id);
    const fence = { owner: this.options.owner, partitionOf, epochOf: (p: number) => this.lease.epochOf(p) };
    return (this.historyStore ??= new PgHistory(this.pool, fence, (err, fenced) =>
      fenced ? this.fail('a history write was fenced', err, 'STORE_LEASE_LOST') : err,
    ));
  }

  private auditStore: PgAuditTrail | null = null;

  /** The audit trail in this database (pg-audit.ts). */
  auditTrail(): PgAuditTrail {
    return (this.auditStore ??= new PgAuditTrail(this.pool));
  }

  /** The file store's content in this database (pg-blobs.ts). */
  blobs(): PgBlobs {
    return new PgBlobs(this.pool);
  }

  /** Rate limits counted in this database, for daemons sharing it (pg-rate-limits.ts). */
  rateLimits(): PgRateLimits {
    return new PgRateLimits(this.pool);
  }

  /** Claims on kept messages in this database, for daemons sharing it (pg-message-claims.ts). */
  messageClaims(): PgMessageClaims {
    return new PgMessageClaims(
      this.pool,
      {
        owner: this.options.owner,
        partitionOf: (id) => partitionOfExecution(this.layout, id),
        epochOf: (partition) => this.lease.epochOf(partition),
      },
      (seq) => this.followedTo(seq, COMMONS_PARTITION),
    );
  }

  /** Calls `listener` with the records of each shared entry another daemon wrote, once applied here. */
  onOthersShared(listener: (records: readonly R[]) => void): void {
    this.followed.onOthersShared(listener);
  }

  /**
   * A new execution's id (DurableStore.newExecutionId): a child's in its parent's partition, a
   * root's in one of the execution partitions this store holds (all of them, for now).
   */
  readonly newExecutionId: ((now: Date, parentInstanceId: string | null) => string) | undefined;

  /** The execution partitions (DurableStore.partitioning): 1..n-1 when the state is cut, else none. */
  readonly partitioning: ExecutionPartitions | undefined;

  /** Journal entries written or read so far, summed over the partitions (each one's last seq). */
  get lastSeq(): number {
    let sum = this.journal.shared?.seq ?? 0;
    for (let p = 0; p < this.layout.count; p++) sum += this.lastSeqOf(p);
    return sum;
  }

  /** The last journal entry of `partition` (COMMONS_PARTITION too) this store wrote or read. */
  lastSeqOf(partition: number): number {
    return this.followed.lastSeqOf(partition);
  }

  /** Resolves once this store's copy of `partition` (0, or COMMONS_PARTITION) has come to entry `seq` (FollowedPartitions.followedTo). */
  followedTo(seq: number, partition = 0): Promise<boolean> {
    return this.followed.followedTo(seq, partition);
  }

  /** GET /health's `store`: the lease this daemon holds. */
  health(): PgStoreHealth {
    return { kind: 'postgres', epoch: this.lease.epoch, ...this.lease.health() };
  }

  /** Whether this store serves `partition` now: holds it, and it is not moving in or out. */
  serves(partition: number): boolean {
    return this.lease.partitions.includes(partition) && !this.journal.moving.has(partition);
  }

  /** The partitions this store holds, in order. */
  get held(): readonly number[] {
    return this.lease.partitions;
  }

  /** The epoch of this daemon's lease: what its writes carry. */
  get epoch(): number {
    return this.lease.epoch;
  }

  override transact<T>(fn: () => Decided<T, R>, divert?: Divert<R>): Transaction<T, R> {
    return this.unjournaled.track(super.transact(fn, divert));
  }

  protected override beforeApply(record: R): void {
    if (this.coldGuard) this.layout.collection?.touched(record, this.coldGuard);
  }

  /** Once `record` is applied: its executions marked changed for the next checkpoint's rows. */
  protected override afterApply(record: R): void {
    this.dirty.touch(this.layout, record);
  }

  protected append(serialized: readonly string[], records: readonly R[]): Promise<void> {
    let added: ReturnType<JournalWriter<R>['add']>;
    try {
      added = this.journal.add(serialized, records);
    } catch (err) {
      return Promise.reject(this.fail('a commit could not be cut into partitions', err));
    }
    this.checkpoints.journaled(added.entries, added.bytes);
    return added.durable;
  }

  /** Takes execution partitions `partitions` while running: all or none (handover.ts, takePartitions). */
  take(partitions: readonly number[], loaded: (ids: string[]) => void): Promise<boolean> {
    return takePartitions(this.handover, partitions, loaded);
  }

  /** Gives execution partitions `partitions` up while running (handover.ts, dropPartitions). */
  drop(
    partitions: readonly number[],
    hooks: { leaving?: () => void; left?: () => void; settled?: () => Promise<void> } = {},
  ): Promise<void> {
    return dropPartitions(this.handover, partitions, hooks);
  }

  /** Resolves once everything committed so far is durable (diverted transactions too). */
  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    await this.journal.flush();
    await this.diverted.idle();
    if (this.failure) throw this.failure;
  }

  /**
   * Writes the state as of now as the partitions' snapshots and deletes the journal they cover
   * (PgCheckpoints.checkpoint): one checkpoint at a time.
   */
  checkpoint(): Promise<void> {
    return this.checkpoints.checkpoint();
  }

  /**
   * Flushes, checkpoints unless told not to, gives up the lease and disconnects. A failed store
   * waits for no round trip to the database: a partitioned network may hold one for as long as
   * the query timeout, and the daemon's stop and port with it (#83).
   */
  async close(options: { checkpoint?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    if (!this.failure) await this.diverted.idle();
    if (!this.failure) await this.checkpoints.running?.catch(() => undefined);
    await this.flush().catch(() => undefined);
    if (!this.failure && options.checkpoint !== false) await this.checkpoint().catch(() => undefined);
    this.closed = true;
    const ending = (async () => {
      await this.followed.stop();
      await this.journal.idle();
      await this.historyStore?.close();
      await this.auditStore?.close();
      await this.lease.release().catch(() => undefined);
      await this.pool.end();
    })().catch(() => undefined);
    if (!this.failure) await ending;
  }
}
