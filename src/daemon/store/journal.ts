import { open, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { AppendFile } from './append-file.js';
import { crashPoint } from './crash-point.js';
import { decodeFrames, frameBytes, type Frame, type JsonPieces, type TailAfterBad } from './frame.js';
import { ensurePrivateDir, FILE_MODE, Freeings, fsyncDir } from '../disk/durable-files.js';

/** A journal segment's file name: the sequence number of its first entry, 20 digits. */
export const SEGMENT_RE = /^(\d{20})\.wal$/;

/** File name of the segment whose first record has sequence number `firstSeq`. */
export function segmentName(firstSeq: number): string {
  return `${String(firstSeq).padStart(20, '0')}.wal`;
}

/** What recovery did, for the log and for tests. */
export interface ReplayReport {
  /** Entries applied after the snapshot. */
  readonly replayed: number;
  /** Set when a torn tail (a crash mid-write) was cut off; not for zeros alone (written ahead, see Journal). */
  readonly truncated: { readonly file: string; readonly offset: number; readonly bytes: number } | null;
}

export interface JournalOpenOptions<E> {
  /** The journal directory. */
  readonly dir: string;
  /** Sequence number the snapshot covers: entries up to it are skipped. */
  readonly afterSeq: number;
  /** Called for each entry after the snapshot, in order. */
  readonly replay: (seq: number, entry: E) => void;
  /**
   * The segments the store's manifest lists (null: no manifest). One that may hold entries
   * after `afterSeq` and is not on disk is lost data: JOURNAL_CORRUPT naming it.
   */
  readonly listed?: readonly number[] | null;
  /**
   * The last entry the store's manifest says the journal holds (a backup's `lastSeq`; null or
   * absent: it says nothing). A journal that ends before it was cut short: JOURNAL_CORRUPT, never
   * a torn last write cut with a warning.
   */
  readonly through?: number | null;
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

/**
 * Whether the tail from a segment's first bad line (after `last`, its last good frame, if any;
 * the segment's entries start at `firstSeq`) is what a crash during one durable write leaves:
 * nothing valid after the bad line, or frames of one write only, the one `last` went out in
 * (the write went on past the damage) or the one after it, with nothing but zeros for damage
 * before them, and the bad line itself not whole (see TailAfterBad.whole). Frames without a write's key (`-`: written before the journal kept one) never
 * pass as torn after a bad line.
 */
function isTornWrite(tail: TailAfterBad, last: Frame | null, firstSeq: number): boolean {
  if (tail.whole) return false;
  if (tail.keys.length === 0) return true;
  if (tail.keys.length > 1 || tail.garbled) return false;
  const key = tail.keys[0]!;
  if (key === '-') return false;
  return last === null ? key === String(firstSeq) : key === last.key || key === String(last.seq + 1);
}

/** What a read of a journal directory found (scanJournal). */
export interface JournalScan {
  readonly dir: string;
  /** First sequence numbers of the segments on disk, oldest first. */
  readonly segments: number[];
  /** The last whole entry's sequence number (`afterSeq` when there is none after it). */
  readonly lastSeq: number;
  readonly replayed: number;
  /** Bytes of the segments up to where they end (cuts excluded). */
  readonly bytes: number;
  /** Size of the last segment up to where it ends. */
  readonly lastSize: number;
  readonly truncated: ReplayReport['truncated'];
  /** Where each segment must be cut (a torn write, zeros written ahead), for Journal.open to do. */
  readonly cuts: ReadonlyArray<{ readonly file: string; readonly offset: number }>;
}

/**
 * Reads every segment in `options.dir` without changing anything, replays the entries after
 * `afterSeq`, and says where a torn tail and zeros written ahead end the data. Throws WfxError
 * JOURNAL_CORRUPT (details: file, offset) at the first damaged, missing or duplicated entry, or
 * a segment the manifest lists that is gone. Used by Journal.open and by `wfx daemon check`.
 */
export async function scanJournal<E>(options: JournalOpenOptions<E>): Promise<JournalScan> {
  const { dir, afterSeq } = options;
  const segments = (
    await readdir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    })
  )
    .map((name) => SEGMENT_RE.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const listed = options.listed ?? [];
  for (let i = 0; i < listed.length; i++) {
    const first = listed[i]!;
    // A listed segment whose entries the snapshot covers may be gone: a checkpoint retired it.
    const mayHoldLive = i === listed.length - 1 || listed[i + 1]! - 1 > afterSeq;
    if (mayHoldLive && !segments.includes(first)) {
      const file = join(dir, segmentName(first));
      throw new WfxError('JOURNAL_CORRUPT', `journal segment ${file} is missing (the store's manifest lists it)`, {
        details: { file, offset: 0 },
      });
    }
  }
  if (segments.length > 0 && segments[0]! > afterSeq + 1) {
    // Even an empty segment says what came before it: entries the snapshot should cover are gone.
    const file = join(dir, segmentName(segments[0]!));
    throw new WfxError(
      'JOURNAL_CORRUPT',
      `journal entries ${afterSeq + 1} to ${segments[0]! - 1} are missing: the journal starts at ${file}`,
      {
        details: { file, offset: 0, expectedSeq: afterSeq + 1 },
      },
    );
  }

  let expected = afterSeq + 1;
  let replayed = 0;
  let truncated: ReplayReport['truncated'] = null;
  const cuts: Array<{ file: string; offset: number }> = [];
  let lastSize = 0;
  let bytes = 0;
  for (let i = 0; i < segments.length; i++) {
    const path = join(dir, segmentName(segments[i]!));
    const buf = await readFile(path);
    const decoded = decodeFrames<E>(buf);
    const isLast = i === segments.length - 1;
    const tail = decoded.tail;
    if (decoded.badOffset !== null && tail !== null) {
      if (!tail.zeros && !(isLast && isTornWrite(tail, decoded.frames.at(-1) ?? null, segments[i]!))) {
        throw new WfxError('JOURNAL_CORRUPT', `journal entry damaged in ${path} at byte ${decoded.badOffset}`, {
          details: { file: path, offset: decoded.badOffset },
        });
      }
      if (!tail.zeros) truncated = { file: path, offset: decoded.badOffset, bytes: buf.length - decoded.badOffset };
      cuts.push({ file: path, offset: decoded.badOffset });
    }
    bytes += decoded.badOffset ?? buf.length;
    let previous: (typeof decoded.frames)[number] | null = null;
    for (const frame of decoded.frames) {
      if (previous !== null && frame.seq <= previous.seq) {
        // A line written twice (a copy gone wrong, an edit): said as such, not as a gap after it.
        throw new WfxError(
          'JOURNAL_CORRUPT',
          `journal entry ${frame.seq} in ${path} at byte ${frame.offset} is a duplicate of entry ${frame.seq}` +
            (frame.seq === previous.seq ? ` at byte ${previous.offset}` : ' before it'),
          { details: { file: path, offset: frame.offset, duplicateOfSeq: frame.seq } },
        );
      }
      previous = frame;
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
  const through = options.through ?? null;
  if (through !== null && expected - 1 < through) {
    const file = segments.length > 0 ? join(dir, segmentName(segments.at(-1)!)) : dir;
    throw new WfxError(
      'JOURNAL_CORRUPT',
      `journal entries ${expected} to ${through} are missing: the store's manifest says the journal holds entries up to ${through}, and ${file} ends at byte ${lastSize} (a copy cut short)`,
      { details: { file, offset: lastSize, expectedSeq: expected, throughSeq: through } },
    );
  }
  return { dir, segments, lastSeq: expected - 1, replayed, bytes, lastSize, truncated, cuts };
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
