/**
 * The heads of the message subscription buckets: (bucket, correlation key) to the first wait
 * row of its chain, in an open-addressing Int32Array table (linear probing, deletion by
 * backward shift) over a hash of the key's text, so that a message wait under a key of its own
 * costs a table entry, not a map entry.
 */
import type { ImageIn, ImageOut } from './image.js';

/** What the index reads of a wait row: its bucket (organization and ref) and key. */
export interface MessageRows {
  bucketOf(row: number): number;
  keyOf(row: number): string;
}

/** A 31-bit hash of bucket `bucket` and key `key` (FNV-1a over the key's char codes). */
function hash(bucket: number, key: string): number {
  let h = Math.imul(0x811c9dc5 ^ bucket, 0x01000193);
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  return (h ^ (h >>> 13)) & 0x7fffffff;
}

/** The index. */
export class MessageIndex {
  /** head row + 1, 0 where empty; a power of two long, at most half full. */
  private table = new Int32Array(64);
  /** The hash of each entry of `table`: a rehash or a shift reads it, not the key's text. */
  private hashes = new Int32Array(64);
  private used = 0;

  constructor(private readonly rows: MessageRows) {}

  /** Saves the index (image.ts). */
  save(out: ImageOut): void {
    out.parallel(this.used, this.table, this.hashes);
  }

  /** Takes the index an image saved (an empty index). */
  restore(inp: ImageIn): void {
    [this.table, this.hashes, this.used] = inp.parallel('a message index', 'Int32Array', 'Int32Array');
    const n = this.table.length;
    if (n === 0 || (n & (n - 1)) !== 0) throw new RangeError('the image has a message index that does not fit');
  }

  /** The first row of bucket `bucket` under `key`, or -1. */
  head(bucket: number, key: string): number {
    const at = this.find(bucket, key);
    return at < 0 ? -1 : this.table[at]! - 1;
  }

  /** Makes `row` (of bucket `bucket` under `key`) the bucket's first row. */
  setHead(bucket: number, key: string, row: number): void {
    this.push(bucket, key, row);
  }

  /** Makes `row` (of bucket `bucket` under `key`) the bucket's first row; returns the row that was, or -1. */
  push(bucket: number, key: string, row: number): number {
    const h = hash(bucket, key);
    const at = this.find(bucket, key, h);
    if (at >= 0) {
      const was = this.table[at]! - 1;
      this.table[at] = row + 1;
      return was;
    }
    if (2 * (this.used + 1) > this.table.length) this.rehash(this.table.length * 2);
    this.place(row, h);
    this.used++;
    return -1;
  }

  /** Removes bucket `bucket` under `key` (its chain is empty). */
  delete(bucket: number, key: string): void {
    let i = this.find(bucket, key);
    if (i < 0) return;
    const mask = this.table.length - 1;
    for (let j = (i + 1) & mask; this.table[j] !== 0; j = (j + 1) & mask) {
      const home = this.hashes[j]! & mask;
      const between = i <= j ? home > i && home <= j : home > i || home <= j;
      if (between) continue;
      this.table[i] = this.table[j]!;
      this.hashes[i] = this.hashes[j]!;
      i = j;
    }
    this.table[i] = 0;
    this.used--;
  }

  private find(bucket: number, key: string, h = hash(bucket, key)): number {
    const mask = this.table.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const entry = this.table[i]!;
      if (entry === 0) return -1;
      if (this.hashes[i] === h && this.rows.bucketOf(entry - 1) === bucket && this.rows.keyOf(entry - 1) === key)
        return i;
    }
  }

  private place(row: number, h: number): void {
    const mask = this.table.length - 1;
    let i = h & mask;
    while (this.table[i] !== 0) i = (i + 1) & mask;
    this.table[i] = row + 1;
    this.hashes[i] = h;
  }

  private rehash(length: number): void {
    const old = this.table;
    const hashes = this.hashes;
    this.table = new Int32Array(length);
    this.hashes = new Int32Array(length);
    for (let i = 0; i < old.length; i++) if (old[i] !== 0) this.place(old[i]! - 1, hashes[i]!);
  }
}
