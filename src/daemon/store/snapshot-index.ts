import type { FileHandle } from 'node:fs/promises';
import { EntryRanges } from './snapshot-copy.js';
import { SNAPSHOT_SLICE_MS } from './snapshot-write.js';
import type { StoreLogger } from './durable-store.js';

/**
 * A snapshot's layout, as SnapshotCopy writes it after the state: the offset of the large
 * collection's first entry, and the byte length of each entry's `"key":value`, in order, one
 * comma apart.
 */
export interface SnapshotLayout {
  readonly at: number;
  readonly lengths: readonly unknown[];
}

/**
 * The layout a parsed snapshot gives for its collection `key`, or null when it has none (a
 * snapshot written before layouts, or at once by JSON.stringify) or one of another shape. Its
 * numbers are checked against the file's bytes by SnapshotIndex, not here.
 */
export function layoutOf(snapshot: { readonly layout?: unknown }, key: string): SnapshotLayout | null {
  const layout = snapshot.layout as { collection?: unknown; at?: unknown; lengths?: unknown } | null | undefined;
  if (typeof layout !== 'object' || layout === null || layout.collection !== key) return null;
  if (!Number.isSafeInteger(layout.at) || (layout.at as number) < 1 || !Array.isArray(layout.lengths)) return null;
  return { at: layout.at as number, lengths: layout.lengths as unknown[] };
}

