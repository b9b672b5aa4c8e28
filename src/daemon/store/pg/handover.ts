/**
 * Partitions taken and given up while a PostgreSQL store runs (PgStore.take and drop), as a
 * sharing daemon's part changes (cluster/): the leases taken or released, a partition's snapshot
 * and journal loaded beside the live state or written for the next holder to load, and nothing
 * committed to a partition while it moves (JournalWriter.moving). The store's fields they share
 * come through HandedOver.
 */
import type { EvictableEntries } from '../durable-store.js';
import type { CheckpointedStore, PgCheckpoints } from './pg-checkpoints.js';
import { putSnapshots } from './fenced-sql.js';
import { JournalFollower } from './journal-follower.js';
import { DEFAULT_LEASE_MS, describePartitions } from './lease.js';
import {
  executionPartitions,
  partitionOfExecution,
  resetDerived,
  serializePartitions,
  COMMONS_PARTITION,
} from './partition-state.js';

/** What of its store a handover reads and calls (PgStore's fields). */
export interface HandedOver<S, R> extends Pick<
  CheckpointedStore<S, R>,
  'pool' | 'lease' | 'journal' | 'options' | 'layout' | 'state' | 'logger' | 'follower' | 'flush' | 'fail' | 'failure'
> {
  /** The store's checkpoints: a partition taken starts from its snapshot, one given up leaves them. */
  readonly checkpoints: PgCheckpoints<S, R>;
  /** The executions that may leave memory (PgStore.evictable), null when every one is loaded. */
  readonly evictable: () => EvictableEntries | null;
  /** Follows what others write to partition 0 and the shared one from `from`, once it holds fewer than all (PgStore.followOthers). */
  readonly followOthers: (from: ReadonlyMap<number, number>) => void;
  /** The last journal entry of `partition` this store wrote or read (PgStore.lastSeqOf). */
  readonly lastSeqOf: (partition: number) => number;
}

/**
 * Takes execution partitions `partitions` while `store` runs (PgStore.take): their leases (one
 * try, all or none), then, partition 0 read up to now, their snapshots and journals loaded
 * beside the live state (the flows they run read from it; lazily: summaries into
 * `evictable.unread`) and put into it at once, in one turn with `loaded`, given their ids: the
 * state's owner resumes them (the derived keys start over, as after any load). Until then nothing is committed to them, none
 * is started in them, no checkpoint writes them. Resolves false, loading nothing, when
 * another daemon holds one of them.
 */
export async function takePartitions<S, R>(
  store: HandedOver<S, R>,
  partitions: readonly number[],
  loaded: (ids: string[]) => void,
): Promise<boolean> {
  const failure = store.failure();
  if (failure) throw failure;
  const taking = executionPartitions(store.layout, partitions).filter((p) => !store.lease.partitions.includes(p));
  if (taking.length === 0) return true;
  for (const p of taking) store.journal.moving.add(p);
  try {
    if (!(await store.lease.add(taking))) return false;
    const { key } = store.layout.collection!;
    const state = store.state as Record<string, unknown>;
    let follower: JournalFollower<S, R>;
    // The previous holder's entries may start executions of flows it published just before.
    let beside: Record<string, unknown>;
    try {
      await store.follower()?.catchUp();
      // The rest of the state shared (read only: a partition's records change its executions
      // alone), the derived keys its own, since replaying its journal would add to them.
      beside = { ...state, [key]: {} };
      const initial = store.layout.initialState() as Record<string, unknown>;
      for (const k of store.layout.derived ?? []) beside[k] = initial[k];
      const lastSeqs = new Map(taking.map((p) => [p, 0]));
      const lazy = !!store.evictable();
      const load = { ...store.layout, partitions: taking, apply: store.options.apply, lazy, rows: store.options.rows };
      follower = JournalFollower.over(store.pool, load, { state: beside as S, lastSeqs, absent: taking });
      await follower.catchUp();
    } catch (err) {
      // Held and not loaded: the store cannot serve them, nor let another daemon take them now.
      throw store.fail(`loading ${describePartitions(taking)} failed`, err);
    }
    for (const p of taking) store.journal.lastSeqs[p] = follower.lastSeqs.get(p)!;
    store.checkpoints.loadedBy(follower, taking);
    const entries = beside[key] as Record<string, unknown>;
    Object.assign(state[key] as object, entries);
    const cold = store.options.rows?.mergeUnread(follower.unread, store.evictable()?.unread) ?? [];
    resetDerived(store.state, store.layout);
    for (const p of taking) store.journal.moving.delete(p);
    store.logger.info({ partitions: taking }, 'store: took partitions');
    loaded([...Object.keys(entries), ...cold]);
    return true;
  } finally {
    for (const p of taking) store.journal.moving.delete(p);
  }
}

