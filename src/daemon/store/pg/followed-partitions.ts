/**
 * The partitions a PostgreSQL store reads but does not hold, followed into its live state: partition
 * 0 while another daemon holds it, and the shared partition, which every sharing daemon writes
 * (shared-journal.ts, decision 039). One JournalFollower over them, made once the store holds
 * fewer than all the partitions (at the open, or when it gives some up: handover.ts); the shared
 * entries other daemons wrote told to who listens; a store's wait for its copy to come to an
 * entry another daemon answered (decision 042). The store's fields come through FollowingStore.
 */
import { DEFAULT_LEASE_MS } from './lease.js';
import { JournalFollower } from './journal-follower.js';
import { COMMONS_PARTITION } from './partition-state.js';
import type { CheckpointedStore } from './pg-checkpoints.js';

/** What of its store the following reads and calls (PgStore's fields). */
export type FollowingStore<S, R> = Pick<
  CheckpointedStore<S, R>,
  'pool' | 'lease' | 'journal' | 'options' | 'layout' | 'state' | 'logger' | 'fail' | 'alone'
>;

/** What other daemons write to the partitions a store reads and does not hold, followed. */
export class FollowedPartitions<S, R> {
  /** Follows what other daemons write to partitions this store reads but does not hold; null when it holds them all. */
  private follower: JournalFollower<S, R> | null = null;
  /** Told of the shared entries other daemons wrote (onOthersShared). */
  private readonly othersShared: Array<(records: readonly R[]) => void> = [];

  constructor(private readonly store: FollowingStore<S, R>) {}

  /** The follower of what others write, null when the store holds every partition. */
  get current(): JournalFollower<S, R> | null {
    return this.follower;
  }

  /**
   * Follows what other daemons write to the partitions this store reads but does not hold
   * (partition 0, the shared partition), from `lastSeqs`, once it does not hold them all;
   * `start`: at once (else `start()` does). The store is failed if its copy breaks.
   */
  follow(lastSeqs: ReadonlyMap<number, number>, start = true): void {
    const { store } = this;
    if (store.alone() || this.follower) return;
    const shared = store.journal.shared;
    const read = [...(store.lease.partitions.includes(0) ? [] : [0]), ...(shared ? [COMMONS_PARTITION] : [])];
    const owner = store.options.owner;
    this.follower = JournalFollower.over(
      store.pool,
      {
        ...store.layout,
        partitions: read,
        apply: store.options.apply,
        ...(shared && {
          admitShared: (seq, records, writer) => {
            const admitted = shared.admit(seq, records, writer === owner);
            // Told once the follower has applied them (it does, before its next await).
            if (writer !== owner && admitted.length > 0 && this.othersShared.length > 0)
              queueMicrotask(() => {
                for (const listener of this.othersShared) listener(records);
              });
            return admitted;
          },
          sharedLive: true,
        }),
      },
      { state: store.state, lastSeqs: new Map(read.map((p) => [p, lastSeqs.get(p) ?? 0])) },
    );
    if (start) this.start();
  }

  /** Starts the following (see `follow`). */
  start(): void {
    const { options, logger } = this.store;
    this.follower?.follow(options.connectionString, (options.leaseMs ?? DEFAULT_LEASE_MS) / 3, logger, (err) =>
      this.store.fail('the copy of what other daemons write broke', err),
    );
  }

  /** Calls `listener` with the records of each shared entry another daemon wrote, once applied here. */
  onOthersShared(listener: (records: readonly R[]) => void): void {
    this.othersShared.push(listener);
  }

  /** The last journal entry of `partition` (COMMONS_PARTITION too) the store wrote or read. */
  lastSeqOf(partition: number): number {
    const { journal, lease } = this.store;
    if (partition === COMMONS_PARTITION) return journal.shared?.seq ?? 0;
    // Partition 0 not held moves on as followed.
    if (partition === 0 && this.follower && !lease.partitions.includes(0)) return this.follower.lastSeqs.get(0) ?? 0;
    return journal.lastSeqs[partition] ?? 0;
  }

  /**
   * Resolves once the store's copy of `partition` (0, or COMMONS_PARTITION) has come to entry
   * `seq`: a directory write another daemon made and answered, read back here after (decision
   * 042), or every shared entry before a claim (pg-message-claims.ts). At once when it holds the
   * partition or has come there; otherwise after reading the journal (a few reads at most: the
   * entry was committed before the answer that named it). False when it has not come there.
   */
  async followedTo(seq: number, partition = 0): Promise<boolean> {
    for (let read = 0; read < 3 && this.lastSeqOf(partition) < seq && this.follower; read++)
      await this.follower.catchUp();
    // Without a follower this store holds every partition: nobody else writes any.
    return this.lastSeqOf(partition) >= seq || !this.follower;
  }

  /** Stops following, once a catch-up under way is done. */
  async stop(): Promise<void> {
    await this.follower?.stop();
  }
}
