import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { AppendFile } from './append-file.js';
import { decodeFrames, frameBytes, type JsonPieces } from './frame.js';
import { ensurePrivateDir, Freeings } from './fs-util.js';

const BUCKET_RE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
/** Buckets whose id index is kept in memory; older ones are re-read on demand. */
const INDEX_CACHE_BUCKETS = 4;
/** A bucket file is indexed this much at a time, so that a large one does not hold the event loop. */
const INDEX_CHUNK = 8 << 20;
/** Buckets kept open for appending. */
const OPEN_WRITERS = 4;

/** Where a document is, and the tags it was put with (listing reads tags, not documents). */
type IndexEntry = { readonly offset: number; readonly length: number; readonly tags: readonly string[] };

/** A bucket's id index, built from its file up to `covered` bytes (whole lines). */
interface BucketIndex {
  readonly entries: Map<string, IndexEntry>;
  covered: number;
}

/** Reads from `position` into `buf`; returns the bytes read (a seam for tests). */
type ReadAt = (fh: FileHandle, buf: Buffer, position: number) => Promise<number>;

/** What `prune` gave back. */
export interface PruneReport {
  readonly buckets: number;
  readonly bytes: number;
}

/**
 * Append-only history of finished executions, kept out of the live snapshot so that neither
 * memory nor restart time grows with history.
 *
 * Documents are grouped in day buckets, `history/YYYY-MM-DD.jsonl`, one frame (frame.ts) per
 * document with the document's id as the frame key. The caller picks the bucket from the id
 * (execution ids are time-ordered, so the bucket is the day the execution started): a read by
 * id opens exactly one file. A bucket's id index is built by scanning frame headers (no JSON
 * parsing) and cached for a few buckets only.
 *
 * Retention deletes whole bucket files whose last write is older than the cut-off, which gives
 * the disk space back at once; a document therefore lives at least the retention after it was
 * written. Writing a document twice is harmless: the later copy wins.
 */
export class History {
  /** Open appenders by bucket, least recently used first. */
  private readonly writers = new Map<string, Promise<AppendFile>>();
  /** The bucket last put to: the last of `writers` while it is open. */
  private lastUsed: string | null = null;
  /** The appender of a bucket once it is open (the one most put to): puts to it append at once. */
  private ready: { readonly bucket: string; readonly file: AppendFile } | null = null;
  /** Appenders being closed after eviction: a reopen waits for them. */
  private readonly closing = new Map<string, Promise<void>>();
  /** Buckets pruned, their blocks being freed a chunk at a time, one after the other (Freeings). */
  private readonly freeings = new Freeings();
  /** Id indexes of the buckets read last, least recently used first. */
  private readonly indexes = new Map<string, BucketIndex>();
  /** A bucket's index being brought up to date: one at a time per bucket. */
  private readonly indexing = new Map<string, Promise<Map<string, IndexEntry> | null>>();

  private constructor(
    private readonly dir: string,
    private readonly readAt: ReadAt,
  ) {}

  /**
   * Opens (creating 0700) the history directory. `readAt` reads part of a bucket file to index
   * it (a seam for tests that need to act between those reads).
   */
  static async open(dir: string, options: { readAt?: ReadAt } = {}): Promise<History> {
    await ensurePrivateDir(dir);
    // A crash leaves the zeros written ahead of the data in the buckets being appended to:
    // cut now, so that a bucket nobody appends to again reads to its last frame and no further.
    // A bucket that cannot be read is skipped here (its zeros, if any, are only read past).
    for (const name of await readdir(dir)) if (BUCKET_RE.test(name)) await cutZeroTail(join(dir, name)).catch(() => undefined);
    return new History(dir, options.readAt ?? (async (fh, buf, position) => (await fh.read(buf, 0, buf.length, position)).bytesRead));
  }

  /**
   * Appends `doc` under `id` to `bucket` (YYYY-MM-DD); resolves once it is durable. `tags`
   * (no spaces or `|`) are kept in the frame header, so `list` can filter without reading documents.
   */
  put(bucket: string, id: string, doc: unknown, tags: readonly string[] = []): Promise<void> {
    return this.putJson(bucket, id, JSON.stringify(doc), tags);
  }