/**
 * Gives execution partitions `partitions` up while `store` runs (PgStore.drop). At once, in one
 * turn: `leaving` is called (their executions still in the state), no commit may change them
 * from now on (one that does fails the store), no execution is started in them, their snapshots are
 * serialized, their executions leave the state (its derived keys start over), and `left` is
 * called. Then, once what was committed to them is durable and `settled` resolves (writes
 * of theirs elsewhere, such as history, done), the snapshots are written and the leases
 * released, so that the next holder loads them from there. Throws a RangeError, changing
 * nothing, for a partition that is not an execution partition or for all of those it holds
 * but partition 0 is not one of them (a lease keeps one).
 */
export async function dropPartitions<S, R>(
  store: HandedOver<S, R>,
  partitions: readonly number[],
  hooks: { leaving?: () => void; left?: () => void; settled?: () => Promise<void> } = {},
): Promise<void> {
  const failure = store.failure();
  if (failure) throw failure;
  const dropping = executionPartitions(store.layout, partitions).filter((p) => store.lease.partitions.includes(p));
  if (dropping.length === store.lease.partitions.length)
    throw new RangeError(`a store keeps one of its partitions: it cannot give up ${describePartitions(dropping)}`);
  hooks.leaving?.();
  if (dropping.length === 0) return hooks.left?.();
  for (const p of dropping) store.journal.moving.add(p);
  const seqs = [...store.journal.lastSeqs];
  const states = serializePartitions(store.state, store.layout, dropping);
  const rows = store.checkpoints.rowsOf(dropping);
  const collection = (store.state as Record<string, Record<string, unknown>>)[store.layout.collection!.key]!;
  for (const id of Object.keys(collection))
    if (dropping.includes(partitionOfExecution(store.layout, id))) delete collection[id];
  store.options.rows?.forgetPartitions(store.evictable()?.unread, store.layout, dropping);
  resetDerived(store.state, store.layout);
  hooks.left?.();
  try {
    await store.checkpoints.running?.catch(() => undefined);
    await hooks.settled?.();
    await store.flush();
    const snapshots = dropping.map((p) => ({
      partition: p,
      seq: seqs[p]!,
      epoch: store.lease.epochOf(p),
      state: states.get(p)!,
    }));
    const fenced = snapshots.map(({ partition, epoch }) => ({ partition, epoch }));
    const written = await putSnapshots(store.pool, {
      owner: store.options.owner,
      fenced,
      snapshots,
      covered: snapshots,
      leaseMs: store.options.leaseMs ?? DEFAULT_LEASE_MS,
      rows,
    });
    if (!written) throw new Error(`${describePartitions(dropping)} no longer carry this daemon's epochs`);
    // No longer held: what the next holder loads sets them again.
    for (const { partition, seq, state } of snapshots) store.checkpoints.snapshotAt(partition, seq, state.length, 0);
    const from = new Map([
      [0, store.lastSeqOf(0)],
      [COMMONS_PARTITION, store.lastSeqOf(COMMONS_PARTITION)],
    ]);
    await store.lease.drop(dropping);
    store.followOthers(from);
  } catch (err) {
    // Gone from the state, and not handed over: the lease lapses, and the next holder replays.
    throw store.fail(`giving up ${describePartitions(dropping)} failed`, err);
  } finally {
    for (const p of dropping) store.journal.moving.delete(p);
  }
  store.logger.info({ partitions: dropping }, 'store: gave partitions up');
}
