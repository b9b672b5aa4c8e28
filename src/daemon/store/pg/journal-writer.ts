/**
 * Where a PostgreSQL store's commits go: each commit cut into one journal entry per partition it
 * changes (partition-state.ts), each given its partition's next seq, and every entry waiting
 * written by one fenced INSERT (fenced-sql.ts), one at a time (group commit). The shared
 * partition's entries are numbered by the database; this store's part in that numbering is its
 * SharedJournal.
 */
import type pg from 'pg';
import type { ErrorCode, WfxError } from '../../../shared/errors.js';
import { APPEND, APPEND_NOTIFY } from './fenced-sql.js';
import { GroupCommit } from './group-commit.js';
import { describePartitions, type PartitionLease } from './lease.js';
import { cutCommit, hasShared, COMMONS_PARTITION, type PartitionLayout } from './partition-state.js';
import type { PgStoreCounters } from './pg-store-options.js';
import { SharedJournal } from './shared-journal.js';

/** A group commit's cap, so one INSERT stays a reasonable size; the rest goes in the next. */
const BATCH_ENTRIES = 2_000;
const BATCH_BYTES = 8 * 1024 * 1024;

/** One journal entry: the records of one commit that change one partition. */
interface Entry {
  readonly partition: number;
  readonly seq: number;
  readonly entry: string;
}

/** The store's failure, crash-only (RecordStore): `fail` fails it for good; `failure` is why, once failed. */
interface Failing {
  readonly fail: (what: string, cause: unknown, code?: ErrorCode) => WfxError;
  readonly failure: () => WfxError | null;
}

export class JournalWriter<R> {
  /** Per partition number: the last entry written (for a partition not held: as loaded). */
  readonly lastSeqs: number[];
  /** This store's part in the shared journal; null without a shared partition. */
  readonly shared: SharedJournal<R> | null;
  readonly counters: PgStoreCounters = { appends: 0, entries: 0, bytes: 0, checkpoints: 0 };
  /**
   * Partitions being taken or given up (PgStore.take, drop): a commit changing one is refused,
   * no execution is started in one, no checkpoint writes one.
   */
  readonly moving = new Set<number>();
  /** Each commit's entries: written in one statement with the rest of its batch, all or none. */
  private readonly batches = new GroupCommit<readonly Entry[]>(
    (commits) => this.write(commits.flat()),
    { items: BATCH_ENTRIES, bytes: BATCH_BYTES },
    (entries) => entries.reduce((n, e) => n + e.entry.length, 0),
  );

  constructor(
    private readonly pool: pg.Pool,
    private readonly lease: PartitionLease,
    private readonly layout: PartitionLayout<unknown, R>,
    private readonly options: { readonly owner: string; readonly followed?: () => boolean },
    loadedSeqs: ReadonlyMap<number, number>,
    private readonly store: Failing,
  ) {
    this.lastSeqs = Array.from({ length: layout.count }, (_, p) => loadedSeqs.get(p) ?? 0);
    this.shared = hasShared(layout)
      ? new SharedJournal(layout.shared!.touched, loadedSeqs.get(COMMONS_PARTITION) ?? 0)
      : null;
  }

  /**
   * Adds a commit (its records applied already): resolves once durable. Throws, adding
   * nothing, for a commit that cannot be cut into partitions or changes one this store does
   * not hold.
   */
  add(
    serialized: readonly string[],
    records: readonly R[],
  ): { durable: Promise<void>; bytes: number; entries: number } {
    const held = this.lease.partitions;
    const cut = cutCommit(this.layout, serialized, records);
    for (const { partition } of cut)
      if (
        partition !== COMMONS_PARTITION &&
        ((held.length < this.layout.count && !held.includes(partition)) || this.moving.has(partition))
      )
        throw new Error(`the commit changes partition ${partition}, which this daemon does not hold`);
    let bytes = 0;
    const entries = cut.map(({ partition, entry }): Entry => {
      bytes += entry.length;
      // The shared partition's are numbered by the database: 0 until then.
      return { partition, seq: partition === COMMONS_PARTITION ? 0 : ++this.lastSeqs[partition]!, entry };
    });
    if (entries.some((e) => e.partition === COMMONS_PARTITION)) this.shared!.appended(records);
    return { durable: this.batches.add(entries), bytes, entries: entries.length };
  }

  /** Resolves once everything added so far is written; rejects if the last batch failed. */
  flush(): Promise<void> {
    return this.batches.flush();
  }

  /** Resolves once no write is under way (at once once abandoned). */
  idle(): Promise<void> {
    return this.batches.idle();
  }

  /** Rejects the entries waiting and in flight, and every later one (the store failed: GroupCommit.abandon). */
  abandon(err: unknown): void {
    this.batches.abandon(err);
  }

  /** One group commit of journal entries, fenced (APPEND); a failure fails the store. */
  private async write(entries: readonly Entry[]): Promise<void> {
    const failure = this.store.failure();
    if (failure) throw failure;
    // Fenced on the leases of the partitions written; a batch of shared entries alone on the
    // store's first lease, so that a daemon holding none writes nothing.
    const written = [...new Set(entries.map((e) => e.partition).filter((p) => p !== COMMONS_PARTITION))];
    const partitions =
      written.length > 0
        ? written
        : [this.lease.partitions.find((p) => !this.moving.has(p)) ?? this.lease.partitions[0]!];
    let shared = 0;
    const seqs = entries.map((e) => (e.partition === COMMONS_PARTITION ? ++shared : e.seq));
    const epochOf = (p: number): number => this.lease.epochOf(p === COMMONS_PARTITION ? partitions[0]! : p);
    let result: pg.QueryResult<{ partition: number; seq: string }>;
    try {
      // Other daemons follow the shared partition and partition 0 whenever one holds partitions.
      const notify = this.options.followed?.() !== false || this.lease.partitions.length < this.layout.count;
      result = await this.pool.query(notify ? APPEND_NOTIFY : APPEND, [
        this.options.owner,
        partitions,
        partitions.map((p) => this.lease.epochOf(p)),
        entries.map((e) => e.partition),
        seqs,
        entries.map((e) => epochOf(e.partition)),
        entries.map((e) => e.entry),
        shared,
      ]);
    } catch (err) {
      throw this.store.fail('a journal write to the database failed', err);
    }
    if (result.rowCount !== entries.length) {
      throw this.store.fail(
        'a journal write was fenced',
        new Error(`${describePartitions(partitions)} no longer carry this daemon's epochs`),
        'STORE_LEASE_LOST',
      );
    }
    if (shared > 0) {
      const numbered = result.rows.filter((r) => r.partition === COMMONS_PARTITION).map((r) => Number(r.seq));
      this.shared!.numberedAs(numbered.sort((a, b) => a - b));
    }
    this.counters.appends++;
    this.counters.entries += entries.length;
    for (const e of entries) this.counters.bytes += e.entry.length;
  }
}
