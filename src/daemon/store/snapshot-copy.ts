/**
 * Where each entry of a snapshot file's large collection lies in that file: the bytes of its
 * `"key":value` text. The store keeps one for its current snapshot and drops an entry's range
 * as soon as a record changes or removes the entry, so what remains are the entries whose text
 * in that file is still exactly what JSON.stringify would give now: the next checkpoint copies
 * those bytes instead of serializing the entries again.
 */
export class EntryRanges {
  private readonly index = new Map<string, number>();
  // Two plain arrays of numbers, not an object per entry: they live between checkpoints, one
  // pair of numbers per waiting execution.
  private readonly offsets: number[] = [];
  private readonly lengths: number[] = [];

  set(key: string, offset: number, length: number): void {
    this.index.set(key, this.offsets.length);
    this.offsets.push(offset);
    this.lengths.push(length);
  }

  /** Forgets `key`'s range: the entry changed, or is gone. */
  readonly delete = (key: string): void => {
    this.index.delete(key);
  };

  has(key: string): boolean {
    return this.index.has(key);
  }

  /** `key`'s range, or undefined when it has none. */
  get(key: string): SourceRange | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : { offset: this.offsets[i]!, length: this.lengths[i]!, key };
  }

  get size(): number {
    return this.index.size;
  }
}

/**
 * Bytes to copy from the previous snapshot file: one or more whole entries, with the commas
 * between them. `key` is the first entry's, to check the bytes are where they should be.
 */
export interface SourceRange {
  readonly offset: number;
  readonly length: number;
  readonly key: string;
}

/** A piece of a snapshot, in order: bytes to write, or bytes to copy from the previous snapshot. */
export type SnapshotPiece = Buffer | SourceRange;

const COMMA = Buffer.from(',');

/** Entry lengths serialized per slice of the layout. */
const LAYOUT_SLICE = 16_384;

/**
 * A snapshot of the state as it was at one instant, serialized a slice at a time while commits
 * go on, instead of in one JSON.stringify that blocks the event loop for as long as the state is
 * big, at every checkpoint (docs/decisions/006-checkpoints-in-slices.md).
 *
 * Everything but one large collection (an object of entries: the executions) is serialized at
 * once, when the copy is made. The collection's entries are serialized later, in slices, in
 * their order at that instant. An entry a record is about to change or remove is serialized just
 * before (`touch`, copy on write), so each entry is copied as it was at the instant, and the
 * text is exactly what JSON.stringify would have given then. Entries created after the instant
 * are not in the snapshot: the journal after its seq holds them.
 *
 * Incremental: given the previous snapshot's `EntryRanges`, an entry unchanged since that
 * snapshot is not serialized at all; its bytes are copied from that file (runs of neighbours in
 * one range). A checkpoint then costs what changed since the last one, not the state's size: a
 * daemon with 100,000 executions waiting for days serializes only the few that moved.
 *
 * The file ends with its layout, after the state: `"layout":{"collection":key,"at":offset,
 * "lengths":[...]}`, where the collection's first entry begins and the byte length of each
 * entry's `"key":value`, in order, one comma apart. The store that loads the file finds where
 * each entry lies from it (SnapshotIndex), so the first checkpoint after a start copies bytes too.
 */
export class SnapshotCopy {
  private readonly collection: Record<string, unknown>;
  private readonly keys: string[];
  /**
   * The entries the copy has reached, in `keys` order: built a slice at a time. An index of
   * every key made at the instant (a Map of key to position) held the event loop, on top of
   * listing them (docs/decisions/013-incremental-checkpoints.md).
   */
  private readonly reached = new Set<string>();
  /** Entries copied by touch() before the copy reached them: their text at the instant. */
  private readonly early = new Map<string, Buffer | SourceRange | null>();
  /**
   * Each entry's `"key":value` bytes, or its range in the previous snapshot, by position
   * (null: an entry JSON leaves out; undefined: not copied yet).
   */
  private readonly parts: Array<Buffer | SourceRange | null | undefined>;
  /** The byte length of each entry written, in order, as copied: the snapshot's layout. */
  private readonly lengths: number[] = [];
  /** The layout's text, serialized a slice at a time once every entry is copied. */
  private readonly layoutText: string[] = [];
  private layoutCursor = 0;
  private readonly previous: EntryRanges | null;
  /** Entries a record changed (or created, or removed) since the instant: their text here is out of date. */
  private readonly changed = new Set<string>();
  /** Where each entry lies in this snapshot, as drained. */
  private readonly ranges = new EntryRanges();
  private cursor = 0;
  /** Entries before this position were given out by drain(). */
  private drained = 0;
  private anyEntry = false;
  private headDrained = false;
  private tailDrained = false;
  private readonly head: string;
  /** What ends the file, after the layout's lengths. */
  private readonly tail: string;
  /** Bytes drained so far: the offset in the new file of what drains next. */
  private out = 0;
  /** Bytes given out as ranges of the previous snapshot. */
  private reused = 0;

