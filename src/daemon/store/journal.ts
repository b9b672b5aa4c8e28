/**
 * The write-ahead journal that appends: its segments (rolled, listed, retired) and the entries
 * written to the last one. Opening it scans the directory first (journal-scan.ts), which replays
 * the entries after the snapshot and says where a torn last write ends.
 */
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AppendFile } from './append-file.js';
import { crashPoint } from './crash-point.js';
import { frameBytes, type JsonPieces } from './frame.js';
import { ensurePrivateDir, FILE_MODE, Freeings, fsyncDir } from '../disk/durable-files.js';
import { scanJournal, segmentName, type JournalScanOptions, type ReplayReport } from './journal-scan.js';

/** Journal.open's options: the scan's, and who lists a new segment. */
export interface JournalOpenOptions<E> extends JournalScanOptions<E> {
  /**
   * Called once a new segment's file exists (empty, its name durable) and before anything is
   * written to it, with the segments then live: the store lists it in its manifest. A rejection
   * fails the segment's writes.
   */
  readonly onSegment?: (segments: readonly number[]) => Promise<void>;
}

/**
 * The write-ahead journal: a directory of segment files of checksummed frames (frame.ts),
 * each named by the sequence number of its first entry. Entries are numbered 1, 2, 3, ...
 * without gaps across segments.
 *
 * Segments are written over zeros written ahead (AppendFile's `preallocate`): a durable write
 * that grows a file also commits its size (an ext4 journal commit), one over zeros only its
 * data, which shortens a commit's latency (docs/decisions/014-preallocated-log-files.md).
 * Each frame's key is the sequence number of the first frame of the durable write it went out
 * in (one AppendFile batch), so recovery can tell which write a frame belongs to.
 *
 * Invariants:
 * - One durable write is in flight at a time, and only the last segment's last write can be
 *   torn: a segment is closed (flushed and synced) before the first byte of its successor is
 *   written (AppendFile's gate).
 * - A torn write over zeros leaves its sectors that never landed as zeros, in any order: a
 *   damaged line then holds zero bytes (a frame never does), and may be followed by whole
 *   frames of the same write, then zeros.
 * - So at recovery, from the first bad line of the last segment, a tail of zeros and of frames
 *   of one write (the last good frame's, or the one after it), damaged only by zeros, is a
 *   crash mid-write: nobody was told it was durable; it is cut off (WARN). Zeros alone after
 *   the data (any segment: closing cuts them, unsynced) are cut quietly. Anything else (a
 *   valid frame of another write after a bad line, damage that is not zeros before a valid
 *   frame, a bad frame in an older segment, a gap in sequence numbers) is damage to
 *   acknowledged data: recovery refuses with JOURNAL_CORRUPT naming the file and byte offset.
 */
export class Journal<E> {
  private file: AppendFile;
  private seq: number;
  /** First sequence numbers of the segments on disk, oldest first (the last is `file`). */
  private readonly segments: number[];
  /** Bytes of the segments read at open plus every frame appended since (see `bytes`). */
  private byteCount: number;
  /** The key of the frames of the write being gathered: its first frame's sequence number. */
  private writeKey = '';
  /** Retired segments, their blocks being freed a chunk at a time (a segment is as large as a snapshot). */
  private readonly freeings = new Freeings();
  /** JournalOpenOptions.onSegment. */
  private onSegment: ((segments: readonly number[]) => Promise<void>) | null = null;

  private constructor(
    private readonly dir: string,
    file: AppendFile,
    seq: number,
    segments: number[],
    bytes: number,
  ) {
    this.file = file;
    this.seq = seq;
    this.segments = segments;
    this.byteCount = bytes;
  }

  /**
   * Opens the journal in `dir` (creating it 0700), replays every entry after `afterSeq`
   * through `replay`, cuts a torn tail and the zeros written ahead, and returns the journal
   * ready to append.
   * Throws WfxError JOURNAL_CORRUPT when acknowledged entries are damaged or missing.
   */
  static async open<E>(options: JournalOpenOptions<E>): Promise<{ journal: Journal<E>; report: ReplayReport }> {
    await ensurePrivateDir(options.dir);
    const scan = await scanJournal(options);
    for (const cut of scan.cuts) await truncateFile(cut.file, cut.offset);
    const { dir, segments, lastSeq: seq } = scan;
    let file: AppendFile;
    if (segments.length === 0) {
      segments.push(seq + 1);
      file = new AppendFile(join(dir, segmentName(seq + 1)), 0, { preallocate: true });
    } else {
      file = new AppendFile(join(dir, segmentName(segments[segments.length - 1]!)), scan.lastSize, {
        preallocate: true,
      });
    }
    const journal = new Journal<E>(dir, file, seq, segments, scan.bytes);
    journal.onSegment = options.onSegment ?? null;
    return { journal, report: { replayed: scan.replayed, truncated: scan.truncated } };
  }

