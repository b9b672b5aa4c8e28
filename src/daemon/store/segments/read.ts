import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeFrames } from '../frame.js';
import { segmentDamaged, segmentName, type Location } from './files.js';

/**
 * Reads executions from their segments, one positioned read each; keeps one open handle per
 * segment read, until `forget` or `close`.
 */
export class SegmentReader {
  private readonly handles = new Map<number, Promise<FileHandle>>();

  constructor(private readonly dir: string) {}

  /**
   * The document of execution `id` at `location`: its frame read, its checksum and key checked,
   * its JSON parsed. Throws EXECUTION_SEGMENT_DAMAGED (file and offset named) for a frame that
   * fails its check or names another id: never a wrong document.
   */
  async read(id: string, location: Location): Promise<unknown> {
    const fh = await this.handle(location.segment);
    const buf = Buffer.allocUnsafe(location.length);
    const { bytesRead } = await fh.read(buf, 0, location.length, location.offset);
    const file = join(this.dir, segmentName(location.segment));
    if (bytesRead !== location.length) throw segmentDamaged(file, location.offset, 'the segment ends inside a record');
    const { frames, badOffset } = decodeFrames(buf);
    const frame = frames[0];
    if (badOffset !== null || frames.length !== 1 || frame === undefined)
      throw segmentDamaged(file, location.offset, 'a record fails its checksum');
    if (frame.key !== id) throw segmentDamaged(file, location.offset, `the record there is of ${frame.key}, not ${id}`);
    return frame.value;
  }

  private handle(segment: number): Promise<FileHandle> {
    let fh = this.handles.get(segment);
    if (fh === undefined) {
      fh = open(join(this.dir, segmentName(segment)), 'r');
      this.handles.set(segment, fh);
      fh.catch(() => this.handles.delete(segment));
    }
    return fh;
  }

  /** Closes the handle of `segment` (before its files are removed). */
  async forget(segment: number): Promise<void> {
    const fh = this.handles.get(segment);
    this.handles.delete(segment);
    if (fh) await (await fh.catch(() => null))?.close();
  }

  /** Closes every handle. */
  async close(): Promise<void> {
    for (const segment of [...this.handles.keys()]) await this.forget(segment);
  }
}
