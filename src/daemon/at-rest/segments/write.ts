import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDir, FILE_MODE, fsyncDir } from '../../disk/durable-files.js';
import type { ExecutionSummary } from '../../state/execution-summary.js';
import { crashPoint } from '../../store/crash-point.js';
import { frameBytes } from '../../store/frame.js';
import { indexName, segmentName, type Location } from './files.js';
import { IndexBuilder } from './index-codec.js';

/** One execution to write: its id, its document as JSON text, and its summary. */
export interface SegmentEntry {
  readonly id: string;
  readonly json: string;
  readonly summary: ExecutionSummary;
}

/** A frame ready to go into a segment as it is: its bytes (a whole frame line) with its id and summary. */
export interface SegmentFrame {
  readonly id: string;
  readonly bytes: Buffer;
  readonly summary: ExecutionSummary;
}

/** Bytes gathered before one write call. */
const WRITE_BATCH = 1 << 20;

/**
 * Writes segment `segment` of `dir` (which must not exist yet) with one frame per entry, in
 * order (key: the execution id), then its index with `removed`; each file fsynced, then the
 * directory. Returns each entry's location, in order. Nothing is in effect until the caller's
 * manifest lists the segment; until then a crash leaves files that opening removes.
 */
export async function writeSegment(
  dir: string,
  segment: number,
  entries: readonly SegmentEntry[],
  removed: readonly string[],
): Promise<Location[]> {
  return writeFrames(
    dir,
    segment,
    (function* () {
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        // frameBytes hands out views of a shared slab that later frames never overwrite.
        yield { id: e.id, bytes: frameBytes(i, e.json, e.id), summary: e.summary };
      }
    })(),
    removed,
  );
}

/** Writes `frames` (bytes as they are) as segment `segment` of `dir`, with its index: see writeSegment. */
export async function writeFrames(
  dir: string,
  segment: number,
  frames: Iterable<SegmentFrame> | AsyncIterable<SegmentFrame>,
  /** Read once every frame went through. */
  removed: Iterable<string>,
): Promise<Location[]> {
  await ensurePrivateDir(dir);
  const index = new IndexBuilder(segment);
  const locations: Location[] = [];
  const fh = await open(join(dir, segmentName(segment)), 'wx', FILE_MODE);
  let offset = 0;
  try {
    const batch: Buffer[] = [];
    let batched = 0;
    for await (const f of frames) {
      index.add(f.id, offset, f.bytes.length, f.summary);
      locations.push({ segment, offset, length: f.bytes.length });
      offset += f.bytes.length;
      batch.push(f.bytes);
      batched += f.bytes.length;
      if (batched >= WRITE_BATCH) {
        await writeAll(fh, Buffer.concat(batch, batched));
        batch.length = 0;
        batched = 0;
      }
    }
    if (batched > 0) await writeAll(fh, Buffer.concat(batch, batched));
    await fh.sync();
  } finally {
    await fh.close();
  }
  crashPoint('segment:written');
  const text = JSON.stringify(index.finish(offset, removed));
  const ih = await open(join(dir, indexName(segment)), 'wx', FILE_MODE);
  try {
    await writeAll(ih, Buffer.from(text));
    await ih.sync();
  } finally {
    await ih.close();
  }
  crashPoint('segment:indexed');
  await fsyncDir(dir);
  crashPoint('segment:synced');
  return locations;
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await fh.write(buf, done, buf.length - done);
    done += bytesWritten;
  }
}