  /**
   * Creates the segment being written if no write has yet (its name made durable), so that a
   * manifest may list it: a listed segment is then never missing for want of a first write.
   */
  async ensureCurrentSegment(): Promise<void> {
    if (this.file.size === 0) await createEmpty(this.file.path);
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
    if (!this.file.queued) this.writeKey = String(seq); // this frame opens the next write
    const frame = frameBytes(seq, json, this.writeKey);
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
    // Nothing written since the segment being written began (a restart after a crash that
    // left it empty, say): it is the new segment already. Another of the same name would be
    // the same file, and retiring the one before it would delete the one being written.
    if (this.segments[this.segments.length - 1] === this.seq + 1)
      return { lastSeq: this.seq, closed: Promise.resolve() };
    const old = this.file;
    const closed = old.close();
    const first = this.seq + 1;
    this.segments.push(first);
    // The new segment is created and listed (manifest) before its first write: a listed segment
    // is then never legitimately missing, and none of its entries is acknowledged unlisted.
    const path = join(this.dir, segmentName(first));
    const listed = this.onSegment;
    const live = [...this.segments];
    const gate = listed
      ? closed
          .then(() => createEmpty(path))
          .then(() => {
            crashPoint('roll:created');
            return listed(live);
          })
      : closed;
    gate.catch(() => undefined); // the new segment's writes (and the checkpoint) get it
    this.file = new AppendFile(path, 0, { gate, preallocate: true });
    return { lastSeq: this.seq, closed: listed ? Promise.all([closed, gate]).then(() => undefined) : closed };
  }

  /**
   * Deletes the segments whose entries are all at or below `throughSeq` (a snapshot covers
   * them), never the segment being written; their blocks are freed gradually once the
   * directory is fsynced (Freeings): a segment cut short under its name would be damage to the
   * next open. Returns how many were deleted.
   */
  retire(throughSeq: number): Promise<number> {
    return this.freeings.unlinkIn(this.dir, async (unlink) => {
      let removed = 0;
      while (this.segments.length > 1 && this.segments[1]! - 1 <= throughSeq) {
        await unlink(join(this.dir, segmentName(this.segments.shift()!)));
        removed++;
      }
      return removed;
    });
  }

  /** First sequence numbers of the segments on disk, oldest first, the one being written last. */
  get segmentList(): readonly number[] {
    return this.segments;
  }

  /** Bytes of the segment being written that are durable now (AppendFile.durableSize). */
  get durableBytes(): number {
    return this.file.durableSize;
  }

  /** Number of segment files, the one being written included. */
  get segmentCount(): number {
    return this.segments.length;
  }

  /** Resolves once the segments retired so far are freed. */
  freed(): Promise<void> {
    return this.freeings.settled();
  }

  /** Flushes and closes the current segment (and frees what is left of retired ones at once). */
  async close(): Promise<void> {
    try {
      await this.file.close();
    } finally {
      await this.freeings.finish();
    }
  }
}

/** Creates `path` empty if it does not exist, and makes its name durable. */
async function createEmpty(path: string): Promise<void> {
  const fh = await open(path, 'a', FILE_MODE);
  await fh.close();
  await fsyncDir(dirname(path));
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

/**
 * The journal segments of `dir` (first sequence numbers `live`, oldest first) that may hold
 * entries after `seq`, as a hold gives them (StoreHold.segments): the last one's `durableBytes`.
 * The same rule as the manifest's: a segment whose entries the snapshot covers is not needed.
 */
export function segmentsAfter(
  dir: string,
  live: readonly number[],
  seq: number,
  durableBytes: number,
): Array<{ first: number; path: string; bytes: number | null }> {
  const out: Array<{ first: number; path: string; bytes: number | null }> = [];
  for (let i = 0; i < live.length; i++) {
    const last = i === live.length - 1;
    if (!last && live[i + 1]! - 1 <= seq) continue;
    out.push({ first: live[i]!, path: join(dir, segmentName(live[i]!)), bytes: last ? durableBytes : null });
  }
  return out;
}
