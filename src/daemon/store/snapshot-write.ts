/**
 * How a checkpoint writes its snapshot without holding the event loop: the copy runs in short
 * slices, paced against the commits that keep coming, and the entries unchanged since the last
 * snapshot are copied from that file as bytes (checked against the key they must start with).
 */
import type { FileHandle } from 'node:fs/promises';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { WfxError } from '../../shared/errors.js';
import { AtomicFileWriter } from '../disk/durable-files.js';
import { crashPoint } from './crash-point.js';
import type { SnapshotMark } from './manifest.js';
import type { SnapshotPiece, SourceRange } from './snapshot-copy.js';

/** How long one slice of a snapshot copy may run before the event loop gets a turn. */
export const SNAPSHOT_SLICE_MS = 1;

/**
 * While commits keep coming, a snapshot copy takes at most this share of the event loop: after
 * each slice it waits, on a timer, three times as long as the slice ran. With a slice on every
 * turn of the loop instead, every step a request waits for (its body, its durable write, its
 * reply) came after a slice, and a checkpoint slowed every request in flight
 * (docs/decisions/006-checkpoints-in-slices.md). With no commits the copy runs flat out (an idle
 * daemon, or one stopping).
 */
const SNAPSHOT_SHARE_UNDER_LOAD = 0.25;

/**
 * How long a snapshot copy waits after a slice that ran `tookMs`: nothing when no commit came
 * since the slice before (the next turn of the event loop is enough), else long enough that the
 * copy keeps to its share. Under a millisecond (a timer's resolution) it takes the next turn
 * instead.
 */
export function snapshotPauseMs(tookMs: number, committedMeanwhile: boolean): number {
  const wait = committedMeanwhile ? tookMs * (1 / SNAPSHOT_SHARE_UNDER_LOAD - 1) : 0;
  return wait >= 1 ? wait : 0;
}

/**
 * The wait between background slices (a snapshot copy, indexing) of a store whose journal's last
 * sequence number `lastSeq` gives: the next turn, or longer while commits come (snapshotPauseMs).
 */
export function slicePacer(lastSeq: () => number): (tookMs: number) => Promise<void> {
  let seen = lastSeq();
  return (tookMs) => {
    const wait = snapshotPauseMs(tookMs, lastSeq() !== seen);
    seen = lastSeq();
    return wait > 0 ? sleep(wait) : nextTurn();
  };
}

/** Writes a snapshot's pieces in order: bytes as they are (neighbours at once), ranges copied from `source`. */
export async function writePieces(
  to: AtomicFileWriter,
  pieces: readonly SnapshotPiece[],
  source: FileHandle | null,
): Promise<void> {
  let bytes: Buffer[] = [];
  const writeBytes = async (): Promise<void> => {
    if (bytes.length === 0) return;
    await to.write(bytes.length === 1 ? bytes[0]! : Buffer.concat(bytes));
    bytes = [];
  };
  for (const piece of pieces) {
    if (Buffer.isBuffer(piece)) {
      bytes.push(piece);
      continue;
    }
    await writeBytes();
    if (!source) throw new Error('a snapshot range without the file it is in');
    await copyRange(source, piece, to);
  }
  await writeBytes();
}

/** At most this much of a range is read before it is written. */
const COPY_CHUNK = 1 << 20;

/**
 * Copies `range` of the previous snapshot to the new one. The bytes must start with the first
 * entry's key: anything else means the ranges and the file disagree, and the checkpoint fails
 * (so does the store: restart recovers from that snapshot and the journal) rather than writing
 * a snapshot with entries out of place.
 */
async function copyRange(from: FileHandle, range: SourceRange, to: AtomicFileWriter): Promise<void> {
  const buf = Buffer.allocUnsafe(Math.min(COPY_CHUNK, range.length));
  for (let done = 0; done < range.length;) {
    const { bytesRead } = await from.read(buf, 0, Math.min(buf.length, range.length - done), range.offset + done);
    const chunk = buf.subarray(0, bytesRead);
    const head = done === 0 ? Buffer.from(`${JSON.stringify(range.key)}:`) : null;
    if (head && !chunk.subarray(0, head.length).equals(head)) {
      throw new WfxError(
        'SNAPSHOT_CORRUPT',
        `the last snapshot does not hold entry ${range.key} at byte ${range.offset}`,
      );
    }
    if (bytesRead === 0)
      throw new WfxError('SNAPSHOT_CORRUPT', `the last snapshot ends before byte ${range.offset + range.length}`);
    await to.write(chunk);
    done += bytesRead;
  }
}

/**
 * Writes a snapshot's whole `text` (serialized already) in place of `path`, atomically:
 * `markPending(file)` runs once it is synced, before its rename. Returns its mark.
 */
export async function writeSnapshotText(
  path: string,
  text: string,
  seq: number,
  markPending: (file: AtomicFileWriter) => Promise<void>,
): Promise<SnapshotMark> {
  const file = await AtomicFileWriter.open(path);
  try {
    await file.write(text);
    await file.commit(() => markPending(file));
    crashPoint('checkpoint:renamed');
    return { seq, bytes: file.bytes, crc32: file.crc32 };
  } catch (err) {
    await file.abort();
    throw err;
  }
}
