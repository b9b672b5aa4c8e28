/**
 * Reading a journal directory at an open (Journal.open) or a check (`wfx daemon check`,
 * `wfx daemon backup`): the segments' names, and the scan that replays the entries after a
 * snapshot and tells a torn last write, to cut, from damage to acknowledged entries, to refuse.
 * The journal that appends (journal.ts) starts from what the scan found.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { decodeFrames, type Frame, type TailAfterBad } from './frame.js';

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

/** What a scan of a journal directory reads, and what it checks the journal against. */
export interface JournalScanOptions<E> {
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
export async function scanJournal<E>(options: JournalScanOptions<E>): Promise<JournalScan> {
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
