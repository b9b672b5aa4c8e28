/** Node's setTimeout fires at once for delays over this (2^31-1); longer waits re-arm. */
const MAX_DELAY = 2 ** 31 - 1;

interface Entry<K extends string> {
  readonly key: K;
  readonly due: number;
}

/**
 * Due times for waiting nodes, in one min-heap with a single setTimeout for the earliest.
 * `set` replaces a key's due time, `delete` forgets it (lazily: the heap entry is skipped when
 * it surfaces). An overdue entry fires on the next tick. The callback runs once per due key.
 * `K` narrows the keys a queue takes (the engine's are TimerKey, keys.ts).
 */
export class TimerQueue<K extends string = string> {
  private heap: Entry<K>[] = [];
  private readonly due = new Map<K, number>();
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Infinity;
  private closed = false;
  /** While held (`hold`), nothing fires: due times are kept, the timer is armed on `release`. */
  private held = false;

  constructor(
    private readonly fire: (key: K) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Number of keys with a due time. */
  get size(): number {
    return this.due.size;
  }

  /** Fires `key` at `dueAt` (ms since the epoch), replacing any earlier due time of it. */
  set(key: K, dueAt: number): void {
    if (this.closed) return;
    this.due.set(key, dueAt);
    this.push({ key, due: dueAt });
    if (dueAt < this.armedFor) this.arm();
  }

  /**
   * Forgets `key`. Its heap entry is skipped when it surfaces; once skipped entries outnumber
   * live ones the heap is rebuilt, so answering timed waits early does not grow memory.
   */
  delete(key: K): void {
    if (!this.due.delete(key)) return;
    if (this.heap.length > 2 * this.due.size + 64) {
      // A sorted array is a valid min-heap.
      this.heap = [...this.due].map(([k, due]) => ({ key: k, due })).sort((a, b) => a.due - b.due);
    }
  }

  /** Entries in the heap, live or waiting to be skipped (for tests). */
  get heapSize(): number {
    return this.heap.length;
  }

  /** Re-reads the clock: after a clock jump (or a test moving its clock), due entries fire now. */
  poke(): void {
    this.arm();
  }

  /** Fires nothing until `release`; `set` and `delete` go on. */
  hold(): void {
    this.held = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = -Infinity; // no `set` arms it
  }

  /** Fires again: what came due while held fires on the next tick. */
  release(): void {
    if (!this.held) return;
    this.held = false;
    this.arm();
  }

  /** Stops firing. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.held) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
    while (this.heap.length > 0 && this.due.get(this.heap[0]!.key) !== this.heap[0]!.due) this.pop();
    const next = this.heap[0];
    if (!next || this.closed) return;
    this.armedFor = next.due;
    const delay = Math.max(0, Math.min(next.due - this.now(), MAX_DELAY));
    // Not unref'd: a due timer is pending work that keeps the process alive; close() clears it.
    this.timer = setTimeout(() => this.run(), delay);
  }

  private run(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.now();
    const fired: K[] = [];
    while (this.heap.length > 0 && this.heap[0]!.due <= now) {
      const e = this.pop();
      if (this.due.get(e.key) !== e.due) continue; // replaced or deleted
      this.due.delete(e.key);
      fired.push(e.key);
    }
    for (const key of fired) this.fire(key);
    this.arm();
  }

  private push(e: Entry<K>): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.due <= e.due) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = e;
  }

  private pop(): Entry<K> {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      // Sift `last` down from the root.
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        let best = last;
        if (l < h.length && h[l]!.due < best.due) {
          m = l;
          best = h[l]!;
        }
        if (r < h.length && h[r]!.due < best.due) {
          m = r;
          best = h[r]!;
        }
        if (m === i) break;
        h[i] = h[m]!;
        i = m;
      }
      h[i] = last;
    }
    return top;
  }
}
