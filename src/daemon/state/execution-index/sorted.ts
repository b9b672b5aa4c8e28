/**
 * A list of numbers (slots or wait handles) kept in an order the caller defines, in one Int32Array:
 * the index's listing (ids newest first), the input tasks of a flow (oldest first) and the
 * jobs of an action. New entries usually come last (ids and wait times grow), so an insert is
 * an append; one out of order marks the list unsorted, and it is sorted once, when next read.
 * A removal is noted, and the list compacted when next read: an execution read back or a task
 * answered costs no shift of the whole list (a read, a listing, pays one pass for them all).
 */
import type { ImageIn, ImageOut } from './image.js';
import { grown } from './columns.js';

/** Removals kept for the next read at least (below, a list is never dropped from early). */
const DROP_AT_LEAST = 64;
/**
 * Removals kept at most: past it, one pass drops them. Without a bound, a list of a million that
 * nobody read kept up to half a million removals, in a Map rehashed as it grew (old-generation
 * garbage for every major GC to go through), and the pass that finally dropped them held the
 * event loop for as long as a million Map lookups take. A pass reads the list once (see `drop`).
 */
export const DROP_AT_MOST = 32_768;

/**
 * How many of each entry a drop pass removes, by entry: a typed array read per entry of the list
 * instead of a Map lookup. Shared by every list (a pass runs synchronously, start to end) and
 * all zeros between passes. It grows (by doubling) past the largest entry dropped and is kept:
 * two bytes for each of up to twice as many slots or rows as the execution index has had.
 */
let marks = new Uint16Array(0);

/** Compares two entries: negative when `a` comes first; never 0 for two different entries. */
export type Order = (a: number, b: number) => number;

/** The sorted list. */
export class SortedList {
  private items: Int32Array;
  private count = 0;
  private sorted = true;
  /**
   * Removals not applied yet, by entry (how many of it): the next read drops them in one pass.
   * Replaced, never cleared, after a pass (see shared/work-count.ts on Map.clear()).
   */
  private pending = new Map<number, number>();
  private pendingCount = 0;

  /** An empty list with room for `capacity` entries before it grows. */
  constructor(
    private readonly order: Order,
    capacity = 16,
  ) {
    this.items = new Int32Array(Math.max(16, capacity));
  }

  /** Saves the list, sorted and its removals dropped (image.ts). */
  save(out: ImageOut): void {
    this.sort();
    out.column(this.items);
    out.value(this.count);
  }

  /** Takes the list an image saved (an empty list). */
  restore(inp: ImageIn): void {
    this.items = inp.column('Int32Array');
    this.count = inp.number();
    if (this.count > this.items.length || this.items.length === 0)
      throw new RangeError('the image has a list that does not fit');
    this.sorted = true;
  }

  /** Entries in the list. */
  get size(): number {
    return this.count - this.pendingCount;
  }

  /** Entries held in memory: the list's, and removed ones not dropped yet (at most as many, or a few dozen). */
  get held(): number {
    return this.count;
  }

  /** Adds `x`. */
  insert(x: number): void {
    this.items = grown(this.items, this.count + 1 > this.items.length ? this.items.length * 2 : 0);
    // An entry removed but not dropped yet, back again (a slot reused): the copy that stays after
    // the drop may be the old one, in the old place, so the list is sorted again.
    if (this.pendingCount > 0 && this.pending.has(x)) this.sorted = false;
    else if (this.sorted && this.count > 0 && this.order(this.items[this.count - 1]!, x) > 0) this.sorted = false;
    this.items[this.count++] = x;
  }

  /** Removes `x` (in the list): dropped when the list is next read. */
  remove(x: number): void {
    this.pending.set(x, (this.pending.get(x) ?? 0) + 1);
    this.pendingCount++;
    // The last entry stays a live one (what `insert` compares with): removed ones there go now.
    while (this.count > 0 && this.pendingCount > 0) {
      const last = this.items[this.count - 1]!;
      const n = this.pending.get(last);
      if (n === undefined) break;
      if (n === 1) this.pending.delete(last);
      else this.pending.set(last, n - 1);
      this.pendingCount--;
      this.count--;
    }
    // A list nobody reads for a long while (no listing) would keep every entry ever removed:
    // once they are half of it, or DROP_AT_MOST, they go, in a pass that many removals pay for.
    if (this.pendingCount > DROP_AT_LEAST && (this.pendingCount * 2 > this.count || this.pendingCount >= DROP_AT_MOST))
      this.drop();
  }

  /** The first position whose entry does not come before the probe (`probe(e)` < 0: e comes first). */
  lowerBound(probe: (e: number) => number): number {
    this.sort();
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (probe(this.items[mid]!) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The entry at `at` (0 <= at < size), in order. */
  at(at: number): number {
    this.sort();
    return this.items[at]!;
  }

  private sort(): void {
    if (this.sorted && this.pendingCount === 0) return;
    if (this.pendingCount > 0) this.drop();
    if (!this.sorted) this.items.subarray(0, this.count).sort(this.order);
    this.sorted = true;
  }

  /** Drops the removals made since the last drop, in one pass (equal entries are interchangeable). */
  private drop(): void {
    let most = 0;
    for (const e of this.pending.keys()) if (e > most) most = e;
    if (marks.length <= most) marks = new Uint16Array(Math.max(most + 1, marks.length * 2));
    // Never more than DROP_AT_MOST removals pend (remove drops them there): a count fits 16 bits.
    for (const [e, n] of this.pending) marks[e] = n;
    let left = this.pendingCount;
    let w = 0;
    for (let r = 0; r < this.count; r++) {
      if (left === 0) {
        // Every removal found: the rest moves down as it is.
        this.items.copyWithin(w, r, this.count);
        w += this.count - r;
        break;
      }
      const e = this.items[r]!;
      // Undefined past the marks (an entry above every removal): kept.
      const n = marks[e] ?? 0;
      if (n === 0) this.items[w++] = e;
      else {
        marks[e] = n - 1;
        left--;
      }
    }
    if (left > 0) {
      const missing = [...this.pending.keys()].find((e) => marks[e] !== 0);
      for (const e of this.pending.keys()) marks[e] = 0;
      throw new Error(`sorted list: ${missing} is not in the list`);
    }
    this.count = w;
    this.pendingCount = 0;
    this.pending = new Map();
  }
}

/** The list of `code` in `lists`, made (ordered by `order`) if it has none. */
export function listOf(
  lists: Map<number, SortedList>,
  code: number,
  order: (a: number, b: number) => number,
): SortedList {
  let list = lists.get(code);
  if (list === undefined) lists.set(code, (list = new SortedList(order)));
  return list;
}

/** Removes `row` from the list of `code` in `lists`, and the list once empty. */
export function dropFrom(lists: Map<number, SortedList>, code: number, row: number): void {
  const list = lists.get(code)!;
  list.remove(row);
  if (list.size === 0) lists.delete(code);
}
