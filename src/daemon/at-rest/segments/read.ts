import { closeSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeFrames } from '../../store/frame.js';
import { segmentDamaged, segmentName, type Location } from './files.js';

/** One segment's open handle and the reads using it: it closes once `forget` asked and none is left. */
interface Handle {
  readonly fh: Promise<FileHandle>;
  users: number;
  forgotten: boolean;
}

/**
 * Frames up to this size are read synchronously: a positioned read of a few pages, nearly always
 * in the page cache, costs far less than its round trip through libuv's thread pool and two
 * promises, which was most of a cold answer's time. A larger frame is read off the event loop.
 */
const SYNC_READ_MAX = 64 * 1024;

/**
 * Reads executions from their segments, one positioned read each; keeps one open handle per
 * segment read, until `forget` or `close` (which wait for the reads under way on it).
 */
export class SegmentReader {
  private readonly handles = new Map<number, Handle>();
  private readonly syncFds = new Map<number, number>();

  constructor(private readonly dir: string) {}

  /**
   * The document of execution `id` at `location`: its frame read, its checksum and key checked,
   * its JSON parsed. Throws EXECUTION_SEGMENT_DAMAGED (file and offset named) for a frame that
   * fails its check or names another id: never a wrong document.
   */
  async read(id: string, location: Location): Promise<unknown> {
    if (location.length <= SYNC_READ_MAX) return this.readSync(id, location);
    const handle = this.handle(location.segment);
    handle.users++;
    let bytesRead: number;
    const buf = Buffer.allocUnsafe(location.length);
    try {
      ({ bytesRead } = await (await handle.fh).read(buf, 0, location.length, location.offset));
    } finally {
      if (--handle.users === 0 && handle.forgotten) await this.closeHandle(handle);
    }
    return this.decode(id, location, buf, bytesRead);
  }

  /**
   * `read`, synchronously (the open's journal replay, which applies records one after another;
   * small frames): a descriptor per segment kept until `forget` or `close`.
   */
  readSync(id: string, location: Location): unknown {
    let fd = this.syncFds.get(location.segment);
    if (fd === undefined) {
      fd = openSync(join(this.dir, segmentName(location.segment)), 'r');
      this.syncFds.set(location.segment, fd);
    }
    const buf = Buffer.allocUnsafe(location.length);
    return this.decode(id, location, buf, readSync(fd, buf, 0, location.length, location.offset));
  }

  /** Closes the descriptors `readSync` opened (reopened when next needed). */
  closeSync(): void {
    for (const fd of this.syncFds.values()) closeSync(fd);
    this.syncFds.clear();
  }

  private decode(id: string, location: Location, buf: Buffer, bytesRead: number): unknown {
    const file = join(this.dir, segmentName(location.segment));
    if (bytesRead !== location.length) throw segmentDamaged(file, location.offset, 'the segment ends inside a record');
    const { frames, badOffset } = decodeFrames(buf);
    const frame = frames[0];
    if (badOffset !== null || frames.length !== 1 || frame === undefined)
      throw segmentDamaged(file, location.offset, 'a record fails its checksum');
    if (frame.key !== id) throw segmentDamaged(file, location.offset, `the record there is of ${frame.key}, not ${id}`);
    return frame.value;
  }

  private handle(segment: number): Handle {
    let handle = this.handles.get(segment);
    if (handle === undefined) {
      const fh = open(join(this.dir, segmentName(segment)), 'r');
      handle = { fh, users: 0, forgotten: false };
      this.handles.set(segment, handle);
      fh.catch(() => {
        if (this.handles.get(segment) === handle) this.handles.delete(segment);
      });
    }
    return handle;
  }

  private async closeHandle(handle: Handle): Promise<void> {
    await (await handle.fh.catch(() => null))?.close().catch(() => undefined);
  }

  /** Closes the handle of `segment` (before its files are removed) once the reads under way on it end. */
  async forget(segment: number): Promise<void> {
    const fd = this.syncFds.get(segment);
    if (fd !== undefined) {
      this.syncFds.delete(segment);
      closeSync(fd);
    }
    const handle = this.handles.get(segment);
    if (handle === undefined) return;
    this.handles.delete(segment);
    handle.forgotten = true;
    if (handle.users === 0) await this.closeHandle(handle);
  }

  /** Closes every handle (the reads under way end first). */
  async close(): Promise<void> {
    this.closeSync();
    for (const segment of [...this.handles.keys()]) await this.forget(segment);
  }
}
