import { isAscii } from 'node:buffer';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecutionIndex } from '../../state/execution-index/execution-index.js';
import type { ExecutionSummary } from '../../state/execution-summary.js';
import { indexName, removeUnlisted, segmentDamaged, type Location } from './files.js';
import { forEachEntry, parseIndex, type IndexDoc } from './index-codec.js';
import type { SegmentSpace } from './space.js';

/** What loading the indexes hands out, entry by entry and removal by removal, in order. */
export interface LoadHandlers {
  /** The location `id` has now, before this entry or removal applies (the caller's directory knows it); undefined: none. */
  readonly locate: (id: string) => Location | undefined;
  /** An entry: `id` now lives at `location`, summarized by `summary` (later ones win). */
  readonly onEntry: (id: string, location: Location, summary: ExecutionSummary) => void;
  /** `id` is no live execution any more as of this segment. */
  readonly onRemoved: (id: string) => void;
}

/** Reads and checks the index of `segment` in `dir`; throws EXECUTION_SEGMENT_DAMAGED when it is not one. */
export async function readIndex(dir: string, segment: number): Promise<IndexDoc> {
  const file = join(dir, indexName(segment));
  const bytes = await readFile(file);
  // An index of ASCII only (the usual) is read as latin1: the same text, without UTF-8 decoding.
  const doc = parseIndex(bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8'), segment);
  if (typeof doc === 'string') throw segmentDamaged(file, 0, doc);
  return doc;
}

/**
 * Loads the index of each listed segment, in the list's order (later ones win), handing each
 * entry and each removed id to `handlers`, and counting in `space` the bytes of each segment and
 * those that an entry or a removal superseded. Keeps nothing per entry. Throws
 * EXECUTION_SEGMENT_DAMAGED for an index that is not whole, and the file system's error for one
 * that is missing.
 */
export async function loadSegments(
  dir: string,
  listed: readonly number[],
  space: SegmentSpace,
  handlers: LoadHandlers,
): Promise<void> {
  for (const segment of listed) {
    const doc = await readIndex(dir, segment);
    space.add(segment, doc.bytes);
    forEachEntry(doc, (id, offset, length, summary) => {
      const before = handlers.locate(id);
      if (before !== undefined) space.supersede(before);
      handlers.onEntry(id, { segment, offset, length }, summary);
    });
    for (const id of doc.removed) {
      const before = handlers.locate(id);
      if (before !== undefined) space.supersede(before);
      handlers.onRemoved(id);
    }
  }
}

/**
 * Loads the index of each listed segment into `directory`, in the list's order, as loadSegments
 * with handlers that put each entry and remove each removed id would, but reading the index's
 * columns straight into the directory's (ExecutionIndex.loadColumns: no summary per entry).
 * `live`: how many live entries the snapshot said the directory will hold, when it said. Counts
 * the bytes in `space` as loadSegments does; throws as it does. Returns the entries loaded.
 */
export async function loadSegmentsInto(
  dir: string,
  listed: readonly number[],
  space: SegmentSpace,
  directory: ExecutionIndex,
  live?: number,
): Promise<number> {
  const superseded = (location: Location): void => space.supersede(location);
  // Room for every entry before the first is put: the columns and the id table then grow once,
  // not at every doubling. What the snapshot counted is exact (the journal's new executions grow
  // the columns as they come); without it, the indexes' sizes at the first one's entries per byte
  // estimate it, a tenth over.
  const sizes =
    live === undefined
      ? await Promise.all(listed.map(async (segment) => (await stat(join(dir, indexName(segment)))).size))
      : [];
  const allBytes = sizes.reduce((sum, n) => sum + n, 0);
  let entries = 0;
  for (let k = 0; k < listed.length; k++) {
    const segment = listed[k]!;
    const doc = await readIndex(dir, segment);
    space.add(segment, doc.bytes);
    if (k === 0)
      directory.reserve(
        live !== undefined
          ? Math.max(live, directory.size)
          : directory.size + Math.ceil((doc.ids.length * allBytes * 1.1) / Math.max(1, sizes[0]!)),
      );
    directory.loadColumns(doc, segment, superseded);
    entries += doc.ids.length;
  }
  return entries;
}

/**
 * Opens the segments of `dir` the caller's manifest lists: removes the files of any other (what a
 * crash left of a segment written before its listing, or of segments compacted away), then loads
 * the listed ones (loadSegments). Returns the numbers of the segments removed.
 */
export async function openSegments(
  dir: string,
  listed: readonly number[],
  space: SegmentSpace,
  handlers: LoadHandlers,
): Promise<number[]> {
  const removed = await removeUnlisted(dir, listed);
  await loadSegments(dir, listed, space, handlers);
  return removed;
}
