/**
 * Counts work under way, so a graceful stop can wait until none is left.
 *
 * A counter, not a Set of the promises: a long-lived Set (or Map) that grows and shrinks with
 * the load keeps its hash tables in V8's old generation, and each rehash leaves the old table
 * behind with its entries still in it. Until the next full collection the scavenger treats
 * those stale entries as live, so every promise they held, and everything its continuation
 * referenced (a whole execution), was copied and promoted instead of dying young
 * (docs/decisions/005-no-long-lived-growing-collections.md).
 */
export class WorkCount {
  private count = 0;
  private waiters: Array<() => void> = [];

  /** Counts `work` until it settles; returns it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.count++;
    const done = (): void => {
      if (--this.count > 0) return;
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    };
    void work.then(done, done);
    return work;
  }

  /** Work under way now. */
  get size(): number {
    return this.count;
  }

  /** Resolves once no work is under way (work added meanwhile counts too). */
  async idle(): Promise<void> {
    while (this.count > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}
