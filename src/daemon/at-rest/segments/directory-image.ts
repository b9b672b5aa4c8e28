/**
 * The directory image (decision 076): `executions/directory.image`, the execution directory as
 * the open loaded it from the indexes of the segments it names, so that the next open restores
 * it with one read per column rather than parse every index and load it entry by entry. It is
 * derived and disposable: written after an open (not synced: a torn or lost one fails its
 * checksum and is ignored), used only while the segments it names are, in order, the first the
 * snapshot lists, with the sizes it recorded; the later ones are loaded on top from their
 * indexes. `wfx daemon backup` does not copy it.
 *
 * Layout: one line of JSON (the header: the segments covered with their bytes and dead bytes,
 * each column's type and length, the values' length and a crc32 of every byte after it), padded
 * with spaces to a multiple of 8 bytes; the values (JSON) padded the same; then each column's
 * bytes, padded the same (a Float64Array must start at a multiple of 8).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { ExecutionIndex } from '../../state/execution-index/execution-index.js';
import {
  bytesPerElement,
  columnType,
  emptyColumn,
  ImageIn,
  ImageOut,
  type ImageColumn,
} from '../../state/execution-index/image.js';
import { crashPoint } from '../../store/crash-point.js';
import { segmentName } from './files.js';

/** The image's file name in the segments' folder. */
export const IMAGE_NAME = 'directory.image';
const FORMAT = 'wfx-directory-image';
// 2: the wait rows keep job priorities; 3: the search attributes (an older image is not read:
// the indexes are).
const VERSION = 3;

/** A segment an image covers: its number, its file's bytes, and how many of them were dead. */
export interface Covered {
  readonly segment: number;
  readonly bytes: number;
  readonly dead: number;
}

interface Header {
  readonly format: string;
  readonly version: number;
  readonly covered: Covered[];
  readonly columns: Array<[string, number]>;
  readonly valuesBytes: number;
  readonly crc32: number;
}

/** An image taken at one instant (its columns copied), to write while the directory goes on. */
export interface TakenImage {
  readonly header: Buffer;
  /** Everything after the header, in one allocation: freed whole once written. */
  readonly body: Buffer;
}

/** Takes an image of `directory`, which holds the segments `covered` as loaded from their indexes. */
export function takeImage(directory: ExecutionIndex, covered: readonly Covered[]): TakenImage {
  const out = new ImageOut();
  directory.save(out);
  const values = Buffer.from(JSON.stringify(out.values));
  let size = values.length + pad(values.length);
  for (const c of out.columns) size += c.byteLength + pad(c.byteLength);
  // A copy (the directory changes as soon as the open goes on, the write comes later), in one
  // buffer of its own: many large ones would leave the allocator's heap grown once freed.
  const body = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const c of [values, ...out.columns]) {
    body.set(new Uint8Array(c.buffer, c.byteOffset, c.byteLength), at);
    at += c.byteLength;
    body.fill(0x20, at, at + pad(c.byteLength));
    at += pad(c.byteLength);
  }
  const header: Header = {
    format: FORMAT,
    version: VERSION,
    covered: [...covered],
    columns: out.columns.map((c) => [columnType(c), c.length]),
    valuesBytes: values.length,
    crc32: crc32(body),
  };
  const line = JSON.stringify(header);
  return { header: Buffer.from(`${line}${' '.repeat(pad(line.length + 1))}\n`), body };
}

/** The temporary name of an image written while the daemon runs (segments/image-worker.ts): not the close's. */
export const REFRESH_TEMPORARY = `${IMAGE_NAME}.refresh.tmp`;

/**
 * Writes `image` to the folder `dir` (a temporary file, `temporary` in `dir`, renamed over the
 * image: never half of one by its name); `point`, the crash point between the two
 * (crash-point.ts). Two writers never share a temporary file: a process killed in the middle of
 * its write leaves no bytes in another's.
 */