/** Bytes read from the file at a time: about 800 waiting executions. */
const CHUNK = 1 << 20;
/** A key longer than this is not looked for: its entry gets no range (it is serialized instead). */
const KEY_WINDOW = 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Runs `index` a slice at a time (`pause` before each, given the last one's duration) until it
 * is done or `stopped()`: its outcome, or the error that stopped it, or null when stopped.
 */
export async function indexInSlices(
  index: SnapshotIndex,
  pause: (tookMs: number) => Promise<void>,
  stopped: () => boolean,
  sliceEntries?: number,
): Promise<IndexOutcome | { readonly err: unknown } | null> {
  try {
    let took = 0;
    for (;;) {
      await pause(took);
      if (stopped()) return null;
      const started = performance.now();
      if (await index.step(SNAPSHOT_SLICE_MS, sliceEntries)) break;
      took = performance.now() - started;
    }
  } catch (err) {
    return { err };
  }
  return stopped() ? null : index.outcome();
}

/** What indexing a loaded snapshot found. */
export type IndexOutcome = { readonly ranges: EntryRanges } | { readonly mismatch: string };

/**
 * Indexes the snapshot loaded at open (indexInSlices) and calls `indexed` with its ranges, or
 * null when it was stopped or could not be indexed (the file is then closed), in the turn the
 * index ends: the records applied until then are all known to the caller. Logs what came of it.
 */
export async function indexLoadedSnapshot(
  index: SnapshotIndex,
  file: FileHandle,
  pause: (tookMs: number) => Promise<void>,
  stopped: () => boolean,
  sliceEntries: number | undefined,
  logger: StoreLogger,
  indexed: (ranges: EntryRanges | null) => void,
): Promise<void> {
  const started = performance.now();
  const outcome = await indexInSlices(index, pause, stopped, sliceEntries);
  if (outcome && 'ranges' in outcome) {
    indexed(outcome.ranges);
    logger.info(
      { entries: outcome.ranges.size, ms: Math.round(performance.now() - started) },
      'store: indexed the snapshot loaded at open, for the next checkpoint to copy from',
    );
    return;
  }
  indexed(null);
  if (outcome)
    logger.warn(
      outcome,
      'mismatch' in outcome
        ? 'store: the snapshot loaded at open does not match its layout; the next checkpoint serializes every entry'
        : 'store: the snapshot loaded at open could not be read again to index it; the next checkpoint serializes every entry',
    );
  await file.close().catch(() => undefined);
}

/**
 * Finds where each entry of a loaded snapshot's large collection lies in its file, from the
 * layout the file ends with, so the first checkpoint after a start can copy the entries no
 * record has changed since as bytes of that file, as every later checkpoint does.
 *
 * The layout is checked against the bytes before anything is taken from it: each entry must
 * begin where the lengths say, right after the `{` or `,` before it, with its key (once in the
 * file) and a colon, and the collection must close right after the last one. A layout that
 * fails any of these is not used at all (damaged, shifted, cut short, another file's); the
 * checkpoint then serializes every entry, as it did before layouts. A key whose bytes are not
 * the ones JSON.stringify writes for it gets no range (its entry is serialized). What the
 * checks do not prove is that each range holds one whole entry: lengths edited by hand to merge
 * two neighbours would pass. Only a scan of all the JSON could, at a cost the layout exists to
 * avoid (docs/decisions/013-incremental-checkpoints.md); the layout is written by the same
 * atomic write as the state, and trusted that far, as the state itself is. Checking the keys means
 * reading the file again, a chunk at a time: the parse at open dropped its bytes, and holding
 * them (the whole snapshot) for this would cost more than reading them.
 *
 * It runs a slice at a time, like a snapshot copy: `step` until it returns true, then `outcome`.
 * What it finds describes the file as loaded: the caller drops the ranges of entries changed
 * since (the journal replayed at open, commits made while it ran).
 */
export class SnapshotIndex {
  private readonly ranges = new EntryRanges();
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  /** The file's bytes [bufStart, bufEnd) are in `buf`. */
  private bufStart = 0;
  private bufEnd = 0;
  private next = 0;
  /** Where entry `next` begins. */
  private pos: number;
  private result: IndexOutcome | null = null;

  /**
   * `file`: the snapshot as loaded, `size` bytes; `collection()`: the live collection (looked up
   * each time: the state may replace the object).
   */
  constructor(
    private readonly file: FileHandle,
    private readonly size: number,
    private readonly layout: SnapshotLayout,
    private readonly collection: () => Record<string, unknown>,
  ) {
    this.pos = layout.at;
  }

  /** Indexes entries for about `budgetMs` (at most `maxEntries`); true once done. */
  async step(budgetMs: number, maxEntries = Infinity): Promise<boolean> {
    if (this.result) return true;
    const until = performance.now() + budgetMs;
    const { lengths } = this.layout;
    for (let n = 1; this.next < lengths.length; n++) {
      const length = lengths[this.next];
      if (!Number.isSafeInteger(length) || (length as number) < 4)
        return this.fail(`entry ${this.next}'s length is not a length`);
      const at = this.pos;
      if (at + (length as number) >= this.size) return this.fail(`entry ${this.next} runs past the end of the file`);
      if (!(await this.load(at - 1, Math.min(at + KEY_WINDOW, this.size)))) return this.fail('the file ends early');
      if (this.byte(at - 1) !== (this.next === 0 ? 0x7b : 0x2c))
        return this.fail(`no "{" or "," before entry ${this.next}, at byte ${at}`);
      if (this.byte(at) !== QUOTE) return this.fail(`entry ${this.next} does not begin with its key, at byte ${at}`);
      const key = this.keyAt(at);
      if (key === false) return this.fail(`entry ${this.next}'s key is not followed by a colon, at byte ${at}`);
      if (key !== null && this.ranges.has(key))
        return this.fail(`entry ${this.next}'s key is an earlier entry's, at byte ${at}`);
      if (key !== null && Object.hasOwn(this.collection(), key)) this.ranges.set(key, at, length as number);
      this.pos = at + (length as number) + 1;
      this.next++;
      if (n >= maxEntries || ((n & 63) === 0 && performance.now() >= until)) return false;
    }
    // The collection closes right after its last entry (or its "{", when it has none).
    const close = lengths.length === 0 ? this.pos : this.pos - 1;
    if (!(await this.load(close - 1, close + 1))) return this.fail('the file ends early');
    if (lengths.length === 0 && this.byte(close - 1) !== 0x7b) return this.fail(`no "{" before byte ${close}`);
    if (this.byte(close) !== 0x7d) return this.fail(`the collection does not close at byte ${close}`);
    this.result = { ranges: this.ranges };
    return true;
  }

  /** Once `step` has returned true: the ranges found, or why the layout was not used. */
  outcome(): IndexOutcome {
    if (!this.result) throw new Error('the snapshot is not indexed yet');
    return this.result;
  }

  private fail(mismatch: string): true {
    this.result = { mismatch };
    return true;
  }

  private byte(offset: number): number {
    return this.buf[offset - this.bufStart]!;
  }

  /**
   * The key of the entry at `at`: null when it cannot be copied as it lies (too long to look
   * for, or not the bytes JSON.stringify writes for it, which the copy checks), false when it
   * is not a JSON string followed by a colon.
   */
  private keyAt(at: number): string | null | false {
    const limit = this.bufEnd - 1; // room for the colon
    let plain = true; // no escape, no byte outside ASCII: the bytes are the key's characters
    let i = at + 1;
    while (i < limit) {
      const b = this.byte(i);
      if (b === QUOTE) break;
      if (b === BACKSLASH) {
        plain = false;
        i += 2;
        continue;
      }
      if (b >= 0x80) plain = false;
      i++;
    }
    if (i >= limit) return null;
    if (this.byte(i + 1) !== 0x3a) return false;
    if (plain) return this.buf.toString('latin1', at + 1 - this.bufStart, i - this.bufStart);
    const raw = this.buf.subarray(at - this.bufStart, i + 1 - this.bufStart);
    let key: string;
    try {
      key = JSON.parse(raw.toString('utf8')) as string;
    } catch {
      return false;
    }
    // Invalid UTF-8 decodes to U+FFFD, which JSON.stringify does not write as those bytes.
    return Buffer.from(JSON.stringify(key)).equals(raw) ? key : null;
  }

  /** Makes the file's bytes [from, to) readable with `byte`; false when the file is shorter. */
  private async load(from: number, to: number): Promise<boolean> {
    if (from >= this.bufStart && to <= this.bufEnd) return true;
    const want = Math.min(CHUNK, this.size - from);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await this.file.read(this.buf, got, want - got, from + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    this.bufStart = from;
    this.bufEnd = from + got;
    return to <= this.bufEnd;
  }
}