  /**
   * A copy of `state`, to be written as `{...meta, state, layout}`; `key` names its large collection.
   * `previous`, when given, holds the entries of the previous snapshot file unchanged since
   * (the copy takes it over: nobody may change it while the copy runs). The state's keys in
   * `leaveOut` are not written. `keys`, when given, lists the collection's keys exactly as
   * Object.keys would, without enumerating it (see StoreOptions.snapshotCollection). Throws when
   * `state[key]` is not an object of entries.
   */
  constructor(
    meta: Record<string, unknown>,
    state: object,
    key: string,
    previous: EntryRanges | null = null,
    leaveOut: readonly string[] = [],
    keys: (collection: Record<string, unknown>) => string[] = Object.keys,
  ) {
    const collection = (state as Record<string, unknown>)[key];
    if (typeof collection !== 'object' || collection === null || Array.isArray(collection)) {
      throw new TypeError(`the snapshot's large collection "${key}" is not an object of entries`);
    }
    this.collection = collection as Record<string, unknown>;
    this.previous = previous;
    this.keys = keys(this.collection);
    this.parts = new Array<Buffer | SourceRange | null | undefined>(this.keys.length);
    // The rest of the state now, in its own key order, as JSON.stringify would lay it out.
    const before: string[] = [];
    const after: string[] = [];
    let seen = false;
    for (const [k, value] of Object.entries(state)) {
      if (k === key) {
        seen = true;
        continue;
      }
      if (leaveOut.includes(k)) continue;
      const json = JSON.stringify(value);
      if (json !== undefined) (seen ? after : before).push(`${JSON.stringify(k)}:${json}`);
    }
    const metaJson = JSON.stringify(meta);
    const open = `${metaJson.slice(0, -1)}${metaJson.length > 2 ? ',' : ''}"state":{`;
    this.head = `${open}${before.map((p) => `${p},`).join('')}${JSON.stringify(key)}:{`;
    const layoutHead = `,"layout":{"collection":${JSON.stringify(key)},"at":${Buffer.byteLength(this.head)},"lengths":[`;
    this.layoutText.push(`}${after.map((p) => `,${p}`).join('')}}${layoutHead}`);
    this.tail = ']}}';
  }

  /**
   * Call before a record changes, creates or removes entry `k`: copies it now if it is one still
   * to copy, and notes that this snapshot's text of it will be out of date.
   */
  readonly touch = (k: string): void => {
    if (this.changed.has(k)) return; // its first touch saw it as it was at the instant
    this.changed.add(k);
    // Reached already: copied. Not in the collection: a record is about to create it, after the
    // instant, so it is not in this snapshot (every record that creates an entry touches it first).
    if (this.reached.has(k) || !Object.hasOwn(this.collection, k)) return;
    this.early.set(k, this.entryPart(k));
  };

