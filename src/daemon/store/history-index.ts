/**
 * The id indexes of a file history's buckets (history.ts): where each document is in its
 * bucket file, read from the frame headers (no JSON parsing), brought up to date with the file
 * when asked, and cached for a few buckets only.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { damagedLine, scanFrames, type HistoryFinding } from './history-check.js';

/** Buckets whose id index is kept in memory; older ones are re-read on demand. */
const INDEX_CACHE_BUCKETS = 4;
/** A bucket file is indexed this much at a time, so that a large one does not hold the event loop. */
const INDEX_CHUNK = 8 << 20;

/**
 * Where a document is, and the tags it was put with (listing reads tags, not documents).
 * `damaged`: the only copy of the id is a line that fails its check (its header still names it).
 */
export type IndexEntry = {
  readonly offset: number;
  readonly length: number;
  readonly tags: readonly string[];
  readonly damaged?: true;
};

/** An id with its tags, as a listing gives them. */
export type ListedEntry = { readonly id: string; readonly tags: readonly string[] };

/** A bucket's id index, built from its file up to `covered` bytes (whole lines). */
interface BucketIndex {
  readonly entries: Map<string, IndexEntry>;
  covered: number;
  /** Its undamaged entries, newest id first: made when first listed, dropped when the index grows. */
  listed: readonly ListedEntry[] | null;
}

/** Reads from `position` into `buf`; returns the bytes read (a seam for tests). */
export type ReadAt = (fh: FileHandle, buf: Buffer, position: number) => Promise<number>;

/** The id indexes of the buckets of history directory `dir`, the last few read kept. */
export class BucketIndexes {
  /** Id indexes of the buckets read last, least recently used first. */
  private readonly indexes = new Map<string, BucketIndex>();
  /**
   * The index of the last bucket a search passed through without caching it (a listing of
   * many buckets in a row would otherwise evict, least recently used first, the very bucket it
   * reads next time): kept until the next such bucket, so a search's parts, and the reads of
   * the documents it found there, share it.
   */
  private passing: { readonly bucket: string; readonly index: BucketIndex } | null = null;
  /** A bucket's index being brought up to date: one at a time per bucket. */
  private readonly indexing = new Map<string, Promise<BucketIndex | null>>();

  constructor(
    private readonly dir: string,
    private readonly readAt: ReadAt,
    /** Told of each damaged line found. */
    private readonly report: (finding: HistoryFinding) => void,
  ) {}

  /** Drops the cached index of `bucket`: it is read again from the start when next needed. */
  forget(bucket: string): void {
    this.indexes.delete(bucket);
    if (this.passing?.bucket === bucket) this.passing = null;
  }

  /**
   * The id index of `bucket`, brought up to date with its file (null when there is no file):
   * the cached index is extended by the frames appended since it was read. `readable` says, once
   * the bucket's pending appends are flushed, how far its file holds data to read now (Infinity:
   * to its end); it is called while no other update of the bucket's index runs.
   */
  async index(bucket: string, readable: () => Promise<number>): Promise<Map<string, IndexEntry> | null> {
    return (await this.indexOf(bucket, readable))?.entries ?? null;
  }

  /**
   * The undamaged ids of `bucket` with their tags, newest first (a damaged record's tags cannot
   * be trusted: it is reported, not listed), brought up to date as `index` is. Sorted once per
   * change of the bucket, not per call: a bucket no longer written to is sorted once.
   */
  async listed(bucket: string, readable: () => Promise<number>, passing = false): Promise<readonly ListedEntry[]> {
    const index = await this.indexOf(bucket, readable, passing);
    if (!index) return [];
    if (index.listed === null) {
      const listed: ListedEntry[] = [];
      for (const [id, e] of index.entries) if (!e.damaged) listed.push({ id, tags: e.tags });
      index.listed = listed.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    }
    return index.listed;
  }

  private async indexOf(bucket: string, readable: () => Promise<number>, passing = false): Promise<BucketIndex | null> {
    for (;;) {
      const under = this.indexing.get(bucket);
      if (!under) break;
      await under.catch(() => undefined);
    }
    const update = this.update(bucket, readable, passing);
    this.indexing.set(bucket, update);
    try {
      return await update;
    } finally {
      if (this.indexing.get(bucket) === update) this.indexing.delete(bucket);
    }
  }

  private async update(bucket: string, readable: () => Promise<number>, passing = false): Promise<BucketIndex | null> {
    const end = await readable();
    let fh: FileHandle;
    try {
      fh = await open(join(this.dir, `${bucket}.jsonl`), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.forget(bucket);
      return null;
    }
    try {
      // An appender's file goes on past its data with the zeros it writes ahead.
      const size = Math.min((await fh.stat()).size, end);
      const passed = this.passing?.bucket === bucket ? this.passing.index : undefined;
      let index = this.indexes.get(bucket) ?? passed;
      // Shorter than what was indexed: its torn tail was cut, or it was pruned and written anew.
      if (!index || size < index.covered) index = { entries: new Map(), covered: 0, listed: null };
      if (size > index.covered) {
        await this.indexRange(fh, index, size, `${bucket}.jsonl`);
        index.listed = null;
      }
      // The bucket passed last stays where it is, read by anything, until the cache has room.
      if ((passing || passed) && !this.indexes.has(bucket) && this.indexes.size >= INDEX_CACHE_BUCKETS) {
        this.passing = { bucket, index };
        return index;
      }
      if (this.passing?.bucket === bucket) this.passing = null;
      this.indexes.delete(bucket);
      this.indexes.set(bucket, index);
      if (this.indexes.size > INDEX_CACHE_BUCKETS) this.indexes.delete(this.indexes.keys().next().value!);
      return index;
    } finally {
      await fh.close();
    }
  }

  /**
   * Indexes the whole lines of `fh` from `index.covered` to `size`, a chunk at a time. A damaged
   * line is reported; an id its header still names is indexed as damaged unless a good copy is.
   */
  private async indexRange(fh: FileHandle, index: BucketIndex, size: number, file: string): Promise<void> {
    let carry: Buffer | null = null; // the incomplete last line of the chunk before
    let position = index.covered;
    while (position < size) {
      const chunk = Buffer.allocUnsafe(Math.min(INDEX_CHUNK, size - position));
      const read = await this.readAt(fh, chunk, position);
      if (read <= 0) break;
      position += read;
      const buf: Buffer = carry ? Buffer.concat([carry, chunk.subarray(0, read)]) : chunk.subarray(0, read);
      const start = position - buf.length; // file offset of buf[0]
      const end = buf.lastIndexOf(0x0a) + 1; // whole lines only
      const onBad = (at: number, lf: number): void => {
        const finding = damagedLine(file, buf, at, lf, start + at);
        this.report(finding);
        const id = finding.instanceId;
        if (id !== undefined && !index.entries.has(id))
          index.entries.set(id, { offset: start + at, length: lf + 1 - at, tags: [], damaged: true });
      };
      for (const f of scanFrames(buf.subarray(0, end), onBad)) {
        const [id, ...tags] = f.key.split('|');
        index.entries.set(id!, { offset: start + f.offset, length: f.length, tags });
      }
      index.covered = start + end;
      carry = end < buf.length ? Buffer.from(buf.subarray(end)) : null;
    }
  }
}