  /** Like `put`, for a document already serialized to JSON text (whole, or in pieces). */
  putJson(bucket: string, id: string, json: string | JsonPieces, tags: readonly string[] = []): Promise<void> {
    try {
      assertBucket(bucket);
      if (/[ |]/.test(id) || tags.some((tag) => /[ |]/.test(tag))) throw new TypeError('history ids and tags may not hold spaces or |');
    } catch (err) {
      return Promise.reject(err);
    }
    // Nearly every put goes to today's bucket, open already: appended now, not after a turn of
    // awaits (an async put was 1.1 KB of garbage and 1.4 % of the daemon's main thread).
    const ready = this.ready;
    if (ready !== null && ready.bucket === bucket && !ready.file.broken) return this.appendTo(ready.file, id, json, tags);
    return this.putOpening(bucket, id, json, tags);
  }

  private async putOpening(bucket: string, id: string, json: string | JsonPieces, tags: readonly string[]): Promise<void> {
    let opening = this.writer(bucket);
    let writer = await opening;
    // Closed meanwhile by a prune of its bucket (an execution archived into a day the prune
    // found old): put to the bucket's next appender, which opens once the prune is done.
    if (writer.closed && !writer.broken && this.writers.get(bucket) !== opening) {
      opening = this.writer(bucket);
      writer = await opening;
    }
    if (writer.broken) {
      // A write failed (disk full, I/O error): start again on a fresh handle, once the broken one
      // is closed (zeros it is still writing ahead must not land on the new one's data) and the
      // torn tail is cut.
      if (this.writers.get(bucket) === opening) {
        this.writers.delete(bucket);
        this.retire(bucket, opening);
        // Read again from the start once it is closed: its close cuts the failed write's bytes,
        // where the next appender's frames then go.
        this.indexes.delete(bucket);
      }
      opening = this.writer(bucket);
      writer = await opening;
    }
    if (this.writers.get(bucket) === opening) this.ready = { bucket, file: writer };
    return this.appendTo(writer, id, json, tags);
  }

