import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { writeFileAtomic } from '../disk/durable-files.js';

/** Where a store in `dir` keeps its snapshot. */
export function snapshotPathIn(dir: string): string {
  return join(dir, 'snapshot.json');
}

/**
 * A JSON file read in one piece and replaced atomically and durably: write a temporary file,
 * fsync it, rename it over the old one, fsync the directory. After a power cut at any instant
 * the file holds either the old or the new content, never neither.
 *
 * `write()` serializes synchronously, before its first await: the content is the data as it
 * was at the call, even if the caller mutates it while the write is under way.
 */
export class DurableJsonFile<T> {
  /** `preread`: the file's bytes, read already (`readFileBytes`), for the first `read()`. */
  constructor(
    private readonly path: string,
    private preread: Promise<Buffer | null> | null = null,
  ) {}

  /** Reads the file; null when it does not exist. Throws WfxError SNAPSHOT_CORRUPT when it does not parse. */
  async read(): Promise<T | null> {
    const pending = this.preread;
    this.preread = null;
    const bytes = await (pending ?? readFileBytes(this.path));
    if (bytes === null) return null;
    // Decoded in one go: readFile with an encoding (Node 20) decodes a large file 512 KiB at a
    // time and joins the pieces, which JSON.parse then copies into one string: a large snapshot
    // slowed a daemon's start (docs/decisions/019-restart-path.md).
    const text = bytes.toString('utf8');
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new WfxError('SNAPSHOT_CORRUPT', `${this.path} is not valid JSON`, {
        details: { file: this.path },
        cause: err,
      });
    }
  }

  write(data: T): Promise<void> {
    return writeFileAtomic(this.path, JSON.stringify(data));
  }
}

/**
 * The most one read call of `readFileBytes` asks for. Node 20's `readFile` reads 512 KiB per
 * call, each a round trip through the event loop: while a daemon's code loads, the main thread
 * is busy and the chain of reads stalls between pieces, so a large snapshot's read ended well
 * after the code had loaded; in pieces of this size the thread pool reads it while the code
 * loads (docs/decisions/019-restart-path.md).
 */
const READ_PIECE = 64 << 20;

/**
 * Starts reading the file at `path`: its bytes, or null when it does not exist. A read nobody
 * awaits (its reader failed before it got there) is not an unhandled rejection; whoever awaits
 * it gets the error. `piece`: the most one read call asks for (tests set it small).
 */
export function readFileBytes(path: string, piece = READ_PIECE): Promise<Buffer | null> {
  const bytes = readWhole(path, piece).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  });
  bytes.catch(() => undefined);
  return bytes;
}

/** The bytes of the file at `path`, as large as `fstat` says it is, in pieces of at most `piece` bytes. */
async function readWhole(path: string, piece: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const bytes = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const { bytesRead } = await fh.read(bytes, read, Math.min(size - read, piece), read);
      if (bytesRead === 0) break; // shorter than it was: what is there
      read += bytesRead;
    }
    return read === size ? bytes : bytes.subarray(0, read);
  } finally {
    await fh.close();
  }
}
