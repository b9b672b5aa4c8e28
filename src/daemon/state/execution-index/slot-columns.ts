/**
 * The index's columns by slot (execution-index.ts extends this): what it keeps of each execution
 * besides its id, waits and strings, each in a typed array that grows by doubling, and the free
 * slots to reuse.
 */
import { grown } from './columns.js';
import type { ImageIn, ImageOut } from './image.js';
import type { Location } from './row.js';

/** The columns by slot. */
export class SlotColumns {
  protected capacity = 0;
  protected slots = 0;
  protected free = new Int32Array(0);
  protected freeCount = 0;
  /** Organization, processId, version and environment as one code (Shapes). */
  protected shape = new Int32Array(0);
  protected state = new Uint8Array(0);
  /** FLAG_* bits of each slot. */
  protected flags = new Uint8Array(0);
  protected startMs = new Float64Array(0);
  protected active = new Int32Array(0);
  protected firstWait = new Int32Array(0);
  protected segment = new Uint32Array(0);
  protected offset = new Uint32Array(0);
  protected length = new Uint32Array(0);
  /** By flow (a pair code): running executions, and those only waiting. */
  protected running = new Int32Array(0);
  protected waitingOnly = new Int32Array(0);

  /** Slots the columns have room for (they grow by doubling, never with churn alone). */
  get slotCapacity(): number {
    return this.capacity;
  }

  /** A slot to fill: a free one, else the next (the columns grown when full). */
  protected newSlot(): number {
    if (this.freeCount > 0) return this.free[--this.freeCount]!;
    if (this.slots === this.capacity) this.grow(this.capacity * 2);
    return this.slots++;
  }

  /** `slot` is free to reuse. */
  protected freeSlot(slot: number): void {
    if (this.freeCount === this.free.length) this.free = grown(this.free, Math.max(16, this.freeCount * 2));
    this.free[this.freeCount++] = slot;
  }

  protected locationAt(slot: number): Location {
    return { segment: this.segment[slot]!, offset: this.offset[slot]!, length: this.length[slot]! };
  }

  protected grow(capacity: number): void {
    this.capacity = capacity;
    this.shape = grown(this.shape, capacity);
    this.state = grown(this.state, capacity);
    this.flags = grown(this.flags, capacity);
    this.startMs = grown(this.startMs, capacity);
    this.active = grown(this.active, capacity);
    this.firstWait = grown(this.firstWait, capacity);
    this.segment = grown(this.segment, capacity);
    this.offset = grown(this.offset, capacity);
    this.length = grown(this.length, capacity);
  }

  /** Saves the columns (image.ts). */
  protected saveColumns(out: ImageOut): void {
    out.value([this.capacity, this.slots, this.freeCount]);
    for (const c of this.bySlot()) out.column(c);
    for (const c of [this.free, this.running, this.waitingOnly]) out.column(c);
  }

  /** Takes the columns an image saved; throws RangeError when they do not fit. */
  protected restoreColumns(inp: ImageIn): void {
    const [capacity = -1, slots = -1, freeCount = -1] = inp.numbers();
    this.capacity = capacity;
    this.slots = slots;
    this.freeCount = freeCount;
    this.shape = inp.column('Int32Array');
    this.state = inp.column('Uint8Array');
    this.flags = inp.column('Uint8Array');
    this.startMs = inp.column('Float64Array');
    this.active = inp.column('Int32Array');
    this.firstWait = inp.column('Int32Array');
    this.segment = inp.column('Uint32Array');
    this.offset = inp.column('Uint32Array');
    this.length = inp.column('Uint32Array');
    this.free = inp.column('Int32Array');
    this.running = inp.column('Int32Array');
    this.waitingOnly = inp.column('Int32Array');
    const fits = slots >= 0 && slots <= capacity && freeCount >= 0 && freeCount <= this.free.length;
    if (!fits || this.bySlot().some((c) => c.length !== capacity) || this.running.length !== this.waitingOnly.length)
      throw new RangeError('the image has index columns that do not fit');
  }

  private bySlot() {
    return [
      this.shape,
      this.state,
      this.flags,
      this.startMs,
      this.active,
      this.firstWait,
      this.segment,
      this.offset,
      this.length,
    ];
  }
}
