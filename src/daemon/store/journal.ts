import { open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { AppendFile } from './append-file.js';
import { decodeFrames, frameBytes, type JsonPieces } from './frame.js';
import { ensurePrivateDir, fsyncDir } from './fs-util.js';

const SEGMENT_RE = /^(\d{20})\.wal$/;

/** File name of the segment whose first record has sequence number `firstSeq`. */
export function segmentName(firstSeq: number): string {
  return `${String(firstSeq).padStart(20, '0')}.wal`;
}

/** What recovery did, for the log and for tests. */
export interface ReplayReport {
  /** Entries applied after the snapshot. */
  readonly replayed: number;
  /** Set when a torn tail (a crash mid-append) was cut off. */
  readonly truncated: { readonly file: string; readonly offset: number; readonly bytes: number } | null;
}

export interface JournalOpenOptions<E> {
  /** The journal directory. */
  readonly dir: string;
  /** Sequence number the snapshot covers: entries up to it are skipped. */
  readonly afterSeq: number;
  /** Called for each entry after the snapshot, in order. */
  readonly replay: (seq: number, entry: E) => void;
}

/**
 * The write-ahead journal: a directory of segment files of checksummed frames (frame.ts),
 * each named by the sequence number of its first entry. Entries are numbered 1, 2, 3, ...
 * without gaps across segments.
 *
 * Invariants:
 * - Only the last segment can end in a torn frame: a segment is closed (flushed and synced)
 *   before the first byte of its successor is written (AppendFile's gate).
 * - So at recovery a bad frame at the very end of the last segment is a crash mid-append (cut
 *   off, WARN), and any other bad frame or gap in sequence numbers is damage to acknowledged
 *   data: recovery refuses with JOURNAL_CORRUPT naming the file and byte offset.
 */
export class Journal<E> {
  private file: AppendFile;
  private seq: number;
  /** First sequence numbers of the segments on disk, oldest first (the last is `file`). */
  private readonly segments: number[];
  /** Bytes of the segments read at open plus every frame appended since (see `bytes`). */
  private byteCount: number;

  private constructor(private readonly dir: string, file: AppendFile, seq: number, segments: number[], bytes: number) {
    this.file = file;
    this.seq = seq;
    this.segments = segments;
    this.byteCount = bytes;
  }

  /**
   * Opens the journal in `dir` (creating it 0700), replays every entry after `afterSeq`
   * through `replay`, cuts a torn tail, and returns the journal ready to append.
   * Throws WfxError JOURNAL_CORRUPT when acknowledged entries are damaged or missing.
   */
  static async open<E>(options: JournalOpenOptions<E>): Promise<{ journal: Journal<E>; report: ReplayReport }> {
    const { dir, afterSeq } = options;
    await ensurePrivateDir(dir);
    const segments = (await readdir(dir))
      .map((name) => SEGMENT_RE.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);

    let expected = afterSeq + 1;
    let replayed = 0;
    let truncated: ReplayReport['truncated'] = null;
    let lastSize = 0;
    let bytes = 0;
    for (let i = 0; i < segments.length; i++) {
      const path = join(dir, segmentName(segments[i]!));
      const buf = await readFile(path);
      bytes += buf.length;
      const decoded = decodeFrames<E>(buf);
      const isLast = i === segments.length - 1;
      if (decoded.badOffset !== null) {
        if (!isLast || decoded.validAfterBad) {
          throw new WfxError('JOURNAL_CORRUPT', `journal entry damaged in ${path} at byte ${decoded.badOffset}`, {
            details: { file: path, offset: decoded.badOffset },
          });
        }
        truncated = { file: path, offset: decoded.badOffset, bytes: buf.length - decoded.badOffset };
        await truncateFile(path, decoded.badOffset);
      }
      for (const frame of decoded.frames) {
        if (frame.seq <= afterSeq) continue;
        if (frame.seq !== expected) {
          throw new WfxError(
            'JOURNAL_CORRUPT',
            `journal entry ${expected} is missing: found ${frame.seq} in ${path} at byte ${frame.offset}`,
            { details: { file: path, offset: frame.offset, expectedSeq: expected, foundSeq: frame.seq } },
          );
        }
        options.replay(frame.seq, frame.value);
        expected++;
        replayed++;
      }
      lastSize = decoded.badOffset ?? buf.length;
    }

    const seq = expected - 1;
    let file: AppendFile;
    if (segments.length === 0) {
      segments.push(seq + 1);
      file = new AppendFile(join(dir, segmentName(seq + 1)));
    } else {
      file = new AppendFile(join(dir, segmentName(segments[segments.length - 1]!)), lastSize);
    }
    return { journal: new Journal<E>(dir, file, seq, segments, bytes), report: { replayed, truncated } };
  }

  /** Sequence number of the last entry appended (durable or not). */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * A running count of journal bytes: the segments found at open (whole, though the snapshot
   * may cover their first entries) plus every frame appended since. Differences between two
   * readings are what was journaled in between.
   */
  get bytes(): number {
    return this.byteCount;
  }

  /**
   * Appends one entry and returns its sequence number at once; `durable` resolves once it is
   * fsynced (group commit), and rejects if the disk write fails. Throws when failed or closed.
   */
  append(entry: E): { seq: number; durable: Promise<void> } {
    return this.appendJson(JSON.stringify(entry));
  }

  /** Like `append`, for an entry already serialized to JSON text (whole, or in pieces). */
  appendJson(json: string | JsonPieces): { seq: number; durable: Promise<void> } {
    const seq = this.seq + 1;
    const frame = frameBytes(seq, json);
    const { durable } = this.file.append(frame);
    this.seq = seq;
    this.byteCount += frame.length;
    return { seq, durable };
  }

  /** Resolves once every entry appended so far is durable. */
  flush(): Promise<void> {
    return this.file.flush();
  }

  /**
   * Starts a new segment: entries appended from now on go to it. Returns the last sequence
   * number of the old segments and a promise that settles once they are durable and closed.
   */
  roll(): { lastSeq: number; closed: Promise<void> } {
    const old = this.file;
    const closed = old.close();
    const first = this.seq + 1;
    this.file = new AppendFile(join(this.dir, segmentName(first)), 0, { gate: closed });
    this.segments.push(first);
    return { lastSeq: this.seq, closed };
  }

  /**
   * Deletes the segments whose entries are all at or below `throughSeq` (a snapshot covers
   * them), never the segment being written. Returns how many were deleted.
   */
  async retire(throughSeq: number): Promise<number> {
    let removed = 0;
    while (this.segments.length > 1 && this.segments[1]! - 1 <= throughSeq) {
      const first = this.segments.shift()!;
      await unlink(join(this.dir, segmentName(first))).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      removed++;
    }
    if (removed > 0) await fsyncDir(this.dir);
    return removed;
  }

  /** Number of segment files, the one being written included. */
  get segmentCount(): number {
    return this.segments.length;
  }

  /** Flushes and closes the current segment. */
  close(): Promise<void> {
    return this.file.close();
  }
}

async function truncateFile(path: string, length: number): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.truncate(length);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
