/**
 * The writes of an open descriptor that a durable append makes: a batch of buffers in one
 * writev at a position or at the end (the rest after a short write), through fs's callback API,
 * on a descriptor opened with O_DSYNC where the system has it. What is written and when it is
 * durable (batches, zeros written ahead) is AppendFile's (append-file.ts).
 */
import { constants, write as fsWrite, writev as fsWritev } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Most buffers one writev takes (the usual IOV_MAX); a batch of more is joined first. */
const MAX_IOV = 1024;

/** The two writes writeAll makes, at a position or, with null, where the file's offset is; each resolves with the bytes written. */
export interface ChunkWriter {
  writev(chunks: Buffer[], position: number | null): Promise<number>;
  write(buf: Buffer, offset: number, length: number, position: number | null): Promise<number>;
}

/**
 * The writes of an open descriptor through fs's callback API. Each costs the event loop less
 * than the same write through a FileHandle's promises, and a daemon makes one or two per batch
 * of answers (docs/decisions/001-group-commit-and-durable-appends.md). The descriptor stays
 * its FileHandle's, which closes it.
 */
export function fdWriter(fd: number): ChunkWriter {
  return {
    writev: (chunks, position) =>
      new Promise((resolve, reject) => fsWritev(fd, chunks, position, (err, n) => (err ? reject(err) : resolve(n)))),
    write: (buf, offset, length, position) =>
      new Promise((resolve, reject) =>
        fsWrite(fd, buf, offset, length, position, (err, n) => (err ? reject(err) : resolve(n))),
      ),
  };
}

/**
 * Writes `chunks` one after the other at `position` (at the end of the file when null, as
 * O_APPEND puts it): in one writev, so a batch of frames is not copied into one buffer first (a
 * copy of every byte journaled, and a large buffer per batch for the GC); the rest, after a
 * short write, as one buffer.
 */
export async function writeAll(out: ChunkWriter, chunks: Buffer[], position: number | null = null): Promise<void> {
  const total = byteLength(chunks);
  let written = 0;
  if (chunks.length > 1 && chunks.length <= MAX_IOV) written = await out.writev(chunks, position);
  if (written === total) return;
  const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  while (written < total)
    written += await out.write(buf, written, total - written, position === null ? null : position + written);
}

/**
 * Where the system has it, the file is opened with O_DSYNC: each write returns once its data
 * (and the file size) is on disk, as write + fdatasync would, in one system call instead of
 * two. It halved the time of a durable append here (ext4), and each call handed to libuv's
 * thread pool also costs the event loop. Elsewhere: write, then fdatasync.
 */
export const DSYNC: number | undefined = constants.O_DSYNC;

/** The bytes of `chunks`, all told. */
export function byteLength(chunks: readonly Buffer[]): number {
  let n = 0;
  for (const chunk of chunks) n += chunk.length;
  return n;
}

/** A shared buffer of zeros, written as many times as an extension needs (one writev). */
let zeros: Buffer | null = null;
/** The size of `zeros`: AppendFile's first extension. */
const ZEROS_BYTES = 64 << 10;

/** Writes `length` zeros at `position`, durably (O_DSYNC, or fdatasync). */
export async function writeZeros(fh: FileHandle, out: ChunkWriter, position: number, length: number): Promise<void> {
  zeros ??= Buffer.alloc(ZEROS_BYTES);
  const chunks: Buffer[] = [];
  for (let left = length; left > 0; left -= zeros.length)
    chunks.push(left >= zeros.length ? zeros : zeros.subarray(0, left));
  await writeAll(out, chunks, position);
  if (DSYNC === undefined) await fh.datasync();
}
