/**
 * A history bucket file's tail after a crash (history.ts): the zeros an appender wrote ahead
 * and a torn last write cut, a bucket cut short reported as damage.
 */
import { open, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { idOfHeader, truncatedAt, type HistoryFinding } from './history-check.js';
import { openMarkerPath } from './history-files.js';
import type { HistoryLogger } from './history-damage.js';

/**
 * After a crash, cuts the zeros written ahead of a bucket's data and, in a bucket whose
 * appender was open (its marker is there) or that ends in zeros, the incomplete last line of
 * the write in flight: never acknowledged, so cut with a WARN. An incomplete last line in a
 * bucket closed cleanly is damage: reported, and ended with an LF so that appends start a line
 * of their own and the damaged bytes stay for the operator to see.
 */
export async function recoverTail(
  dir: string,
  bucket: string,
  logger: HistoryLogger,
  report: (finding: HistoryFinding) => void,
): Promise<void> {
  const name = `${bucket}.jsonl`;
  const path = join(dir, name);
  const marker = openMarkerPath(dir, bucket);
  const wasOpen = await stat(marker).then(
    () => true,
    () => false,
  );
  const fh = await open(path, 'r+');
  try {
    const { size, atime, mtime } = await fh.stat();
    const last = Buffer.alloc(1);
    if (size > 0) await fh.read(last, 0, 1, size - 1);
    if (size > 0 && last[0] !== 0x0a) {
      const keep = await dataEnd(fh, size);
      const head = Buffer.alloc(Math.min(160, size - keep));
      await fh.read(head, 0, head.length, keep);
      if (last[0] === 0 || wasOpen) {
        const torn = head.length > 0 && head[0] !== 0;
        await fh.truncate(keep);
        // Cutting writes no data: the file keeps the time of its last write, which retention goes by.
        await fh.utimes(atime, mtime);
        await fh.sync();
        if (torn)
          logger.warn(
            { file: path, offset: keep, bytes: size - keep, instanceId: idOfHeader(head) },
            'history: cut off a torn write at the end (a crash during a write)',
          );
      } else {
        report(truncatedAt(name, head, keep));
        await fh.write('\n', size);
        await fh.utimes(atime, mtime);
        await fh.sync();
      }
    }
  } finally {
    await fh.close();
  }
  if (wasOpen) await unlink(marker).catch(() => undefined);
}

/** Bytes read at a time when looking for the end of a file's data. */
const TAIL_READ = 1 << 20;

/**
 * Cuts what follows the last whole line of a bucket file: the zeros its appender wrote ahead
 * (left by a crash; AppendFile's `preallocate`) and an incomplete last line (a crash
 * mid-append), so the next append starts a clean line right after the data. A zero byte is
 * never part of a frame (JSON escapes it), so trailing zeros are never data.
 */
export async function cutTail(path: string): Promise<void> {
  let fh;
  try {
    fh = await open(path, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const { size, atime, mtime } = await fh.stat();
    const keep = await dataEnd(fh, size);
    if (keep === size) return;
    await fh.truncate(keep);
    // Cutting writes no data: the file keeps the time of its last write, which retention goes by.
    await fh.utimes(atime, mtime);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** The end of the last whole line of the file's first `size` bytes (0 when there is none). */
async function dataEnd(fh: FileHandle, size: number): Promise<number> {
  const buf = Buffer.allocUnsafe(Math.min(size, TAIL_READ));
  let end = size;
  let sawData = false;
  while (end > 0) {
    const from = Math.max(0, end - buf.length);
    const { bytesRead } = await fh.read(buf, 0, end - from, from);
    if (bytesRead < end - from) {
      // The file got shorter meanwhile: look again from its new end.
      end = from + bytesRead;
      sawData = false;
      continue;
    }
    let i = bytesRead - 1;
    if (!sawData) {
      while (i >= 0 && buf[i] === 0) i--; // zeros written ahead
      if (i < 0) {
        end = from;
        continue;
      }
      sawData = true;
    }
    const lf = buf.lastIndexOf(0x0a, i);
    if (lf >= 0) return from + lf + 1;
    end = from;
  }
  return 0;
}
