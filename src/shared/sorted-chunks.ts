/**
 * A sorted list of unique items kept in chunks of a few hundred: an insert or a removal in the
 * middle moves the items of one chunk, where one array would move half the list (a task index
 * of a million waiting tasks moved megabytes an answer). Reads walk the chunks in order.
 */

/** Items a chunk holds before an insert splits it in two. */
const CHUNK_MAX = 512;

export class SortedChunks<T> {
  private chunks: T[][] = [];
  private count = 0;

  constructor(private readonly compare: (a: T, b: T) => number) {}

  /** How many items the list holds. */
  get length(): number {
    return this.count;
  }

  /** The first item, or undefined when the list is empty. */
  first(): T | undefined {
    return this.chunks[0]?.[0];
  }

  /**
   * Adds `x` at the end without comparing (a walk that fills the list, then `sort`), or where it
   * sorts; false when an equal item is there already.
   */
  insert(x: T, unsorted = false): boolean {
    const last = this.chunks.at(-1);
    if (last === undefined || unsorted || this.compare(last.at(-1)!, x) < 0) {
      // New items are mostly the newest: appended.
      if (last === undefined || last.length >= CHUNK_MAX) this.chunks.push([x]);
      else last.push(x);
      this.count++;
      return true;
    }
    const i = this.chunkOf(x);
    const chunk = this.chunks[i]!;
    const at = lowerBound(chunk, x, this.compare);
    if (at < chunk.length && this.compare(chunk[at]!, x) === 0) return false;
    chunk.splice(at, 0, x);
    this.count++;
    if (chunk.length > CHUNK_MAX) this.chunks.splice(i + 1, 0, chunk.splice(chunk.length >>> 1));
    return true;
  }

  /** Removes the item equal to `x`; false when there is none. */
  remove(x: T): boolean {
    if (this.count === 0) return false;
    const i = this.chunkOf(x);
    const chunk = this.chunks[i]!;
    const at = lowerBound(chunk, x, this.compare);
    if (at === chunk.length || this.compare(chunk[at]!, x) !== 0) return false;
    chunk.splice(at, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(i, 1);
    return true;
  }

  /** Sorts the items `insert(x, true)` appended, once they are all in. */
  sort(): void {
    const all = this.chunks.flat().sort(this.compare);
    this.chunks = [];
    for (let at = 0; at < all.length; at += CHUNK_MAX) this.chunks.push(all.slice(at, at + CHUNK_MAX));
  }

  /**
   * The items after those for which `upTo` holds, in order: `upTo` holds for a first run of the
   * list and not after it (a cursor's "sorts at or before").
   */
  *after(upTo: (x: T) => boolean): Generator<T, void, undefined> {
    const chunks = this.chunks;
    // The first chunk whose last item is past the cursor.
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (upTo(chunks[mid]!.at(-1)!)) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < chunks.length; i++) {
      const chunk = chunks[i]!;
      let at = 0;
      if (i === lo) {
        let h = chunk.length;
        while (at < h) {
          const mid = (at + h) >>> 1;
          if (upTo(chunk[mid]!)) at = mid + 1;
          else h = mid;
        }
      }
      for (; at < chunk.length; at++) yield chunk[at]!;
    }
  }

  /** The chunk `x` belongs in: the first whose last item sorts at or after it, else the last. */
  private chunkOf(x: T): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(this.chunks[mid]!.at(-1)!, x) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The first position of `list` whose item sorts at or after `x`. */
function lowerBound<T>(list: readonly T[], x: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(list[mid]!, x) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
