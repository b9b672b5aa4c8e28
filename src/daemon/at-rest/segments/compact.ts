import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { segmentDamaged, segmentName, type Location } from './files.js';
import { forEachEntry } from './index-codec.js';
import { readIndex } from './load.js';
import { writeFrames, type SegmentFrame } from './write.js';
import type { ExecutionSummary } from '../../state/execution-summary.js';

/** Bytes of a segment read at a time while compacting. */
const WINDOW = 8 << 20;

/** What a compaction wrote: where each live execution moved, and the list to put in the manifest. */
export interface Compaction {
  /**
   * Each live execution's new location and the one it had (`from`): a caller that wrote the id
   * again while the compaction ran applies a move only where the id is still at `from`.
   */
  readonly moved: ReadonlyArray<{ readonly id: string; readonly location: Location; readonly from: Location }>;
  /** `listed` with the new segment in the place of the newest chosen one, the others left out. */
  readonly listed: number[];
}

/**
 * Copies the live frames of the `chosen` segments (bytes as they are: no re-serialization) into
 * new segment `target`, with their summaries, and returns where each moved. A frame is live when
 * `locate` (the caller's directory) gives its id that very location. The new segment takes the
 * place of the newest chosen one in the list. The removals of the chosen segments are kept for
 * ids with no location, unless the chosen ones are the oldest of the list (then nothing older is
 * left for them to hide). The old files stay until the caller's manifest no longer lists them
 * (then: removeSegments).
 */
export async function compactSegments(
  dir: string,
  listed: readonly number[],
  chosen: readonly number[],
  target: number,
  locate: (id: string) => Location | undefined,
): Promise<Compaction> {
  const pick = new Set(chosen);
  const order = listed.filter((n) => pick.has(n));
  if (order.length !== pick.size) throw new Error('compactSegments: a chosen segment is not listed');
  const prefix = listed.slice(0, order.length).every((n) => pick.has(n));
  const removed = new Set<string>();
  const moved: Array<{ id: string; location: Location; from: Location }> = [];
  const frames = async function* (): AsyncGenerator<SegmentFrame & { from: Location }> {
    for (const segment of order) {
      const doc = await readIndex(dir, segment);
      if (!prefix) for (const id of doc.removed) if (locate(id) === undefined) removed.add(id);
      const live: Array<{ id: string; offset: number; length: number; summary: ExecutionSummary }> = [];
      forEachEntry(doc, (id, offset, length, summary) => {
        const at = locate(id);
        if (at !== undefined && at.segment === segment && at.offset === offset)
          live.push({ id, offset, length, summary });
      });
      yield* copyFrames(join(dir, segmentName(segment)), segment, live);
    }
  };
  let at = 0;
  const locations = await writeFrames(
    dir,
    target,
    (async function* () {
      for await (const f of frames()) {
        moved.push({ id: f.id, location: { segment: target, offset: at, length: f.bytes.length }, from: f.from });
        at += f.bytes.length;
        yield f;
      }
    })(),
    // Read once every frame went through: the generator fills it as it reads the indexes.
    removed,
  );
  if (locations.length !== moved.length) throw new Error('compactSegments: frames lost on the way');
  const newest = order[order.length - 1];
  return { moved, listed: listed.flatMap((n) => (n === newest ? [target] : pick.has(n) ? [] : [n])) };
}

/** The frames at `live` (ascending offsets) of segment file `file`, read a window at a time. */
async function* copyFrames(
  file: string,
  segment: number,
  live: ReadonlyArray<{ id: string; offset: number; length: number; summary: ExecutionSummary }>,
): AsyncGenerator<SegmentFrame & { from: Location }> {
  const fh = await open(file, 'r');
  try {
    let window = Buffer.alloc(0);
    let start = 0;
    for (const e of live) {
      if (e.offset < start || e.offset + e.length > start + window.length) {
        window = Buffer.allocUnsafe(Math.max(WINDOW, e.length));
        const { bytesRead } = await fh.read(window, 0, window.length, e.offset);
        window = window.subarray(0, bytesRead);
        start = e.offset;
        if (bytesRead < e.length) throw segmentDamaged(file, e.offset, 'the segment ends inside a record');
      }
      const bytes = window.subarray(e.offset - start, e.offset - start + e.length);
      if (bytes[bytes.length - 1] !== 0x0a) throw segmentDamaged(file, e.offset, 'the index names no record');
      yield { id: e.id, bytes, summary: e.summary, from: { segment, offset: e.offset, length: e.length } };
    }
  } finally {
    await fh.close();
  }
}

/**
 * Where the segments to merge start, given each listed segment's live bytes (oldest first) and
 * the most that may be listed: -1 while there are no more than `max`. Else the newest run in
 * which no segment holds more than twice the live bytes of those newer than it (size tiers, as
 * an LSM tree merges: a large old segment is not copied again for a few small new ones), and
 * at least the two newest, so that every merge lowers the count. Not reaching into the first
 * `keep` (merged, the image that covers them is out of date, and a start after a crash loads
 * every index again): while two or more come after them, only those merge; with one after them,
 * none, up to twice `max` listed, so the count stays bounded across restarts. Pure.
 */
export function mergeRun(live: readonly number[], max: number, keep = 0): number {
  const n = live.length;
  if (n <= max) return -1;
  let from = n - 1;
  let run = live[from]!;
  while (from > 0 && live[from - 1]! <= 2 * run) run += live[--from]!;
  from = Math.min(from, n - 2);
  if (from >= keep) return from;
  if (n - keep >= 2) return keep;
  return n <= 2 * max ? -1 : from;
}
