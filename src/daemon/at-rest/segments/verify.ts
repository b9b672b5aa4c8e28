import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../../shared/errors.js';
import { idOfHeader, scanFrames } from '../../store/history-check.js';
import { indexName, segmentName } from './files.js';
import type { IndexDoc } from './index-codec.js';
import { readIndex } from './load.js';

/**
 * What is wrong with a listed segment:
 * - `SEGMENT_MISSING`: its segment file or its index is gone;
 * - `SEGMENT_INDEX_DAMAGED`: its index is not a whole index of it;
 * - `SEGMENT_FRAME_DAMAGED`: a line of the segment fails its check (checksum, header or JSON);
 * - `SEGMENT_INDEX_MISMATCH`: the index and the frames disagree (an entry with no frame of its
 *   id at its offset and length, a frame no entry names, a size other than the index says).
 */
export type SegmentFindingCode =
  'SEGMENT_MISSING' | 'SEGMENT_INDEX_DAMAGED' | 'SEGMENT_FRAME_DAMAGED' | 'SEGMENT_INDEX_MISMATCH';

/** One damaged place of a segment or its index. */
export interface SegmentFinding {
  /** The file's name, relative to the segments directory. */
  readonly file: string;
  readonly offset: number;
  readonly code: SegmentFindingCode;
  readonly message: string;
  readonly instanceId?: string;
}

/** Bytes read at a time by verifySegments. */
const CHUNK = 8 << 20;

/**
 * Checks each listed segment of `dir` against its index and its index against it: every frame
 * whole, each at the offset and length its entry gives, under its id, and no other. Read-only.
 * Returns the findings by segment then offset; throws on I/O errors other than a missing file.
 */
export async function verifySegments(dir: string, listed: readonly number[]): Promise<SegmentFinding[]> {
  const findings: SegmentFinding[] = [];
  for (const segment of listed) {
    const name = segmentName(segment);
    let doc: IndexDoc;
    try {
      doc = await readIndex(dir, segment);
    } catch (err) {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      if (!missing && !(err instanceof WfxError)) throw err;
      findings.push({
        file: indexName(segment),
        offset: 0,
        code: missing ? 'SEGMENT_MISSING' : 'SEGMENT_INDEX_DAMAGED',
        message: missing ? `${indexName(segment)} is missing` : (err as Error).message,
      });
      continue;
    }
    let fh: FileHandle;
    try {
      fh = await open(join(dir, name), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      findings.push({ file: name, offset: 0, code: 'SEGMENT_MISSING', message: `${name} is missing` });
      continue;
    }
    try {
      await verifyOne(fh, name, doc, findings);
    } finally {
      await fh.close();
    }
  }
  return findings;
}

async function verifyOne(fh: FileHandle, name: string, doc: IndexDoc, findings: SegmentFinding[]): Promise<void> {
  const { size } = await fh.stat();
  const mismatch = (offset: number, message: string, instanceId?: string): void => {
    findings.push({
      file: name,
      offset,
      code: 'SEGMENT_INDEX_MISMATCH',
      message: `${message} in ${name} at byte ${offset}`,
      ...(instanceId !== undefined && { instanceId }),
    });
  };
  if (size !== doc.bytes) mismatch(0, `the index says ${doc.bytes} bytes, the segment has ${size}`);
  let i = 0; // the next index entry, by offset
  const frame = (key: string, offset: number, length: number): void => {
    while (i < doc.ids.length && doc.offset[i]! < offset) {
      mismatch(doc.offset[i]!, `the index names a record of ${doc.ids[i]} that is not there`, doc.ids[i]);
      i++;
    }
    if (i < doc.ids.length && doc.offset[i] === offset) {
      if (doc.ids[i] !== key || doc.length[i] !== length)
        mismatch(
          offset,
          `the index names ${doc.ids[i]} (${doc.length[i]} bytes), the record is of ${key} (${length})`,
          key,
        );
      i++;
    } else mismatch(offset, `a record of ${key} that the index does not name`, key);
  };
  let carry: Buffer | null = null;
  let position = 0;
  while (position < size) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, size - position));
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, position);
    if (bytesRead <= 0) break;
    position += bytesRead;
    const buf: Buffer = carry ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    const base = position - buf.length;
    const end = buf.lastIndexOf(0x0a) + 1;
    const whole = buf.subarray(0, end);
    const frames = scanFrames(whole, (start, lf) => {
      const id = idOfHeader(whole.subarray(start, lf));
      findings.push({
        file: name,
        offset: base + start,
        code: 'SEGMENT_FRAME_DAMAGED',
        message: `a record fails its checksum in ${name} at byte ${base + start}`,
        ...(id !== undefined && { instanceId: id }),
      });
      // The entry naming the damaged line is accounted for by the finding.
      if (i < doc.ids.length && doc.offset[i] === base + start) i++;
    });
    for (const f of frames) frame(f.key, base + f.offset, f.length);
    carry = end < buf.length ? Buffer.from(buf.subarray(end)) : null;
  }
  if (carry) {
    findings.push({
      file: name,
      offset: size - carry.length,
      code: 'SEGMENT_FRAME_DAMAGED',
      message: `${name} ends inside a record at byte ${size - carry.length}`,
    });
    if (i < doc.ids.length && doc.offset[i] === size - carry.length) i++;
  }
  for (; i < doc.ids.length; i++)
    mismatch(doc.offset[i]!, `the index names a record of ${doc.ids[i]} that is not there`, doc.ids[i]);
}
