/**
 * A store's part in the shared partition (decision 039): the journal every daemon appends to
 * (memory, files, messages: what any step may write) and every daemon follows. Its entries are
 * numbered by the database under one row's lock (fenced-sql.ts), so they commit in the order of
 * their numbers and a follower reading them in order misses none.
 *
 * A store applies its own records at once, as every store does, before it knows their numbers;
 * another daemon's entry may be read after that although it was numbered before. Every shared
 * record sets or removes entries by key (state/shared.ts), so the order that matters is per key:
 * an entry of another daemon is applied to keys this store has written since (an entry of its
 * own not yet passed: numbered later) only if it came after them, which it never does, so those
 * keys are left as this store's write made them. Every daemon ends with each key as its highest
 * numbered entry left it: the journal's own replay.
 */
export class SharedJournal<R> {
  /** The state holds exactly the journal's entries up to this one, and its own appended after. */
  private through: number;
  /** Per key: this store's own entries not yet passed (their keys' other writes come before them). */
  private readonly unseen = new Map<string, number>();
  /** Own entries appended and not yet numbered, oldest first: their keys. */
  private readonly pending: Array<readonly string[]> = [];
  /** Own entries numbered after `through`, by number: their keys. */
  private readonly numbered = new Map<number, readonly string[]>();
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

  /** The keys of the shared records among `records`: one own entry appended, applied already. */
  appended(records: readonly R[]): void {
    const keys: string[] = [];
    for (const r of records) for (const key of this.touched(r) ?? []) keys.push(key);
    for (const key of keys) this.unseen.set(key, (this.unseen.get(key) ?? 0) + 1);
    this.pending.push(keys);
  }

  /** The numbers the database gave own entries, in the order they were appended. */
  numberedAs(seqs: readonly number[]): void {
    for (const seq of seqs) {
      if (this.readEarly.delete(seq)) continue;
      const keys = this.pending.shift();
      if (keys === undefined) throw new Error('the shared journal numbered more entries than this store appended');
      if (seq <= this.through) this.pass(keys);
      else this.numbered.set(seq, keys);
    }
    this.advance();
  }

  /**
   * The records of shared entry `seq` (read in order by a follower; `own` when this store's
   * daemon wrote it) to apply: none of an entry the state holds already (its own, or one before
   * `seq`), else those not setting a key this store has written since.
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
    // numbered (any older one was read before it), passed now so that later entries apply.
    if (own && this.pending.length > 0) {
      this.pass(this.pending.shift()!);
      this.readEarly.add(seq);
      this.advance();
      return [];
    }
    const admitted = records.filter((r) => !(this.touched(r) ?? []).some((key) => this.unseen.has(key)));
    this.advance();
    return admitted;
  }

  /** Own entries numbered right after `through` need no reading: the state holds them. */
  private advance(): void {
    for (
      let keys = this.numbered.get(this.through + 1);
      keys !== undefined;
      keys = this.numbered.get(this.through + 1)
    ) {
      this.numbered.delete(++this.through);
      this.pass(keys);
    }
  }

  private pass(keys: readonly string[]): void {
    for (const key of keys) {
      const left = this.unseen.get(key)! - 1;
      if (left > 0) this.unseen.set(key, left);
      else this.unseen.delete(key);
    }
  }
}
