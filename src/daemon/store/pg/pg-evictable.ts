/**
 * A PostgreSQL store's executions that may leave memory (DurableStore.evictable, decision 077):
 * an execution the last durable checkpoint wrote as a row, unchanged since, is read back by its
 * key, (partition, id). The engine's cache (engine/execution-cache.ts) keeps their summaries in
 * `unread`, the directory the lazy load filled (pg-cold-rows.ts).
 */
import type pg from 'pg';
import type { ExecutionDirectory } from '../../state/directory/directory.js';
import type { EvictableEntries } from '../durable-store.js';
import { partitionOfExecution, type PartitionLayout } from './partition-state.js';
import { readDocs } from './pg-cold-rows.js';
import type { DirtyExecutions } from './pg-execution-rows.js';
import type { PgCheckpoints } from './pg-checkpoints.js';

export interface PgEvictableOptions<S, R> {
  readonly pool: pg.Pool;
  readonly layout: PartitionLayout<S, R>;
  readonly unread: ExecutionDirectory;
  /** The executions changed since their rows were written. */
  readonly dirty: DirtyExecutions;
  /**
   * The store's checkpoints: while one runs, the executions it writes are marked changed no
   * longer and not yet written; `durable` is told after each.
   */
  readonly checkpoints: Pick<PgCheckpoints<S, R>, 'running' | 'durable'>;
  /** Whether the store holds the partition, and it is not moving: a row of another's may change under it. */
  readonly serves: (partition: number) => boolean;
  readonly guard: (fn: (key: string) => void) => void;
}

/** The store's port for its engine's cache: see the top of this file. */
export function pgEvictable<S, R>(o: PgEvictableOptions<S, R>): EvictableEntries {
  return {
    clean: (key) =>
      o.checkpoints.running === null && !o.dirty.has(key) && o.serves(partitionOfExecution(o.layout, key)),
    read: async (key) => {
      // One round trip on the pool: the row is as the last checkpoint wrote it (the key is clean).
      const docs = await readDocs(o.pool, partitionOfExecution(o.layout, key), [key]);
      return docs.get(key);
    },
    unread: o.unread,
    onCheckpoint: (fn) => void o.checkpoints.durable.push(fn),
    guard: o.guard,
  };
}