export async function writeImage(
  dir: string,
  image: TakenImage,
  point?: string,
  temporary = `${IMAGE_NAME}.tmp`,
): Promise<void> {
  const file = join(dir, IMAGE_NAME);
  const tmp = join(dir, temporary);
  try {
    await writeFile(tmp, [image.header, image.body], { mode: 0o600 });
    if (point !== undefined) crashPoint(point);
    await rename(tmp, file);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Removes the image of `dir`, if any. */
export async function removeImage(dir: string): Promise<void> {
  await rm(join(dir, IMAGE_NAME), { force: true });
}

/** Removes what a write cut short by a crash left of an image (its temporary files), if anything. */
export async function removeImageLeftover(dir: string): Promise<void> {
  await rm(join(dir, `${IMAGE_NAME}.tmp`), { force: true });
  await rm(join(dir, REFRESH_TEMPORARY), { force: true });
}

/** What an image gave: the directory, and the segments it covers (the first of `listed`). */
export interface ReadImage {
  readonly directory: ExecutionIndex;
  readonly covered: readonly Covered[];
}

/**
 * Reads the image of `dir` when it covers the first segments of `listed` (as they are on disk);
 * else, or when it is not whole, null and why (`none` when there is no image).
 */
export async function readImage(dir: string, listed: readonly number[]): Promise<ReadImage | { why: string }> {
  let fd: number;
  try {
    fd = openSync(join(dir, IMAGE_NAME), 'r');
  } catch {
    return { why: 'none' };
  }
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, 1 << 20));
    readFully(fd, head, 0);
    const end = head.indexOf(0x0a);
    if (end < 0) return { why: 'no header' };
    const header = parseHeader(head.subarray(0, end).toString('utf8'));
    if (header === null) return { why: 'not an image' };
    const { covered } = header;
    if (covered.length === 0 || covered.length > listed.length || covered.some((c, i) => c.segment !== listed[i]))
      return { why: 'other segments' };
    for (const c of covered) {
      const bytes = await stat(join(dir, segmentName(c.segment))).then(
        (s) => s.size,
        () => -1,
      );
      if (bytes !== c.bytes) return { why: `segment ${c.segment} is not as it was` };
    }
    let expected = end + 1 + header.valuesBytes + pad(header.valuesBytes);
    for (const [type, length] of header.columns) {
      const n = bytesPerElement(type) * length;
      expected += n + pad(n);
    }
    if (expected !== size) return { why: `damaged: ${size} bytes, not ${expected}` };
    let at = end + 1;
    const values = Buffer.alloc(header.valuesBytes);
    const spaces = Buffer.alloc(8);
    // Every byte after the header counts, the padding too.
    const next = (buffer: Buffer): void => {
      // A slice at a time, each summed while the read has just brought it into the CPU's cache:
      // reading a whole column and summing it after goes through memory twice.
      for (let from = 0; from < buffer.length; from += CHECKED_SLICE) {
        const slice = buffer.subarray(from, Math.min(buffer.length, from + CHECKED_SLICE));
        at = readFully(fd, slice, at);
        crc = crc32(slice, crc);
      }
      const gap = spaces.subarray(0, pad(buffer.length));
      at = readFully(fd, gap, at);
      // Never an empty one: zlib's crc32 of no bytes at no address starts over at 0.
      if (gap.length > 0) crc = crc32(gap, crc);
    };
    let crc = 0;
    next(values);
    const columns: ImageColumn[] = [];
    for (const [type, length] of header.columns) {
      const column = emptyColumn(type, length);
      next(Buffer.from(column.buffer, column.byteOffset, column.byteLength));
      columns.push(column);
    }
    if (at !== size || crc !== header.crc32) return { why: 'damaged: its checksum differs' };
    const directory = ExecutionIndex.fromImage(new ImageIn(columns, JSON.parse(values.toString('utf8')) as unknown[]));
    return { directory, covered };
  } catch (err) {
    return { why: `unreadable: ${(err as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

/** How much of an image is read before it is summed: within a core's cache. */
const CHECKED_SLICE = 256 * 1024;

/** Reads `buffer.length` bytes at `at` into `buffer`; returns where they end. Throws at the file's end. */
function readFully(fd: number, buffer: Buffer, at: number): number {
  for (let done = 0; done < buffer.length;) {
    const n = readSync(fd, buffer, done, buffer.length - done, at + done);
    if (n === 0) throw new RangeError('the image ends early');
    done += n;
  }
  return at + buffer.length;
}

function parseHeader(text: string): Header | null {
  let h: Partial<Header>;
  try {
    h = JSON.parse(text) as Partial<Header>;
  } catch {
    return null;
  }
  const ok =
    h !== null &&
    typeof h === 'object' &&
    h.format === FORMAT &&
    h.version === VERSION &&
    Array.isArray(h.covered) &&
    h.covered.every(
      (c) => Number.isSafeInteger(c?.segment) && Number.isSafeInteger(c?.bytes) && Number.isSafeInteger(c?.dead),
    ) &&
    Array.isArray(h.columns) &&
    h.columns.every((c) => Array.isArray(c) && typeof c[0] === 'string' && Number.isSafeInteger(c[1]) && c[1] >= 0) &&
    Number.isSafeInteger(h.valuesBytes) &&
    Number.isSafeInteger(h.crc32);
  return ok ? (h as Header) : null;
}

/** Bytes that bring `n` to a multiple of 8. */
function pad(n: number): number {
  return (8 - (n % 8)) % 8;
}
