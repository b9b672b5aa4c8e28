/**
 * Partitions' state as the database has it: their snapshots and the journal entries after them,
 * applied through the store's reducer. A daemon opening the store loads it once (a cold start);
 * a standby keeps it current while it waits for the lease (a warm standby: `follow`), woken by
 * the NOTIFY each group commit sends and, in case one is missed, every third of a lease
 * (journal-listener.ts). Once the standby holds the lease, one last `catchUp` reads what was appended since;
 * nothing more can be appended by the old owner then (its appends are fenced), so the takeover
 * replays only that tail instead of loading the whole state. Like a follower of Zeebe's
 * partitions, a standby pays the state's memory to make a takeover short.
 *
 * A checkpoint deletes the entries its snapshot covers: a follower that finds its next entry
 * gone loads the newer snapshot instead (a gap the snapshot does not cover is JOURNAL_CORRUPT).
 */
import type pg from 'pg';
import { errorMessage, WfxError } from '../../../shared/errors.js';
import type { StoreLogger } from '../durable-store.js';
import { JournalListener } from './journal-listener.js';
import { replacePartition, COMMONS_PARTITION, type PartitionLayout } from './partition-state.js';
import type { ExecutionSummary } from '../../state/execution-summary.js';
import type { ExecutionIndex } from '../../state/execution-index/execution-index.js';
import { DirtyExecutions, holdsExecutions, readRows } from './pg-execution-rows.js';
import type { LazyRows, PgRowsAtRest } from './rows-at-rest-port.js';
import { inTransaction } from './transaction.js';

/** Journal rows read per query. */
const PAGE_ROWS = 5_000;

export interface FollowerOptions<S, R> extends PartitionLayout<S, R> {
  /** The partitions followed, in the order their entries are applied: partition 0 first, then the shared one. */
  readonly partitions: readonly number[];
  readonly apply: (state: S, record: R) => void;
  /**
   * The records of entry `seq` of the shared partition (written by daemon `writer`) to apply,
   * all of them if absent: a store that writes the shared partition too leaves out what its own
   * writes decide (shared-journal.ts).
   */
  readonly admitShared?: (seq: number, records: R[], writer: string | null) => readonly R[];
  /**
   * With `admitShared`: the shared partition's snapshot is never loaded over the state (it
   * would drop what this store wrote since): finding its next entry deleted breaks the copy.
   * Checkpoints keep the shared journal a checkpoint longer than they must (pg-store.ts), so
   * only a store that stopped following for that long finds such a gap.
   */
  readonly sharedLive?: boolean;
  /**
   * Load executions lazily (decision 077): a partition's rows as summaries into `unread`, and
   * each document only once an entry applied changes it. Needs the collection's `adopt`.
   */
  readonly lazy?: boolean;
  /** The executions at rest on the database (PgStoreOptions.rows): needed with `lazy`. */
  readonly rows?: PgRowsAtRest | undefined;
  /**
   * With `lazy` and the collection's `evict`: the summary of an execution, for one the copy lets
   * go of once a checkpoint of its owner wrote it (see `settle`).
   */
  readonly summarize?: (execution: unknown, state: S) => ExecutionSummary;
}

/** Where a follower of a live store's state starts: the state, and what it holds of each partition followed. */
export interface FollowFrom<S> {
  readonly state: S;
  readonly lastSeqs: ReadonlyMap<number, number>;
  /** Partitions the state holds nothing of yet: loaded into it (see replacePartition). */
  readonly absent?: readonly number[];
}

// What changed in each partition followed, read in the same transaction as the entries: whether
// it has entries after the last applied, and its snapshot's seq (newer: a checkpoint happened).
const PROBE = `
  SELECT w.partition,
         EXISTS (SELECT 1 FROM wfx_journal j WHERE j.partition = w.partition AND j.seq > w.after) AS entries,
         (SELECT s.seq FROM wfx_snapshots s WHERE s.partition = w.partition) AS snapshot
    FROM unnest($1::int[], $2::bigint[]) AS w(partition, after)
   ORDER BY array_position($1::int[], w.partition)`;

