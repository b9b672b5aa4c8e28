/**
 * A PostgreSQL store's executions that may leave memory (DurableStore.evictable, decision 077):
 * an execution the last durable checkpoint wrote as a row, unchanged since, is read back by its
 * key, (partition, id). The engine's cache (at-rest/execution-cache.ts) keeps their summaries in
 * `unread`, the directory the lazy load filled (pg-cold-rows.ts).
 */
import type pg from 'pg';
import { ELSEWHERE, type ExecutionIndex } from '../../state/execution-index/execution-index.js';
import type { EvictableEntries } from '../durable-store.js';
import { partitionOfExecution, type PartitionLayout } from './partition-state.js';
import { RowReads } from './row-reads.js';
export { forgetPartitions } from './pg-cold-rows.js';
import type { DirtyExecutions } from './pg-execution-rows.js';
import type { PgCheckpoints } from './pg-checkpoints.js';

export interface PgEvictableOptions<S, R> {
  readonly pool: pg.Pool;
  readonly layout: PartitionLayout<S, R>;
  readonly unread: ExecutionIndex;
  /** The executions changed since their rows were written. */
  readonly dirty: DirtyExecutions;
  /**
   * The store's checkpoints: while one runs, the executions it writes are marked changed no
   * longer and not yet written; `durable` is told after each.
   */
  readonly checkpoints: Pick<PgCheckpoints<S, R>, 'running' | 'durable'>;
  /** Whether the store holds the partition, and it is not moving: a row of another's may change under it. */
  readonly serves: (partition: number) => boolean;
  /** The epoch of the store's lease on a partition it serves: a new one each time it takes the partition. */
  readonly epochOf: (partition: number) => number;
  readonly guard: (fn: (key: string) => void) => void;
}

/** The store's port for its engine's cache: see the top of this file. */
export function pgEvictable<S, R>(o: PgEvictableOptions<S, R>): EvictableEntries {
  const reads = new RowReads(o.pool, (id) => partitionOfExecution(o.layout, id));
  return {
    clean: (key) =>
      o.checkpoints.running === null && !o.dirty.has(key) && o.serves(partitionOfExecution(o.layout, key)),
    // The row is as the last checkpoint wrote it (the key is clean); reads of a turn go together.
    read: (key) => reads.read(key),
    unread: o.unread,
    onCheckpoint: (fn) => void o.checkpoints.durable.push(fn),
    epoch: (key) => {
      const partition = partitionOfExecution(o.layout, key);
      return o.serves(partition) ? o.epochOf(partition) : null;
    },
    guard: o.guard,
  };
}

/**
 * Puts the summaries of `from` (the executions of partitions just taken, left unread) into
 * `into` (the store's, its engine cache's), in the turn the resident ones join the state.
 * Returns their ids.
 */
export function mergeUnread(from: ExecutionIndex | null, into: ExecutionIndex | null | undefined): string[] {
  if (!from || !into) return [];
  const ids = from.list({ limit: Infinity });
  into.reserve(into.size + ids.length);
  for (const id of ids) into.put(from.get(id)!.summary, ELSEWHERE);
  return ids;
}
