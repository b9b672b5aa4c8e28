/**
 * The file history: appends, reads and retention over day buckets, which share its open
 * appenders. Beside it: the frame format (frame.ts), the damage scan (history-check.ts), the
 * findings kept (history-damage.ts), the id indexes (history-index.ts) and the tails cut after
 * a crash (history-tail.ts).
 */
import { open, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { AppendFile } from './append-file.js';
import { decodeFrames, frameBytes, type JsonPieces } from './frame.js';
import {
  listRange,
  type HistoryDamageReport,
  type HistoryStore,
  type ListRange,
  type PruneReport,
} from './history-store.js';
import { ensurePrivateDir, FILE_MODE, fsyncDir, Freeings } from '../disk/durable-files.js';
import { BUCKET_RE, openMarkerPath } from './history-files.js';
import { DamageLog, silentHistoryLogger, type HistoryLogger } from './history-damage.js';
import { BucketIndexes, type IndexEntry, type ReadAt } from './history-index.js';
import { cutTail, recoverTail } from './history-tail.js';

/** Buckets kept open for appending. */
const OPEN_WRITERS = 4;

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
export class History implements HistoryStore {
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
  /** Damage found since it was opened. */
  private readonly damageLog: DamageLog;
  /** Id indexes of the buckets read last. */
  private readonly indexes: BucketIndexes;

  private constructor(
    private readonly dir: string,
    readAt: ReadAt,
    private readonly logger: HistoryLogger,
  ) {
    this.damageLog = new DamageLog(dir, logger);
    this.indexes = new BucketIndexes(dir, readAt, (finding) => this.damageLog.report(finding));
  }

  /**
   * Opens (creating 0700) the history directory. `readAt` reads part of a bucket file to index
   * it (a seam for tests that need to act between those reads). Each bucket's tail is checked:
   * a crash's torn last write is cut (logged as a WARN), a bucket cut short is reported (an
   * ERROR, and in `damage()`), and its damaged last line kept.
   */
  static async open(dir: string, options: { readAt?: ReadAt; logger?: HistoryLogger } = {}): Promise<History> {
    await ensurePrivateDir(dir);
    const history = new History(
      dir,
      options.readAt ?? (async (fh, buf, position) => (await fh.read(buf, 0, buf.length, position)).bytesRead),
      options.logger ?? silentHistoryLogger,
    );
    // A bucket that cannot be read is skipped here (its zeros, if any, are only read past).
    for (const name of await readdir(dir)) {
      const bucket = BUCKET_RE.exec(name)?.[1];
      if (bucket !== undefined)
        await recoverTail(dir, bucket, history.logger, (finding) => history.damageLog.report(finding)).catch(
          () => undefined,
        );
    }
    return history;
  }

  /** Damage found since history was opened: at open, and in the buckets read since (verifyHistory checks them all). */
  damage(): HistoryDamageReport {
    return this.damageLog.damage();
  }

  /**
   * Appends `doc` under `id` to `bucket` (YYYY-MM-DD); resolves once it is durable. `tags`
   * (no white space or `|`) are kept in the frame header, so `list` can filter without reading documents.
   */
  put(bucket: string, id: string, doc: unknown, tags: readonly string[] = []): Promise<void> {
    return this.putJson(bucket, id, JSON.stringify(doc), tags);
  }

  /** Like `put`, for a document already serialized to JSON text (whole, or in pieces). */
  putJson(bucket: string, id: string, json: string | JsonPieces, tags: readonly string[] = []): Promise<void> {
    try {
      assertBucket(bucket);
      if (/[\s|]/.test(id) || tags.some((tag) => /[\s|]/.test(tag)))
        throw new TypeError('history ids and tags may not hold white space or |');
    } catch (err) {
      return Promise.reject(err);
    }
    // Nearly every put goes to today's bucket, open already: appended now, not after a turn of
    // awaits (an async put's garbage showed under load: docs/decisions/017-straight-to-history.md).
    const ready = this.ready;
    if (ready !== null && ready.bucket === bucket && !ready.file.broken)
      return this.appendTo(ready.file, id, json, tags);
    return this.putOpening(bucket, id, json, tags);
  }

  private async putOpening(
    bucket: string,
    id: string,
    json: string | JsonPieces,
    tags: readonly string[],
  ): Promise<void> {
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
        this.indexes.forget(bucket);
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
   * bucket grew under load by an entry per execution, and each new entry of that long-lived Map
   * was promoted by the scavenger, which showed in the resume loads' p99
   * (docs/decisions/005-no-long-lived-growing-collections.md).
   */
  private appendTo(writer: AppendFile, id: string, json: string | JsonPieces, tags: readonly string[]): Promise<void> {
    const frame = frameBytes(0, json, tags.length === 0 ? id : `${id}|${tags.join('|')}`);
    try {
      return writer.append(frame).durable;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * The latest document stored under `id` in `bucket`, or null. Throws WfxError HISTORY_DAMAGED
   * when the only record of `id` is damaged.
   */
  async get<T = unknown>(bucket: string, id: string): Promise<T | null> {
    assertBucket(bucket);
    const index = await this.index(bucket);
    const at = index?.get(id);
    if (!index || !at) return null;
    if (at.damaged) {
      throw new WfxError(
        'HISTORY_DAMAGED',
        `the history record of ${id} is damaged (${bucket}.jsonl at byte ${at.offset})`,
        {
          details: { file: `${bucket}.jsonl`, offset: at.offset },
        },
      );
    }
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

  /**
   * The ids in `bucket` with their tags (the latest copy of each), newest id first: every one,
   * or those below `range.below`, at most `range.limit`. A damaged record's tags cannot be
   * trusted: it is reported, not listed.
   */
  async list(bucket: string, range: ListRange = {}): Promise<Array<{ id: string; tags: readonly string[] }>> {
    assertBucket(bucket);
    const listed = await this.indexes.listed(bucket, () => this.readableEnd(bucket), range.passing === true);
    return listRange(listed, range);
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
        if (writer) await this.closeWriter(bucket, writer);
        // A put came meanwhile (its appender opens once this prune is done): keep the bucket.
        if (this.writers.has(bucket)) continue;
        const now = await stat(path).catch(() => null);
        if (!now || now.mtimeMs >= cutoff.getTime()) continue; // written meanwhile: keep it
        this.indexes.forget(bucket);
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

  /**
   * The buckets with an appender open, each with how many of its bytes are durable now
   * (AppendFile's durableSize): what a copy taken while puts go on may hold of them. Other
   * buckets are not being written: their whole lines are all there is.
   */
  async durableEnds(): Promise<Map<string, number>> {
    const writers = [...this.writers];
    const files = await Promise.allSettled(writers.map(([, opening]) => opening));
    const ends = new Map<string, number>();
    // Read after every appender is open: all of one instant.
    files.forEach((file, i) => {
      if (file.status === 'fulfilled') ends.set(writers[i]![0], file.value.durableSize);
    });
    return ends;
  }

  /** Flushes and closes every open bucket (and frees what is left of pruned ones at once). */
  async close(): Promise<void> {
    const writers = [...this.writers];
    this.writers.clear();
    this.ready = null;
    await Promise.all([
      ...[...writers].map(([bucket, w]) => this.closeWriter(bucket, w, true)),
      ...this.closing.values(),
    ]);
    await this.freeings.finish();
  }

  private writer(bucket: string): Promise<AppendFile> {
    const writer = this.writers.get(bucket);
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
    const opening = previous
      .then(() => cutTail(path))
      .then(() => this.markOpen(bucket))
      .then(() => AppendFile.forFile(path, { preallocate: true }));
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
    const closed = Promise.resolve(this.closing.get(bucket)).then(() => this.closeWriter(bucket, writer));
    this.closing.set(bucket, closed);
    void closed.then(() => {
      if (this.closing.get(bucket) === closed) this.closing.delete(bucket);
    });
  }

  /**
   * Marks `bucket` as having an appender open, durably, before its first write: after a crash,
   * an incomplete last line of a marked bucket is a torn write, of any other one damage.
   */
  private async markOpen(bucket: string): Promise<void> {
    await writeFile(openMarkerPath(this.dir, bucket), '', { mode: FILE_MODE });
    await fsyncDir(this.dir);
  }

  /**
   * Closes an appender and, once its writes are done, removes its bucket's open marker (a
   * marker left by a crash here only makes the next open treat the bucket as torn, which it
   * is not). Never rejects unless `rethrow`.
   */
  private async closeWriter(bucket: string, writer: Promise<AppendFile>, rethrow = false): Promise<void> {
    try {
      await (await writer).close();
      await unlink(openMarkerPath(this.dir, bucket)).catch(() => undefined);
    } catch (err) {
      if (rethrow) throw err;
    }
  }

  /** The id index of `bucket`, brought up to date with its file (null when there is no file). */
  private index(bucket: string): Promise<Map<string, IndexEntry> | null> {
    return this.indexes.index(bucket, () => this.readableEnd(bucket));
  }

  /**
   * How far the file of `bucket` holds what was put so far, once it is there: an appender being
   * closed (evicted, broken) first finishes its writes and cuts its zeros; the open one is
   * flushed (a failed append was never acknowledged, and does not keep what is on disk from
   * being read). Only the open one's data as it stands now is read: what is appended meanwhile
   * may be half written over the zeros ahead; the next read takes it in.
   */
  private async readableEnd(bucket: string): Promise<number> {
    await this.closing.get(bucket);
    const writer = await this.writers.get(bucket)?.catch(() => undefined);
    // A broken appender's file may hold the failed write's bytes after its data (in the page
    // cache): never durable, and cut when it is closed.
    const end = writer ? (writer.broken ? writer.writtenSize : writer.size) : Infinity;
    await writer?.flush().catch(() => undefined);
    return end;
  }
}

function assertBucket(bucket: string): void {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(bucket)) throw new TypeError(`history bucket must be YYYY-MM-DD, got ${bucket}`);
}
