/**
 * A PostgreSQL store's executions that may leave memory (DurableStore.evictable, decision 077):
 * an execution the last durable checkpoint wrote as a row, unchanged since, is read back by its
 * key, (partition, id). The engine's cache (at-rest/execution-cache.ts) keeps their summaries in
 * `unread`, the directory the lazy load filled (pg-cold-rows.ts). The store sees them through
 * store/pg/rows-at-rest-port.ts (ROWS_AT_REST).
 */
import { ELSEWHERE, type ExecutionIndex } from '../../state/execution-index/execution-index.js';
import type { EvictableEntries } from '../../store/durable-store.js';
import { partitionOfExecution } from '../../store/pg/partition-state.js';
import type { PgEvictableOptions, PgRowsAtRest } from '../../store/pg/rows-at-rest-port.js';
import { forgetPartitions, LazyRows } from './pg-cold-rows.js';
import { RowReads } from './row-reads.js';

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

/** The PostgreSQL store's executions at rest (PgStoreOptions.rows): its cold rows, loaded lazily and read back by key. */
export const ROWS_AT_REST: PgRowsAtRest = {
  lazyRows: (options, state) => new LazyRows(options, state),
  evictable: (o) => pgEvictable(o),
  mergeUnread,
  forgetPartitions,
};
