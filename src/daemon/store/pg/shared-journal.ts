/**
 * A store's part in the shared partition (decision 039): the journal every daemon appends to
 * (memory, files, messages: what any step may write) and every daemon follows. Its entries are
 * numbered by the database under one row's lock (fenced-sql.ts), so they commit in the order of
 * their numbers and a follower reading them in order misses none.
 *
 * A store applies its own records at once, as every store does, before it knows their numbers;
 * another daemon's entry may be read after that although it was numbered before. Every shared
 * record changes entries named by keys (state/commons.ts), so the order that matters is per key.
 * Another daemon's record on keys this store has written since (an own entry not yet passed:
 * numbered later) is applied, then this store's records on those keys are applied again after
 * it: each key ends as the journal's order leaves it (a record applied again over its own
 * effect changes nothing: each sets what it names, or adds what is there already).
 */

/** One of this store's own entries not yet passed: the keys it changes, and its records. */
interface Own<R> {
  readonly keys: readonly string[];
  readonly records: readonly R[];
}

export class SharedJournal<R> {
  /** The state holds exactly the journal's entries up to this one, and its own appended after. */
  private through: number;
  /** Per key: this store's own entries not yet passed (their keys' other writes come before them). */
  private readonly unseen = new Map<string, number>();
  /** Own entries appended and not yet numbered, oldest first. */
  private readonly pending: Array<Own<R>> = [];
  /** Own entries numbered after `through`, by number. */
  private readonly numbered = new Map<number, Own<R>>();
  /** Own entries read (admit) before the database's answer numbered them: passed already. */
  private readonly readEarly = new Set<number>();

  constructor(
    private readonly touched: (record: R) => readonly string[] | null,
    /** The last entry of the shared partition the state holds (loaded). */
    loadedThrough: number,
  ) {
    this.through = loadedThrough;
  }

  /** The last entry up to which the state is the journal's (for status and checkpoints). */
  get seq(): number {
    return this.through;
  }

  /**
   * The seq at which the state is the journal's (a snapshot of it may say so), or null when it
   * is at none now: it holds own records not yet numbered, and others' may come before them.
   * A store `alone` (holding every partition) is the only writer: its records not yet numbered
   * will be the next ones.
   */
  exactAt(alone: boolean): number | null {
    if (alone && this.numbered.size === 0 && this.readEarly.size === 0) return this.through + this.pending.length;
    return this.unseen.size === 0 ? this.through : null;
  }

  /** The shared records among `records`: one own entry appended, applied already. */
  appended(records: readonly R[]): void {
    const keys: string[] = [];
    const own: R[] = [];
    for (const r of records) {
      const touched = this.touched(r);
      if (touched === null) continue;
      own.push(r);
      keys.push(...touched);
    }
    for (const key of keys) this.unseen.set(key, (this.unseen.get(key) ?? 0) + 1);
    this.pending.push({ keys, records: own });
  }

  /** The numbers the database gave own entries, in the order they were appended. */
  numberedAs(seqs: readonly number[]): void {
    for (const seq of seqs) {
      if (this.readEarly.delete(seq)) continue;
      const own = this.pending.shift();
      if (own === undefined) throw new Error('the shared journal numbered more entries than this store appended');
      if (seq <= this.through) this.pass(own);
      else this.numbered.set(seq, own);
    }
    this.advance();
  }

  /**
   * The records to apply for shared entry `seq` (read in order by a follower; `own` when this
   * store's daemon wrote it): none for an entry the state holds already (its own, or one before
   * `seq`); else its records, then this store's own records not yet passed on the keys they
   * share with them, in the order they were appended (they come after it in the journal).
   */
  admit(seq: number, records: readonly R[], own = false): readonly R[] {
    if (seq <= this.through) return [];
    if (seq !== this.through + 1)
      throw new Error(`shared journal entry ${this.through + 1} was not read before ${seq}`);
    this.through = seq;
    const numbered = this.numbered.get(seq);
    if (numbered !== undefined) {
      this.numbered.delete(seq);
      this.pass(numbered);
      this.advance();
      return [];
    }
    // Its own, committed, read before the database's answer came back: the oldest not yet
    // numbered (any older one was read before it), passed now.
    if (own && this.pending.length > 0) {
      this.pass(this.pending.shift()!);
      this.readEarly.add(seq);
      this.advance();
      return [];
    }
    const clashing = new Set<string>();
    for (const r of records) for (const key of this.touched(r) ?? []) if (this.unseen.has(key)) clashing.add(key);
    // Collected before advancing: own entries numbered right after this one are in the state
    // already, but were applied before it, so they too are applied again after it.
    const again = clashing.size === 0 ? [] : this.ownOn(clashing);
    this.advance();
    return again.length === 0 ? records : [...records, ...again];
  }

  /** This store's own records not yet passed that change any of `keys`, oldest first. */
  private ownOn(keys: ReadonlySet<string>): R[] {
    const out: R[] = [];
    const entries = [...[...this.numbered].sort(([a], [b]) => a - b).map(([, e]) => e), ...this.pending];
    for (const entry of entries)
      for (const r of entry.records) if ((this.touched(r) ?? []).some((key) => keys.has(key))) out.push(r);
    return out;
  }

  /** Own entries numbered right after `through` need no reading: the state holds them. */
  private advance(): void {
    for (let own = this.numbered.get(this.through + 1); own !== undefined; own = this.numbered.get(this.through + 1)) {
      this.numbered.delete(++this.through);
      this.pass(own);
    }
  }

  private pass(own: Own<R>): void {
    for (const key of own.keys) {
      const left = this.unseen.get(key)! - 1;
      if (left > 0) this.unseen.set(key, left);
      else this.unseen.delete(key);
    }
  }
}
