/**
 * What the JSON store's execution segments must know of each record applied: which executions
 * changed since the last checkpoint (the next one writes them into a new segment), the copy of
 * each as it was at the instant of a checkpoint under way (SegmentTouch), and the execution
 * cache's guard that no record reaches an execution that is not resident.
 */
import type { SegmentTouch } from './at-rest-port.js';
import type { Transaction } from './durable-store.js';

/** The executions changed since the last checkpoint, and what touching one does meanwhile. */
export class SegmentChanges {
  /** The executions changed since the last checkpoint began (or since the open's snapshot). */
  private dirty: Set<string>;
  /** The copy of a checkpoint under way: an execution about to change is copied first. */
  private copy: SegmentTouch | null = null;
  private guardFn: ((key: string) => void) | null = null;
  /**
   * The execution the last record of this run of applies changed (`runBegins`): the records of
   * a step come by execution, and one already guarded, copied and marked needs none of it again
   * until the run ends (a checkpoint beginning, an eviction, come between runs).
   */
  private last: string | null = null;
  /** How many times `take` handed the changed executions to a checkpoint (see `forget`). */
  private taken = 0;

  /** `changed`: those the open found changed since the snapshot (the journal it replayed). */
  constructor(changed: Set<string> = new Set()) {
    this.dirty = changed;
  }

  /** Execution `key` is about to change (a record applied to it). */
  readonly touch = (key: string): void => {
    if (key === this.last) return;
    this.guardFn?.(key);
    this.copy?.touch(key);
    this.dirty.add(key);
    this.last = key;
  };

  /** A run of applies begins (a commit's, a transaction's, a settle's): see `last`. */
  runBegins(): void {
    this.last = null;
  }

  /** The count of `take`s so far: what `forget` compares with. */
  get epoch(): number {
    return this.taken;
  }

  /**
   * Execution `key`, changed since `epoch` only, is gone and no checkpoint is to write it: one
   * that started and finished in a step whose records went to history instead of the journal.
   * Unless a checkpoint took it in the meantime (the epoch moved: that checkpoint may have
   * written it while it was alive, and the next must write that it is gone), it is unchanged
   * again. Else every such execution would stay in the set until a checkpoint, and checkpoints
   * follow the journal's growth, which those steps leave alone.
   */
  forget(key: string, epoch: number): void {
    if (epoch !== this.taken) return;
    this.dirty.delete(key);
    if (this.last === key) this.last = null;
  }

  /** Whether execution `key` is unchanged since the last checkpoint. */
  isClean(key: string): boolean {
    return !this.dirty.has(key);
  }

  /** How many executions changed since the last checkpoint. */
  get size(): number {
    return this.dirty.size;
  }

  /** Sets the guard every touch calls first (it throws for an execution that is not resident). */
  guard(fn: (key: string) => void): void {
    this.guardFn = fn;
  }

  /**
   * A checkpoint begins: answers the executions changed until now, for it to write, and starts
   * counting afresh. `copy` is told of each execution touched until `copied(null)`.
   */
  take(): Set<string> {
    const taken = this.dirty;
    this.dirty = new Set();
    this.last = null;
    this.taken++;
    return taken;
  }

  /** The copy of the checkpoint under way (null: none any more). */
  copying(copy: SegmentTouch | null): void {
    this.copy = copy;
    this.last = null;
  }
}

/**
 * `tx`, whose settle (a transaction `divert` took out of the journal) then forgets each
 * execution its records changed that `forgettable` says is gone: one it made (DurableStore's
 * Divert), whose mark would otherwise wait for a checkpoint (SegmentChanges.forget).
 */
export function settleForgetting<T, R>(
  tx: Transaction<T, R>,
  touched: (record: R, visit: (key: string) => void) => void,
  forgettable: (key: string) => boolean,
  forget: (key: string) => void,
): Transaction<T, R> {
  const settle = tx.settle;
  if (settle === null) return tx;
  return {
    ...tx,
    settle: () => {
      settle();
      let last: string | null = null;
      for (const record of tx.records)
        touched(record, (key) => {
          if (key === last) return;
          last = key;
          if (forgettable(key)) forget(key);
        });
    },
  };
}