  /**
   * Copies entries in order until `maxEntries` are copied or `budgetMs` has passed, then (in
   * later steps) serializes the layout; true once all of it is copied.
   */
  step(budgetMs: number, maxEntries = Infinity): boolean {
    const until = performance.now() + budgetMs;
    let n = 0;
    while (this.cursor < this.keys.length) {
      const at = this.cursor++;
      const k = this.keys[at]!;
      this.reached.add(k);
      const early = this.early.get(k);
      let part: Buffer | SourceRange | null;
      if (early !== undefined) {
        // Copied already, by touch().
        this.early.delete(k);
        part = early;
      } else {
        part = this.entryPart(k);
        n++;
      }
      this.parts[at] = part;
      if (part !== null) this.lengths.push(part.length);
      if (n >= maxEntries || ((n & 63) === 0 && n > 0 && performance.now() >= until)) return false;
    }
    // The layout: a few hundred kB of numbers with 100,000 entries, so in slices too.
    while (this.layoutCursor < this.lengths.length) {
      const end = Math.min(this.layoutCursor + LAYOUT_SLICE, this.lengths.length);
      const numbers = this.lengths.slice(this.layoutCursor, end).join(',');
      this.layoutText.push(this.layoutCursor === 0 ? numbers : `,${numbers}`);
      this.layoutCursor = end;
      if (performance.now() >= until) return false;
    }
    return true;
  }

  /**
   * The snapshot copied since the last call, in order, to append to the file: the head first,
   * then the entries up to where the copy has reached, and the rest once it is complete. Ranges
   * of neighbouring entries of the previous snapshot come as one. What it returns is dropped
   * from the copy, so a big state is never held twice.
   */
  drain(): SnapshotPiece[] {
    const out: SnapshotPiece[] = [];
    if (!this.headDrained) {
      this.emit(out, Buffer.from(this.head));
      this.headDrained = true;
    }
    for (; this.drained < this.cursor; this.drained++) {
      const part = this.parts[this.drained]!;
      this.parts[this.drained] = undefined;
      if (part === null) continue;
      const key = this.keys[this.drained]!;
      const comma = this.anyEntry;
      this.anyEntry = true;
      if (Buffer.isBuffer(part)) {
        if (comma) this.emit(out, COMMA);
        this.ranges.set(key, this.out, part.length);
        this.emit(out, part);
        continue;
      }
      const last = out.at(-1);
      if (comma && last !== undefined && !Buffer.isBuffer(last) && last.offset + last.length + 1 === part.offset) {
        // The next entry of the previous file too: one range, commas included.
        out[out.length - 1] = { offset: last.offset, length: part.offset + part.length - last.offset, key: last.key };
        this.ranges.set(key, this.out + 1, part.length);
        this.out += part.length + 1;
        this.reused += part.length + 1;
        continue;
      }
      if (comma) this.emit(out, COMMA);
      this.ranges.set(key, this.out, part.length);
      this.out += part.length;
      this.reused += part.length;
      out.push(part);
    }
    if (this.drained >= this.keys.length && !this.tailDrained) {
      // What follows the entries: the rest of the state, then the layout as serialized so far.
      for (const text of this.layoutText) this.emit(out, Buffer.from(text));
      this.layoutText.length = 0;
      if (this.layoutCursor >= this.lengths.length) {
        this.emit(out, Buffer.from(this.tail));
        this.tailDrained = true;
      }
    }
    return out;
  }

  /** Bytes drained so far: the snapshot's size, once it is complete. */
  get bytes(): number {
    return this.out;
  }

  /** Of `bytes`, those copied from the previous snapshot rather than serialized. */
  get reusedBytes(): number {
    return this.reused;
  }

  /**
   * Once drained whole: where each entry lies in this snapshot, for those no record has touched
   * since the instant. Call it with no record applied between the last `touch` it should see
   * and handing the result to whoever keeps it up to date (the store, synchronously).
   */
  unchangedRanges(): EntryRanges {
    if (!this.tailDrained) throw new Error('the snapshot is not drained whole yet');
    for (const k of this.changed) this.ranges.delete(k);
    return this.ranges;
  }

  private emit(out: SnapshotPiece[], bytes: Buffer): void {
    out.push(bytes);
    this.out += bytes.length;
  }

  private entryPart(k: string): Buffer | SourceRange | null {
    const range = this.previous?.get(k);
    if (range !== undefined) return range;
    // An entry whose value JSON cannot hold (undefined, a function) is left out, as JSON.stringify does.
    const json = JSON.stringify(this.collection[k]) as string | undefined;
    return json === undefined ? null : Buffer.from(`${JSON.stringify(k)}:${json}`);
  }
}
