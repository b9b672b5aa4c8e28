/**
 * The index's timers: one due time per slot in a binary min-heap of typed arrays (due
 * times, their slots, and each slot's position in the heap), so that a due time is set,
 * moved or removed in O(log n) with no object per timer. A batch load sets them unordered
 * (`defer`) and the heap is built in one O(n) pass when it is next read.
 */
import type { ImageIn, ImageOut } from './image.js';
import { grown } from './columns.js';

/** Orders two slots of equal due time: negative when `a` comes first. */
export type Tie = (a: number, b: number) => number;

/** The heap. */
export class DueHeap {
  private due: Float64Array;
  private slots: Int32Array;
  /** The heap position of each slot, -1 when it has no due time. */
  private pos: Int32Array;
  private count = 0;
  /** False while due times are set unordered: the next read builds the heap (heapify). */
  private ordered = true;

  /** A heap with room for `capacity` timers and slots before it grows. */
  constructor(
    private readonly tie: Tie,
    capacity = 16,
  ) {
    const n = Math.max(16, capacity);
    this.due = new Float64Array(n);
    this.slots = new Int32Array(n);
    this.pos = new Int32Array(n).fill(-1);
  }

  /** Saves the heap, ordered (image.ts). */
  save(out: ImageOut): void {
    this.order();
    out.column(this.due);
    out.column(this.slots);
    out.column(this.pos);
    out.value(this.count);
  }

  /** Takes the heap an image saved (an empty heap). */
  restore(inp: ImageIn): void {
    this.due = inp.column('Float64Array');
    this.slots = inp.column('Int32Array');
    this.pos = inp.column('Int32Array');
    this.count = inp.number();
    if (this.count > this.due.length || this.slots.length !== this.due.length || this.due.length === 0)
      throw new RangeError('the image has a heap that does not fit');
    this.ordered = true;
  }

  /** Timers in the heap. */
  get size(): number {
    return this.count;
  }

  /** The due time of `slot` (ms), or null. */
  dueOf(slot: number): number | null {
    const at = slot < this.pos.length ? this.pos[slot]! : -1;
    return at < 0 ? null : this.due[at]!;
  }

  /** Sets the due time of `slot` to `ms`, or removes it (null). */
  set(slot: number, ms: number | null): void {
    if (slot >= this.pos.length) {
      const old = this.pos.length;
      this.pos = grown(this.pos, Math.max(slot + 1, old * 2));
      this.pos.fill(-1, old);
    }
    const at = this.pos[slot]!;
    if (ms === null) {
      if (at >= 0) this.removeAt(at);
      return;
    }
    if (at >= 0) {
      const before = this.due[at]!;
      this.due[at] = ms;
      if (!this.ordered) return;
      if (ms < before) this.up(at);
      else this.down(at);
      return;
    }
    if (this.count === this.due.length) {
      this.due = grown(this.due, this.count * 2);
      this.slots = grown(this.slots, this.count * 2);
    }
    this.due[this.count] = ms;
    this.slots[this.count] = slot;
    this.pos[slot] = this.count;
    if (this.ordered) this.up(this.count);
    this.count++;
  }

  /** Lets `set` leave the heap unordered until it is next read (a batch load's many sets). */
  defer(): void {
    this.ordered = false;
  }

  /** The earliest due time (ms), or null when no timer is set. */
  next(): number | null {
    this.order();
    return this.count === 0 ? null : this.due[0]!;
  }

  /** Removes and returns the slot of the earliest timer if it is due at `nowMs`, else -1. */
  popDue(nowMs: number): number {
    this.order();
    if (this.count === 0 || this.due[0]! > nowMs) return -1;
    const slot = this.slots[0]!;
    this.removeAt(0);
    return slot;
  }

  private less(i: number, j: number): boolean {
    const a = this.due[i]!;
    const b = this.due[j]!;
    return a < b || (a === b && this.tie(this.slots[i]!, this.slots[j]!) < 0);
  }

  /** Builds the heap from unordered due times: sift down from the last parent, O(n). */
  private order(): void {
    if (this.ordered) return;
    this.ordered = true;
    for (let at = (this.count >> 1) - 1; at >= 0; at--) this.down(at);
    // A batch load grew the heap by doubling: it holds what it will hold for a while, so fit it
    // (an eighth over) rather than keep up to twice its timers' room for good.
    const fit = this.count + (this.count >> 3) + 16;
    if (this.due.length > fit + (fit >> 2)) {
      this.due = this.due.slice(0, fit);
      this.slots = this.slots.slice(0, fit);
    }
  }

  private removeAt(at: number): void {
    this.pos[this.slots[at]!] = -1;
    const last = --this.count;
    if (at === last) return;
    const moved = this.slots[last]!;
    this.move(last, at);
    if (!this.ordered) return;
    this.up(at);
    this.down(this.pos[moved]!);
  }

  private move(from: number, to: number): void {
    this.due[to] = this.due[from]!;
    this.slots[to] = this.slots[from]!;
    this.pos[this.slots[to]!] = to;
  }

  private swap(i: number, j: number): void {
    const d = this.due[i]!;
    const s = this.slots[i]!;
    this.move(j, i);
    this.due[j] = d;
    this.slots[j] = s;
    this.pos[s] = j;
  }

  private up(at: number): void {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.less(at, parent)) return;
      this.swap(at, parent);
      at = parent;
    }
  }

  private down(at: number): void {
    for (;;) {
      const l = 2 * at + 1;
      if (l >= this.count) return;
      const r = l + 1;
      const c = r < this.count && this.less(r, l) ? r : l;
      if (!this.less(c, at)) return;
      this.swap(at, c);
      at = c;
    }
  }
}
