import { constants } from 'node:fs';
import { mkdir, open, chmod, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Mode of every directory wfx creates in a data dir: owner only. */
export const DIR_MODE = 0o700;
/** Mode of every file wfx creates in a data dir: owner read/write only. */
export const FILE_MODE = 0o600;

/**
 * Creates `dir` (and parents) with mode 0700, and tightens an existing one to 0700.
 * Throws the fs error when the path exists and is not a directory.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  const st = await stat(dir);
  if (!st.isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
  if ((st.mode & 0o777) !== DIR_MODE) await chmod(dir, DIR_MODE);
}

/**
 * fsyncs a directory so that entries created, renamed or removed in it survive a power cut.
 * A file's own fsync does not cover its name in the directory.
 */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `path` with `content` atomically and durably (mode 0600): write a temporary file,
 * fsync it, rename it over `path`, fsync the directory. After a crash or power cut at any
 * instant the file holds either the old or the new content, never neither and never a mix.
 */
export async function writeFileAtomic(path: string, content: string | Buffer): Promise<void> {
  const file = await AtomicFileWriter.open(path);
  try {
    await file.write(content);
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
}

/**
 * At most this much of a file being written is left for its final fsync: every time as much is
 * written, it is synced. Any durable write of another file (the journal's, history's) waits for
 * an fsync under way on the same disk, for as long as that fsync takes to write out what is
 * dirty: a snapshot of 100,000 executions (125 MB) fsynced once stalled every journal write, and
 * with it every request in flight, for 220 ms here; synced a mebibyte at a time, each stall is
 * 2-5 ms (docs/performance.md, the table of changes).
 */
export const SYNC_EVERY_BYTES = 1 << 20;

/**
 * `writeFileAtomic` for content that comes in parts: each `write` appends to the temporary file
 * (so the whole content is never in memory at once), `commit` makes it `path`, `abort` drops it.
 * What is written is synced a mebibyte at a time as it goes (`SYNC_EVERY_BYTES`).
 */
export class AtomicFileWriter {
  /** Bytes written since the last fdatasync. */
  private unsynced = 0;
  /** fdatasync calls made while writing (commit's fsync not counted). */
  syncs = 0;

  private constructor(
    private readonly path: string,
    private readonly tmp: string,
    private readonly fh: FileHandle,
  ) {}

  static async open(path: string): Promise<AtomicFileWriter> {
    const tmp = join(dirname(path), `.${basename(path)}.tmp`);
    return new AtomicFileWriter(path, tmp, await open(tmp, 'w', FILE_MODE));
  }

  /** Appends all of `content`, syncing each mebibyte as it is reached. */
  async write(content: string | Buffer): Promise<void> {
    const length = typeof content === 'string' ? Buffer.byteLength(content) : content.length;
    if (this.unsynced + length < SYNC_EVERY_BYTES) {
      await this.fh.writeFile(content); // at the current position, all of it
      this.unsynced += length;
      return;
    }
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    for (let at = 0; at < bytes.length; ) {
      const end = Math.min(bytes.length, at + SYNC_EVERY_BYTES - this.unsynced);
      await this.fh.writeFile(bytes.subarray(at, end));
      this.unsynced += end - at;
      at = end;
      if (this.unsynced >= SYNC_EVERY_BYTES) {
        await this.fh.datasync();
        this.syncs++;
        this.unsynced = 0;
      }
    }
  }

  /** fsyncs the content, renames it over `path`, fsyncs the directory. */
  async commit(): Promise<void> {
    await this.replace(false);
  }

  /**
   * `commit`, for a large file: the content it replaces is not freed by the rename but kept
   * open and returned, for the caller to free with `freeGradually` once nothing reads it any
   * more (null when `path` did not exist, or could not be opened: then the rename frees it).
   */
  commitKeepingReplaced(): Promise<FileHandle | null> {
    return this.replace(true);
  }

  private async replace(keep: boolean): Promise<FileHandle | null> {
    await this.fh.sync();
    await this.fh.close();
    const replaced = keep ? await open(this.path, 'r+').catch(() => null) : null;
    try {
      await rename(this.tmp, this.path);
      await fsyncDir(dirname(this.path));
    } catch (err) {
      await replaced?.close();
      throw err;
    }
    return replaced;
  }

  /** Closes (if still open) and removes the temporary file; `path` keeps its old content. */
  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
    await rm(this.tmp, { force: true });
  }
}

/**
 * Freeing a large file's blocks at once holds up every durable write on the same file system
 * while it happens: here (ext4 mounted with `discard`) unlinking a 128 MB file stalled the
 * O_DSYNC writes of another file 70-72 ms, and a checkpoint's end (the old snapshot freed)
 * held a commit 52-71 ms. Freed 1 MiB at a time, 10 ms apart (100 MB/s: 1.3 s for 128 MB),
 * the longest such write took 1.9-3.3 ms, p99 1.0-1.1 ms; 4 MiB per 20 ms took half the time,
 * at 3.9-5.9 ms and p99 1.1-2.9 ms (docs/performance.md). RocksDB's DeleteScheduler deletes
 * files by truncating them in chunks for the same reason.
 */
export const FREE_CHUNK_BYTES = 1 << 20;
export const FREE_PAUSE_MS = 10;

/** A file whose blocks are being freed a chunk at a time (freeGradually). */
export interface Freeing {
  /** Settles once the file is freed and closed (never rejects). */
  readonly done: Promise<void>;
  /** Frees the rest at once: for an owner that is closing. */
  finish(): void;
}

/**
 * Frees the blocks of the open file `fh`, whose name is gone (unlinked, or renamed over), a
 * chunk at a time from its end, then closes it: the last close frees whatever is left. The
 * caller must hold the only way to the file, and nothing may read it any more. Should a crash
 * come first, the file system frees the rest of it (an orphan inode) when it next mounts.
 */
export function freeGradually(fh: FileHandle, options: { chunkBytes?: number; pauseMs?: number } = {}): Freeing {
  const chunk = options.chunkBytes ?? FREE_CHUNK_BYTES;
  const pauseMs = options.pauseMs ?? FREE_PAUSE_MS;
  let finished = false;
  let wake: (() => void) | null = null;
  const done = (async () => {
    try {
      let size = (await fh.stat()).size;
      while (!finished && size > chunk) {
        size -= chunk;
        await fh.truncate(size);
        if (finished) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pauseMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    } catch {
      // Freed at the close below instead.
    } finally {
      await fh.close().catch(() => undefined);
    }
  })();
  return {
    done,
    finish: () => {
      finished = true;
      (wake as (() => void) | null)?.();
    },
  };
}

/**
 * Removes `path` (a file in a directory the caller fsyncs after) and frees its blocks
 * gradually (freeGradually). Null when there was nothing to remove; throws what unlink throws.
 */
export async function removeGradually(path: string, options: { chunkBytes?: number; pauseMs?: number } = {}): Promise<Freeing | null> {
  const fh = await open(path, 'r+').catch(() => null);
  try {
    await unlink(path);
  } catch (err) {
    await fh?.close();
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return fh ? freeGradually(fh, options) : null;
}

/** Files being freed gradually, for their owner to finish when it closes. */
export class Freeings {
  private readonly pending = new Set<Freeing>();

  add(freeing: Freeing | null): void {
    if (!freeing) return;
    this.pending.add(freeing);
    void freeing.done.then(() => this.pending.delete(freeing));
  }

  /** Resolves once every file given so far is freed (as it goes, a chunk at a time). */
  async settled(): Promise<void> {
    await Promise.all([...this.pending].map((f) => f.done));
  }

  /** Frees what is left of them all at once, and resolves once they are closed. */
  async finish(): Promise<void> {
    const all = [...this.pending];
    for (const f of all) f.finish();
    await Promise.all(all.map((f) => f.done));
  }
}