export class JournalFollower<S, R> {
  /** What wakes this follower to catch up (journal-listener.ts). */
  private readonly listener: JournalListener;
  /** The catch-up under way or last done (they run one at a time). */
  private catchingUp: Promise<unknown> = Promise.resolve();
  private brokenBy: unknown = null;
  private onBroken: ((err: unknown) => void) | undefined;

  /** The state as of the entries applied (a snapshot loaded replaces its partition in place). */
  readonly state: S;
  /** Per partition: the last journal entry applied. */
  readonly lastSeqs = new Map<number, number>();
  /** Per partition: the sequence number of the snapshot its state grew from. */
  readonly snapshotSeqs = new Map<number, number>();
  /** Per partition: the size of its snapshot loaded, its execution rows included. */
  readonly snapshotSizes = new Map<number, number>();
  /** Per partition: how many execution rows its snapshot has (pg-execution-rows.ts). */
  readonly rowCounts = new Map<number, number>();
  /**
   * The executions changed since their rows were written: by the entries applied after a
   * snapshot, or held in the snapshot itself (one written before the rows existed).
   */
  readonly dirty = new DirtyExecutions();
  /** Partitions whose state holds nothing yet (loaded in place: see replacePartition). */
  private readonly absent: Set<number>;
  /**
   * A lazy follower's executions that are not in the state, their summaries (`rows`' LazyRows):
   * what a store built on this state hands its engine's cache. Null: every execution is loaded.
   */
  readonly unread: ExecutionIndex | null;
  /** What loads lazily, when the follower does. */
  private readonly lazy: LazyRows<R> | null;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly options: FollowerOptions<S, R>,
    from?: FollowFrom<S>,
  ) {
    this.state = from?.state ?? options.initialState();
    for (const p of options.partitions) {
      this.lastSeqs.set(p, from?.lastSeqs.get(p) ?? 0);
      this.snapshotSeqs.set(p, 0);
    }
    this.absent = new Set(from ? (from.absent ?? []) : options.partitions);
    const lazy = options.lazy && options.collection?.adopt;
    if (lazy && options.rows === undefined)
      throw new WfxError('INTERNAL_ERROR', 'a store that loads its executions lazily is opened without their rows');
    this.lazy = lazy ? options.rows!.lazyRows(options, this.state) : null;
    this.unread = this.lazy?.unread ?? null;
    this.listener = new JournalListener({
      partitions: options.partitions,
      catchUp: () => this.catchUp(),
      broken: () => this.brokenBy,
      told: () => this.onBroken !== undefined,
    });
  }

  /**
   * A follower of partitions into a state that holds them already, as of `from.lastSeqs`: a
   * store's live state, kept current with what other daemons write (partition 0 when another
   * daemon holds it, the shared partition).
   */
  static over<S, R>(pool: pg.Pool, options: FollowerOptions<S, R>, from: FollowFrom<S>): JournalFollower<S, R> {
    return new JournalFollower(pool, options, from);
  }

  /** Loads the snapshots and the journal after them. Throws SNAPSHOT_CORRUPT or JOURNAL_CORRUPT. */
  static async load<S, R>(pool: pg.Pool, options: FollowerOptions<S, R>): Promise<JournalFollower<S, R>> {
    const follower = new JournalFollower(pool, options);
    await follower.catchUp();
    return follower;
  }

  /** The entries applied, summed over the partitions (each partition's last seq). */
  get lastSeq(): number {
    let sum = 0;
    for (const seq of this.lastSeqs.values()) sum += seq;
    return sum;
  }

  /** The snapshots' seqs, summed over the partitions: `lastSeq - snapshotSeq` entries were replayed. */
  get snapshotSeq(): number {
    let sum = 0;
    for (const seq of this.snapshotSeqs.values()) sum += seq;
    return sum;
  }

  /**
   * Why this copy cannot be trusted (a corrupt journal or snapshot, or a record its reducer
   * refused, perhaps after applying part of an entry); null while it can. A broken copy stops
   * following, and a takeover loads the state afresh instead.
   */
  get broken(): unknown {
    return this.brokenBy;
  }

  /**
   * Applies the entries appended since the last one applied; returns how many. An entry missing
   * at the front that a newer snapshot covers (a checkpoint deleted it) loads that snapshot. A
   * query that fails leaves the copy as it was (tried again later); anything else breaks it.
   */
  catchUp(): Promise<number> {
    // One at a time (a store's checkpoint asks for one while following runs its own).
    const next = this.catchingUp.then(() => this.catchUpAlone());
    this.catchingUp = next.catch(() => undefined);
    return next;
  }

  /** The copy cannot be trusted from now on: said once to whoever follows (`follow`'s onBroken). */
  private broke(err: unknown): void {
    if (this.brokenBy) return;
    this.brokenBy = err;
    this.onBroken?.(err);
  }

  private async catchUpAlone(): Promise<number> {
    if (this.brokenBy) throw this.brokenBy;
    try {
      return await this.catchUpOnce();
    } catch (err) {
      // A corrupt journal or snapshot; a reducer's refusal was marked where it was thrown.
      if (err instanceof WfxError) this.broke(err);
      throw err;
    }
  }

  /**
   * One catch-up, read in one REPEATABLE READ transaction: every partition as of the same
   * moment. An entry of partition p is applied only with every entry committed before it in
   * the partitions before p (partition 0's flows, say, before the executions that run them).
   */
  private catchUpOnce(): Promise<number> {
    return inTransaction(
      this.pool,
      async (client) => {
        const { partitions } = this.options;
        const probe = await client.query<{ partition: number; entries: boolean; snapshot: string | null }>(PROBE, [
          partitions,
          partitions.map((p) => this.lastSeqs.get(p)!),
        ]);
        let applied = 0;
        for (const row of probe.rows) {
          const last = this.lastSeqs.get(row.partition)!;
          // A partition not loaded yet loads a snapshot even at its seq (one written before any entry).
          const snapshot = row.snapshot === null ? -1 : Number(row.snapshot);
          if (row.entries || snapshot > last || (snapshot === last && this.absent.has(row.partition)))
            applied += await this.catchUpPartition(client, row.partition, snapshot >= 0);
          // Its owner checkpointed, and this copy has applied what the checkpoint covers.
          const p = row.partition;
          if (snapshot > this.snapshotSeqs.get(p)! && snapshot <= this.lastSeqs.get(p)! && this.lazy?.settles) {
            this.dirty.unmark(this.lazy.settle(p, snapshot));
            this.snapshotSeqs.set(p, snapshot);
          }
        }
        return applied;
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }

  private async catchUpPartition(client: pg.ClientBase, partition: number, snapshot: boolean): Promise<number> {
    let applied = 0;
    // Not loaded yet: its snapshot first, whatever entries follow (one at seq 0 precedes entry 1).
    if (snapshot && this.absent.has(partition)) await this.loadSnapshot(client, partition);
    for (;;) {
      const after = this.lastSeqs.get(partition)!;
      const page = await client.query<{ seq: string; entry: string; writer: string | null }>(
        'SELECT seq, entry, writer FROM wfx_journal WHERE partition = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [partition, after, PAGE_ROWS],
      );
      const first = page.rows[0];
      if (!first || Number(first.seq) !== after + 1) {
        // Nothing new, or the next entry is gone: a checkpoint since may have covered it.
        if (await this.loadSnapshot(client, partition)) continue;
        if (first)
          throw new WfxError('JOURNAL_CORRUPT', `journal entry ${after + 1} of partition ${partition} is missing`);
        return applied;
      }
      const entries = page.rows.map((row) => ({ ...row, records: parseEntry<R>(row.entry, row.seq, partition) }));
      const rows = holdsExecutions(this.options, partition);
      if (rows) await this.lazy?.readBack(client, partition, entries);
      for (const { seq: at, records, writer } of entries) {
        const seq = Number(at);
        const expected = this.lastSeqs.get(partition)! + 1;
        if (seq !== expected)
          throw new WfxError('JOURNAL_CORRUPT', `journal entry ${expected} of partition ${partition} is missing`);
        try {
          const admitted =
            partition === COMMONS_PARTITION && this.options.admitShared
              ? this.options.admitShared(seq, records, writer)
              : records;
          for (const record of admitted) {
            this.options.apply(this.state, record);
            if (rows) this.dirty.touch(this.options, record);
            if (rows) this.lazy?.touched(record, seq);
          }
        } catch (err) {
          this.broke(err); // part of the entry may be applied: the copy is no longer the journal's
          throw err;
        }
        this.lastSeqs.set(partition, seq);
        this.absent.delete(partition);
        applied++;
      }
      if (page.rows.length < PAGE_ROWS) return applied;
    }
  }

  /**
   * Keeps the state current until `stop`: a catch-up on each NOTIFY of the partition and every
   * `everyMs`. A catch-up that fails (the database unreachable for a while) is tried again at
   * the next; a broken copy stops following (`broken`).
   */
  follow(connectionString: string, everyMs: number, logger: StoreLogger, onBroken?: (err: unknown) => void): void {
    this.onBroken = onBroken;
    this.listener.follow(connectionString, everyMs, logger);
  }

  /** Waits `ms`, or less if the partition's lease is released meanwhile (JournalListener.pause). */
  pause(ms: number, signal?: AbortSignal): Promise<void> {
    return this.listener.pause(ms, signal);
  }

  /** Stops following and waits for a catch-up under way; the state stays as it is. */
  stop(): Promise<void> {
    return this.listener.stop();
  }

  /** Loads the partition's snapshot if it is newer than its state; true if it did. */
  private async loadSnapshot(client: pg.ClientBase, partition: number): Promise<boolean> {
    const { rows } = await client.query<{ seq: string; state: string }>(
      'SELECT seq, state FROM wfx_snapshots WHERE partition = $1 AND (seq > $2 OR (seq = $2 AND $3))',
      [partition, this.lastSeqs.get(partition)!, this.absent.has(partition)],
    );
    const row = rows[0];
    if (!row) return false;
    if (partition === COMMONS_PARTITION && this.options.sharedLive && !this.absent.has(partition))
      throw new WfxError(
        'STORE_FAILED',
        `the shared journal was checkpointed past entry ${this.lastSeqs.get(partition)! + 1} before this daemon read it`,
      );
    let saved: unknown;
    try {
      saved = JSON.parse(row.state);
    } catch (err) {
      throw new WfxError(
        'SNAPSHOT_CORRUPT',
        `the snapshot of partition ${partition} does not parse: ${errorMessage(err)}`,
      );
    }
    // The executions are rows beside it; one written before them holds its own, moved into rows by the next checkpoint.
    const withRows = holdsExecutions(this.options, partition) && typeof saved === 'object' && saved !== null;
    let inline: string[] = [];
    let read: { rows: number; bytes: number; whole?: string[] } = { rows: 0, bytes: 0 };
    if (withRows) {
      const key = this.options.collection!.key;
      const holder = saved as Record<string, unknown>;
      const held = holder[key];
      const entries: Record<string, unknown> = typeof held === 'object' && held !== null ? { ...held } : {};
      inline = Object.keys(entries);
      try {
        if (this.lazy) read = await this.lazy.load(client, partition, entries, !this.absent.has(partition));
        else read = await readRows(client, partition, entries);
      } catch (err) {
        if (!(err instanceof SyntaxError)) throw err;
        throw new WfxError('SNAPSHOT_CORRUPT', `partition ${partition}: ${errorMessage(err)}`);
      }
      holder[key] = entries;
    }
    try {
      replacePartition(this.state, this.options, partition, saved, this.absent.has(partition));
    } catch (err) {
      throw new WfxError('SNAPSHOT_CORRUPT', `the snapshot of partition ${partition} is not one: ${errorMessage(err)}`);
    }
    this.absent.delete(partition);
    const seq = Number(row.seq);
    this.snapshotSeqs.set(partition, seq);
    this.lastSeqs.set(partition, seq);
    this.snapshotSizes.set(partition, row.state.length + read.bytes);
    if (withRows) {
      this.rowCounts.set(partition, read.rows);
      this.dirty.forget(this.options, partition);
      this.dirty.mark(inline);
      // Rows without a whole summary are written again, with one, by the next checkpoint.
      this.dirty.mark(read.whole ?? []);
    }
    return true;
  }
}

/** The records of journal entry `seq` of `partition`. Throws JOURNAL_CORRUPT when it does not parse. */
function parseEntry<R>(entry: string, seq: string, partition: number): R[] {
  try {
    return JSON.parse(entry) as R[];
  } catch (err) {
    throw new WfxError('JOURNAL_CORRUPT', `journal entry ${seq} of partition ${partition} does not parse`, {
      cause: err,
    });
  }
}
