/**
 * Execution ids by slot and slots by id. A UUID id is kept as 16 bytes (four words of a
 * Uint32Array column) and found through an open-addressing Int32Array table of slots (linear
 * probing, deletion by backward shift, so no tombstones pile up with churn). An id that is not
 * a lowercase UUID (old data, tests) is kept as its text in a small map.
 */
import type { ImageIn, ImageOut } from './image.js';
import { formatUuid, grown, hashUuid, parseUuid } from './columns.js';

/** The ids of the index's slots. */
export class IdTable {
  private words = new Uint32Array(64);
  /** Open addressing: slot + 1, 0 where empty; its length a power of two, at most half full. */
  private table = new Int32Array(64);
  private used = 0;
  private readonly others = new Map<string, number>();
  private readonly otherText = new Map<number, string>();
  /** 1 where the slot's id is in `otherText`. */
  private other = new Uint8Array(16);
  private readonly probe = new Uint32Array(4);
  /** The id `probe` holds the words of (the last UUID `slotOf` parsed), so that an insert after it parses nothing. */
  private probed: string | null = null;
  /** Where the probe of `probed` ended, empty: its insert goes there (no second hash or probe). */
  private hole = -1;

  /** Saves the table (image.ts). */
  save(out: ImageOut): void {
    out.column(this.words);
    out.column(this.table);
    out.column(this.other);
    out.value(this.used);
    out.value([...this.others]);
  }

  /** Takes the table an image saved (an empty table). */
  restore(inp: ImageIn): void {
    this.words = inp.column('Uint32Array');
    this.table = inp.column('Int32Array');
    this.other = inp.column('Uint8Array');
    this.used = inp.number();
    const others = inp.value((v): v is Array<[string, number]> => Array.isArray(v));
    if ((this.table.length & (this.table.length - 1)) !== 0 || this.words.length !== 4 * this.other.length)
      throw new RangeError('the image has an id table that does not fit');
    this.others.clear();
    this.otherText.clear();
    for (const [id, slot] of others) {
      this.others.set(id, slot);
      this.otherText.set(slot, id);
    }
    this.probed = null;
  }

  /** A table with room for `capacity` ids before it rehashes. */
  constructor(capacity = 16) {
    let length = 64;
    while (length < 2 * capacity) length *= 2;
    this.table = new Int32Array(length);
    this.words = new Uint32Array(4 * capacity);
    this.other = new Uint8Array(capacity);
  }

  /** Makes room for ids in slots below `capacity` before a rehash or a column grows. */
  reserve(capacity: number): void {
    let length = this.table.length;
    while (length < 2 * capacity) length *= 2;
    if (length > this.table.length) this.rehash(length);
    this.words = grown(this.words, 4 * capacity);
    this.other = grown(this.other, capacity);
  }

  /** The slot of `id`, or -1. */
  slotOf(id: string): number {
    if (!parseUuid(id, this.probe, 0)) {
      this.probed = null;
      return this.others.get(id) ?? -1;
    }
    this.probed = id;
    const mask = this.table.length - 1;
    for (let i = hashUuid(this.probe, 0) & mask; ; i = (i + 1) & mask) {
      const entry = this.table[i]!;
      if (entry === 0) {
        this.hole = i;
        return -1;
      }
      if (this.other[entry - 1] === 0 && this.sameAsProbe(entry - 1)) return entry - 1;
    }
  }

  /** Gives `slot` the id `id` (not in the table). */
  insert(id: string, slot: number): void {
    if (slot >= this.other.length) this.other = grown(this.other, Math.max(slot + 1, this.other.length * 2));
    if (4 * slot + 4 > this.words.length) this.words = grown(this.words, Math.max(4 * slot + 4, this.words.length * 2));
    const probed = id === this.probed;
    this.probed = null;
    if (probed) {
      const at = 4 * slot;
      const p = this.probe;
      this.words[at] = p[0]!;
      this.words[at + 1] = p[1]!;
      this.words[at + 2] = p[2]!;
      this.words[at + 3] = p[3]!;
    } else if (!parseUuid(id, this.words, 4 * slot)) {
      this.other[slot] = 1;
      this.others.set(id, slot);
      this.otherText.set(slot, id);
      return;
    }
    this.other[slot] = 0;
    if (2 * (this.used + 1) > this.table.length) this.rehash(this.table.length * 2);
    else if (probed) {
      this.table[this.hole] = slot + 1;
      this.used++;
      return;
    }
    this.place(slot);
    this.used++;
  }

  /** Takes the id of `slot` out of the table. */
  remove(slot: number): void {
    this.probed = null;
    if (this.other[slot] === 1) {
      this.others.delete(this.otherText.get(slot)!);
      this.otherText.delete(slot);
      this.other[slot] = 0;
      return;
    }
    const mask = this.table.length - 1;
    let i = hashUuid(this.words, 4 * slot) & mask;
    while (this.table[i] !== slot + 1) i = (i + 1) & mask;
    // Backward shift: move up each later entry of the run that may sit in the hole.
    for (let j = (i + 1) & mask; this.table[j] !== 0; j = (j + 1) & mask) {
      const home = hashUuid(this.words, 4 * (this.table[j]! - 1)) & mask;
      const between = i <= j ? home > i && home <= j : home > i || home <= j;
      if (between) continue;
      this.table[i] = this.table[j]!;
      i = j;
    }
    this.table[i] = 0;
    this.used--;
  }

  /** The id of `slot`. */
  idOf(slot: number): string {
    return this.other[slot] === 1 ? this.otherText.get(slot)! : formatUuid(this.words, 4 * slot);
  }

  /** Compares the ids of two slots as their texts compare (a UUID's words compare as its text). */
  compare(a: number, b: number): number {
    if (this.other[a] === 0 && this.other[b] === 0) {
      for (let w = 0; w < 4; w++) {
        const x = this.words[4 * a + w]!;
        const y = this.words[4 * b + w]!;
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    }
    const x = this.idOf(a);
    const y = this.idOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }

  /** Compares the id of `slot` with `id` as texts compare. */
  compareTo(slot: number, id: string): number {
    this.probed = null;
    if (this.other[slot] === 0 && parseUuid(id, this.probe, 0)) {
      for (let w = 0; w < 4; w++) {
        const x = this.words[4 * slot + w]!;
        const y = this.probe[w]!;
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    }
    const x = this.idOf(slot);
    return x < id ? -1 : x > id ? 1 : 0;
  }

  private sameAsProbe(slot: number): boolean {
    const at = 4 * slot;
    const w = this.words;
    const p = this.probe;
    return w[at] === p[0] && w[at + 1] === p[1] && w[at + 2] === p[2] && w[at + 3] === p[3];
  }

  private place(slot: number): void {
    const mask = this.table.length - 1;
    let i = hashUuid(this.words, 4 * slot) & mask;
    while (this.table[i] !== 0) i = (i + 1) & mask;
    this.table[i] = slot + 1;
  }

  private rehash(length: number): void {
    this.probed = null;
    const old = this.table;
    this.table = new Int32Array(length);
    for (const entry of old) if (entry !== 0) this.place(entry - 1);
  }
}