  /**
   * Appends the document's frame; resolves once it is durable. The bucket's index is not kept up
   * here but read from the file when next needed: kept up by every put, a cached index of today's
   * bucket grew under load by an entry per execution (1.1 s to build and ~50 MB for 240,000), and
   * each new entry of that long-lived Map was promoted by the scavenger, which put a millisecond on
   * the resume loads' p99.
   */
  private appendTo(writer: AppendFile, id: string, json: string | JsonPieces, tags: readonly string[]): Promise<void> {
    const frame = frameBytes(0, json, tags.length === 0 ? id : `${id}|${tags.join('|')}`);
    try {
      return writer.append(frame).durable;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The latest document stored under `id` in `bucket`, or null. */
  async get<T = unknown>(bucket: string, id: string): Promise<T | null> {
    assertBucket(bucket);
    const index = await this.index(bucket);
    const at = index?.get(id);
    if (!index || !at) return null;
    const fh = await open(join(this.dir, `${bucket}.jsonl`), 'r');
    try {
      const buf = Buffer.alloc(at.length);
      await fh.read(buf, 0, at.length, at.offset);
      const frame = decodeFrames<T>(buf).frames[0];
      return frame && frame.key.split('|')[0] === id ? frame.value : null;
    } finally {
      await fh.close();
    }
  }

  /** Every id in `bucket` with its tags (the latest copy of each), newest id first. */
  async list(bucket: string): Promise<Array<{ id: string; tags: readonly string[] }>> {
    assertBucket(bucket);
    const index = await this.index(bucket);
    if (!index) return [];
    return [...index.entries()].map(([id, e]) => ({ id, tags: e.tags })).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  /** The bucket names on disk, newest first. */
  async buckets(): Promise<string[]> {
    return (await readdir(this.dir))
      .map((name) => BUCKET_RE.exec(name)?.[1])
      .filter((b): b is string => b !== undefined)
      .sort()
      .reverse();
  }

  /**
   * Deletes every bucket last written before `cutoff`. Writers to a bucket being pruned wait
   * (an execution that started long ago may be archived into it right now); if it was written
   * meanwhile it is kept. Their blocks are freed gradually once the directory is fsynced.
   */
  async prune(cutoff: Date): Promise<PruneReport> {
    return this.freeings.unlinkIn(this.dir, (unlink) => this.pruneWith(cutoff, unlink));
  }

  /** prune(), its files removed through `unlink`. */
  private async pruneWith(cutoff: Date, unlink: (path: string) => Promise<void>): Promise<PruneReport> {
    let buckets = 0;
    let bytes = 0;
    for (const name of await readdir(this.dir)) {
      const m = BUCKET_RE.exec(name);
      if (!m) continue;
      const bucket = m[1]!;
      const path = join(this.dir, name);
      const before = await stat(path).catch(() => null);
      if (!before || before.mtimeMs >= cutoff.getTime()) continue;
      // Checked again once its appender is closed (which cuts the zeros written ahead and keeps
      // the time of the last write).
      let release!: () => void;
      const pruning = new Promise<void>((resolve) => (release = resolve));
      const previous = this.closing.get(bucket);
      // Its appender is taken now: one opened from here on waits for this prune (writer()), so
      // awaiting it here would wait for ourselves.
      const writer = this.writers.get(bucket);
      this.writers.delete(bucket);
      if (this.ready?.bucket === bucket) this.ready = null;
      this.closing.set(bucket, pruning);
      try {
        await previous;
        await writer?.then((w) => w.close()).catch(() => undefined);
        // A put came meanwhile (its appender opens once this prune is done): keep the bucket.
        if (this.writers.has(bucket)) continue;
        const now = await stat(path).catch(() => null);
        if (!now || now.mtimeMs >= cutoff.getTime()) continue; // written meanwhile: keep it
        this.indexes.delete(bucket);
        await unlink(path);
        buckets++;
        bytes += now.size;
      } finally {
        if (this.closing.get(bucket) === pruning) this.closing.delete(bucket);
        release();
      }
    }
    return { buckets, bytes };
  }

  /** Resolves once the buckets pruned so far are freed. */
  freed(): Promise<void> {
    return this.freeings.settled();
  }

  /** Flushes and closes every open bucket (and frees what is left of pruned ones at once). */
  async close(): Promise<void> {
    const writers = [...this.writers.values()];
    this.writers.clear();
    this.ready = null;
    await Promise.all([...writers.map(async (w) => (await w).close()), ...this.closing.values()]);
    await this.freeings.finish();
  }

  private writer(bucket: string): Promise<AppendFile> {
    let writer = this.writers.get(bucket);
    if (writer) {
      // Most recently used last. Nearly every put goes to today's bucket, already last: moving
      // it anyway churned the Map's tables in the old generation (see shared/work-count.ts).
      if (bucket !== this.lastUsed) {
        this.writers.delete(bucket);
        this.writers.set(bucket, writer);
        this.lastUsed = bucket;
      }
      return writer;
    }
    const path = join(this.dir, `${bucket}.jsonl`);
    const previous = this.closing.get(bucket) ?? Promise.resolve();
    const opening = previous.then(() => cutTail(path)).then(() => AppendFile.forFile(path, { preallocate: true }));
    // One that cannot open (the tail could not be cut) is not kept: the next put tries again.
    opening.catch(() => {
      if (this.writers.get(bucket) === opening) this.writers.delete(bucket);
    });
    this.writers.set(bucket, opening);
    this.lastUsed = bucket;
    if (this.writers.size > OPEN_WRITERS) {
      const [oldest, evicted] = this.writers.entries().next().value as [string, Promise<AppendFile>];
      this.writers.delete(oldest);
      this.retire(oldest, evicted);
    }
    return opening;
  }

  /**
   * Closes the appender of `bucket` that has left `writers` (evicted, or broken): reopening the
   * bucket, reading it and pruning it wait for that (its last writes, and its zeros cut).
   */
  private retire(bucket: string, writer: Promise<AppendFile>): void {
    if (this.ready?.bucket === bucket) this.ready = null;
    const closed = Promise.resolve(this.closing.get(bucket))
      .then(() => writer)
      .then((w) => w.close())
      .catch(() => undefined);
    this.closing.set(bucket, closed);
    void closed.then(() => {
      if (this.closing.get(bucket) === closed) this.closing.delete(bucket);
    });
  }

  /**
   * The id index of `bucket`, brought up to date with its file (null when there is no file):
   * the cached index is extended by the frames appended since it was read, after the pending
   * appends are flushed.
   */
  private async index(bucket: string): Promise<Map<string, IndexEntry> | null> {
    for (;;) {
      const under = this.indexing.get(bucket);
      if (!under) break;
      await under.catch(() => undefined);
    }
    const update = this.updateIndex(bucket);
    this.indexing.set(bucket, update);
    try {
      return await update;
    } finally {
      if (this.indexing.get(bucket) === update) this.indexing.delete(bucket);
    }
  }

  private async updateIndex(bucket: string): Promise<Map<string, IndexEntry> | null> {
    // What was put so far is read from the file, once it is there: an appender being closed
    // (evicted, broken) first finishes its writes and cuts its zeros; the open one is flushed (a
    // failed append was never acknowledged, and does not keep what is on disk from being read).
    // Only the open one's data as it stands now is read: what is appended meanwhile may be half
    // written over the zeros ahead; the next read takes it in.
    await this.closing.get(bucket);
    const writer = await this.writers.get(bucket)?.catch(() => undefined);
    // A broken appender's file may hold the failed write's bytes after its data (in the page
    // cache): never durable, and cut when it is closed.
    const end = writer ? (writer.broken ? writer.writtenSize : writer.size) : Infinity;
    await writer?.flush().catch(() => undefined);
    let fh: FileHandle;
    try {
      fh = await open(join(this.dir, `${bucket}.jsonl`), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.indexes.delete(bucket);
      return null;
    }
    try {
      // An appender's file goes on past its data with the zeros it writes ahead.
      const size = Math.min((await fh.stat()).size, end);
      let index = this.indexes.get(bucket);
      // Shorter than what was indexed: its torn tail was cut, or it was pruned and written anew.
      if (!index || size < index.covered) index = { entries: new Map(), covered: 0 };
      if (size > index.covered) await this.indexRange(fh, index, size);
      this.indexes.delete(bucket);
      this.indexes.set(bucket, index);
      if (this.indexes.size > INDEX_CACHE_BUCKETS) this.indexes.delete(this.indexes.keys().next().value!);
      return index.entries;
    } finally {
      await fh.close();
    }
  }

  /** Indexes the whole lines of `fh` from `index.covered` to `size`, a chunk at a time. */
  private async indexRange(fh: FileHandle, index: BucketIndex, size: number): Promise<void> {
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
      for (const f of scanFrames(buf.subarray(0, end))) {
        const [id, ...tags] = f.key.split('|');
        index.entries.set(id!, { offset: start + f.offset, length: f.length, tags });
      }
      index.covered = start + end;
      carry = end < buf.length ? Buffer.from(buf.subarray(end)) : null;
    }
  }
}

/** Every readable frame header of a history file, skipping damaged lines rather than stopping. */
function* scanFrames(buf: Buffer): Generator<{ key: string; offset: number; length: number }> {
  let pos = 0;
  while (pos < buf.length) {
    const { frames, badOffset } = decodeFrames(buf.subarray(pos), { keysOnly: true });
    for (const f of frames) yield { key: f.key, offset: pos + f.offset, length: f.length };
    if (badOffset === null) return;
    const lf = buf.indexOf(0x0a, pos + badOffset);
    if (lf < 0) return;
    pos = lf + 1;
  }
}

/** Bytes read at a time when looking for the end of a file's data. */
const TAIL_READ = 1 << 20;

/**
 * Cuts what follows the last whole line of a bucket file: the zeros its appender wrote ahead
 * (left by a crash; AppendFile's `preallocate`) and an incomplete last line (a crash
 * mid-append), so the next append starts a clean line right after the data. A zero byte is
 * never part of a frame (JSON escapes it), so trailing zeros are never data.
 */
async function cutTail(path: string): Promise<void> {
  let fh;
  try {
    fh = await open(path, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const { size, atime, mtime } = await fh.stat();
    const keep = await dataEnd(fh, size);
    if (keep === size) return;
    await fh.truncate(keep);
    // Cutting writes no data: the file keeps the time of its last write, which retention goes by.
    await fh.utimes(atime, mtime);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** The end of the last whole line of the file's first `size` bytes (0 when there is none). */
async function dataEnd(fh: FileHandle, size: number): Promise<number> {
  const buf = Buffer.allocUnsafe(Math.min(size, TAIL_READ));
  let end = size;
  let sawData = false;
  while (end > 0) {
    const from = Math.max(0, end - buf.length);
    const { bytesRead } = await fh.read(buf, 0, end - from, from);
    if (bytesRead < end - from) {
      // The file got shorter meanwhile: look again from its new end.
      end = from + bytesRead;
      sawData = false;
      continue;
    }
    let i = bytesRead - 1;
    if (!sawData) {
      while (i >= 0 && buf[i] === 0) i--; // zeros written ahead
      if (i < 0) {
        end = from;
        continue;
      }
      sawData = true;
    }
    const lf = buf.lastIndexOf(0x0a, i);
    if (lf >= 0) return from + lf + 1;
    end = from;
  }
  return 0;
}

/** Cuts the zeros a crash left after the data of a bucket file nobody appends to now (its last byte is 0). */
async function cutZeroTail(path: string): Promise<void> {
  const fh = await open(path, 'r');
  let last: number | undefined;
  try {
    const { size } = await fh.stat();
    if (size === 0) return;
    const byte = Buffer.alloc(1);
    await fh.read(byte, 0, 1, size - 1);
    last = byte[0];
  } finally {
    await fh.close();
  }
  if (last === 0) await cutTail(path);
}

function assertBucket(bucket: string): void {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(bucket)) throw new TypeError(`history bucket must be YYYY-MM-DD, got ${bucket}`);
}
