import { namesIn } from '../../disk/durable-files.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../../shared/errors.js';

/** Where one execution's frame lies: its segment's number, byte offset and length (with the LF). */
export interface Location {
  readonly segment: number;
  readonly offset: number;
  readonly length: number;
}

/** The folder of the execution segments inside a store directory. */
export function segmentsDirIn(storeDir: string): string {
  return join(storeDir, 'executions');
}

/** The segment's file name (`NNNNNN.jsonl`, six digits at least). Pure. */
export function segmentName(segment: number): string {
  return `${String(segment).padStart(6, '0')}.jsonl`;
}

/** The segment's index file name (`NNNNNN.index.json`). Pure. */
export function indexName(segment: number): string {
  return `${String(segment).padStart(6, '0')}.index.json`;
}

/** A segment file, or its index, or a leftover of either (`.tmp`): group 1 is the number. */
const FILE_RE = /^(\d{6,})\.(?:jsonl|index\.json)$/;

/** The segment numbers any file of `dir` belongs to, ascending; none when `dir` does not exist. */
export async function segmentsOnDisk(dir: string): Promise<number[]> {
  const names = await namesIn(dir);
  const found = new Set<number>();
  for (const name of names) {
    const m = FILE_RE.exec(name);
    if (m) found.add(Number(m[1]));
  }
  return [...found].sort((a, b) => a - b);
}

/** Removes both files of each segment (a file already gone is no error). */
export async function removeSegments(dir: string, segments: Iterable<number>): Promise<void> {
  for (const n of segments) {
    await rm(join(dir, segmentName(n)), { force: true });
    await rm(join(dir, indexName(n)), { force: true });
  }
}

/**
 * Removes the files of every segment `listed` does not name: what a crash left of a segment
 * written before the caller's manifest named it, or of segments compacted away. Returns their numbers.
 */
export async function removeUnlisted(dir: string, listed: readonly number[]): Promise<number[]> {
  const keep = new Set(listed);
  const gone = (await segmentsOnDisk(dir)).filter((n) => !keep.has(n));
  await removeSegments(dir, gone);
  return gone;
}

/** The error for damage at `offset` of `file` (a segment or an index): never a wrong document. */
export function segmentDamaged(file: string, offset: number, why: string): WfxError {
  return new WfxError('EXECUTION_SEGMENT_DAMAGED', `${why} in ${file} at byte ${offset}`, {
    details: { file, offset },
  });
}
