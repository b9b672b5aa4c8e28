/**
 * Executions changed by transactions kept out of the journal (DurableStore.Divert: one that
 * starts and finishes in one step is written to history alone), until their settle records
 * take them out of the state. No checkpoint writes their rows meanwhile: no journal entry backs
 * such a row, so none would ever delete it for a standby's copy, which would keep a summary of
 * an execution no row holds (decision 077). Once settled, one the settle took out of the state
 * (it was made by that transaction: DurableStore.Divert) has no row to write or delete, and its
 * mark is dropped (`gone`): else every such execution would stay marked until a checkpoint, and
 * checkpoints follow the journal's growth, which those transactions leave alone.
 */
import type { Transaction } from '../durable-store.js';
import type { PartitionLayout } from './partition-state.js';
import type { DirtyExecutions } from './pg-execution-rows.js';

export class Unjournaled<S, R> {
  /** By id: how many unsettled diverted transactions changed the execution. */
  private readonly ids = new Map<string, number>();

  constructor(
    private readonly layout: PartitionLayout<S, R>,
    /** The store's marks of executions changed since their rows were written. */
    private readonly dirty: Pick<DirtyExecutions, 'forgetGone'>,
    /** Whether entry `id` of the state's collection `key` is gone (RecordStore.entryGone). */
    private readonly gone: (key: string, id: string) => boolean,
  ) {}

  /** `tx` as the store returns it; a diverted one's executions are held until it settles. */
  track<T>(tx: Transaction<T, R>): Transaction<T, R> {
    const settle = tx.settle;
    if (settle === null) return tx;
    const ids = new Set<string>();
    for (const record of tx.records) this.layout.collection?.touched(record, (id) => ids.add(id));
    for (const id of ids) this.ids.set(id, (this.ids.get(id) ?? 0) + 1);
    let settled = false;
    return {
      ...tx,
      settle: () => {
        settle();
        if (settled) return;
        settled = true;
        for (const id of ids) {
          const left = this.ids.get(id)! - 1;
          if (left === 0) {
            this.ids.delete(id);
            if (this.gone(this.layout.collection!.key, id)) this.dirty.forgetGone(id);
          } else this.ids.set(id, left);
        }
      },
    };
  }

  /** Whether execution `id` was changed by a diverted transaction not settled yet. */
  has(id: string): boolean {
    return this.ids.has(id);
  }
}
