import { constants } from 'node:fs';
import { mkdir, open, chmod, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';

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

/** The names in directory `dir`; none when it does not exist (any other error is thrown). */
export async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
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
 * dirty: a large snapshot fsynced once stalled every journal write, and with it every request
 * in flight; synced a mebibyte at a time, each stall is short
 * (docs/decisions/020-snapshot-sync-and-gradual-freeing.md).
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
  /**
   * CRC-32 and count of the bytes written so far: a snapshot's checksum is taken as it is
   * written, not by reading a large file back (the store's manifest keeps it).
   */
  crc32 = 0;
  bytes = 0;

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
    this.crc32 = crc32(content, this.crc32);
    this.bytes += length;
    if (this.unsynced + length < SYNC_EVERY_BYTES) {
      await this.fh.writeFile(content); // at the current position, all of it
      this.unsynced += length;
      return;
    }
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    for (let at = 0; at < bytes.length;) {
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

  /**
   * fsyncs the content, renames it over `path`, fsyncs the directory. `beforeRename` runs once
   * the content is durable and before it takes `path` (a store records it in its manifest then).
   */
  async commit(beforeRename?: () => Promise<void>): Promise<void> {
    await this.replace(false, beforeRename);
  }

  /**
   * `commit`, for a large file: the content it replaces is not freed by the rename but kept
   * open and returned, for the caller to free (Freeings) once nothing reads it any
   * more (null when `path` did not exist, or could not be opened: then the rename frees it).
   */
  commitKeepingReplaced(beforeRename?: () => Promise<void>): Promise<FileHandle | null> {
    return this.replace(true, beforeRename);
  }

  private async replace(keep: boolean, beforeRename?: () => Promise<void>): Promise<FileHandle | null> {
    await this.fh.sync();
    await this.fh.close();
    await beforeRename?.();
    const replaced = keep ? await open(this.path, 'r+').catch(() => null) : null;
    try {
      await rename(this.tmp, this.path);
      await fsyncDir(dirname(this.path));
    } catch (err) {
      await replaced?.close().catch(() => undefined);
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
 * while it happens (ext4 mounted with `discard`): unlinking a snapshot-sized file stalled the
 * O_DSYNC writes of another file, and a checkpoint's end (the old snapshot freed) held a
 * commit. Freed a chunk at a time, a short pause apart, each such write waits briefly
 * (docs/decisions/020-snapshot-sync-and-gradual-freeing.md). RocksDB's DeleteScheduler deletes
 * files by truncating them in chunks for the same reason.
 */
export const FREE_CHUNK_BYTES = 1 << 20;
export const FREE_PAUSE_MS = 10;

/** How fast a file is freed: `chunkBytes` every `pauseMs`. */
export interface FreeingPace {
  readonly chunkBytes?: number;
  readonly pauseMs?: number;
}

/** A file whose blocks are being freed a chunk at a time (freeGradually). */
export interface Freeing {
  /** Settles once the file is freed and closed (never rejects). */
  readonly done: Promise<void>;
  /** Frees the rest at once: for an owner that is closing. */
  finish(): void;
}

/**
 * Frees the blocks of the open file `fh`, whose name is gone (unlinked, or renamed over, and
 * that made durable: a crash must not find the file cut short under its old name), a chunk at
 * a time from its end, then closes it: the last close frees whatever is left. Nothing of ours
 * may read it any more. A file with another name still (a hard link: a backup made with
 * `cp -al`, say) is only closed, never cut: its blocks are that name's. Should a crash come
 * first, the file system frees the rest of it (an orphan inode) when it next mounts.
 */
export function freeGradually(fh: FileHandle, pace: FreeingPace = {}): Freeing {
  const chunk = pace.chunkBytes ?? FREE_CHUNK_BYTES;
  const pauseMs = pace.pauseMs ?? FREE_PAUSE_MS;
  let finished = false;
  let wake: (() => void) | null = null;
  const done = (async () => {
    try {
      const st = await fh.stat();
      let size = st.nlink === 0 ? st.size : 0;
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
 * Unlinks `path` and returns the file, still open, to be freed once the directory is fsynced
 * (Freeings.unlinkIn does both). Null when there was nothing to remove; throws what unlink throws.
 */
export async function unlinkKeepingOpen(path: string): Promise<FileHandle | null> {
  const fh = await open(path, 'r+').catch(() => null);
  try {
    await unlink(path);
  } catch (err) {
    await fh?.close();
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return fh;
}

/**
 * Most files waiting their turn in one Freeings, each an open descriptor: beyond it (a first
 * prune of hundreds of day files after a long stop, say) a file is closed at once, its blocks
 * freed in one go, rather than risk the process's limit of descriptors.
 */
export const FREEINGS_MAX_WAITING = 16;

/**
 * Files whose names are gone, freed gradually (freeGradually) one after the other: a prune of
 * many large files frees them at the pace of one. Their owner finishes them when it closes; a
 * file given after that, or beyond FREEINGS_MAX_WAITING waiting, is closed at once.
 */
export class Freeings {
  private readonly queue: FileHandle[] = [];
  private current: Freeing | null = null;
  private finished = false;
  private idle: Promise<void> = Promise.resolve();
  private resolveIdle: (() => void) | null = null;

  constructor(private readonly pace: FreeingPace = {}) {}

  /**
   * Runs `work`, which removes files of `dir` through the `unlink` it is given; once it is done
   * and the directory fsynced (so each name is gone for good before any block is: a journal
   * segment cut short under its name would read as damage), frees them. Should `work` or the
   * fsync throw, the files are only closed. Resolves with what `work` gives.
   */
  async unlinkIn<T>(dir: string, work: (unlink: (path: string) => Promise<void>) => Promise<T>): Promise<T> {
    const unlinked: FileHandle[] = [];
    let removals = 0;
    let result: T;
    try {
      result = await work(async (path) => {
        const fh = await unlinkKeepingOpen(path);
        removals++;
        if (fh) unlinked.push(fh);
      });
      if (removals > 0) await fsyncDir(dir);
    } catch (err) {
      await Promise.all(unlinked.map((fh) => fh.close().catch(() => undefined)));
      throw err;
    }
    for (const fh of unlinked) this.add(fh);
    return result;
  }

  /** Frees `fh` after the files given before it. */
  add(fh: FileHandle | null): void {
    if (!fh) return;
    if (this.finished || this.queue.length >= FREEINGS_MAX_WAITING) {
      void fh.close().catch(() => undefined);
      return;
    }
    this.queue.push(fh);
    if (this.current) return;
    this.idle = new Promise((resolve) => (this.resolveIdle = resolve));
    void this.run();
  }

  private async run(): Promise<void> {
    for (let fh = this.queue.shift(); fh; fh = this.queue.shift()) {
      // After finish(): whatever is left is closed, freed at once.
      this.current = freeGradually(fh, this.finished ? { chunkBytes: Number.MAX_SAFE_INTEGER } : this.pace);
      await this.current.done;
    }
    this.current = null;
    this.resolveIdle?.();
    this.resolveIdle = null;
  }

  /** Resolves once every file given so far is freed (as it goes, a chunk at a time). */
  settled(): Promise<void> {
    return this.idle;
  }

  /** Frees what is left of them all at once, and resolves once they are closed. */
  async finish(): Promise<void> {
    this.finished = true;
    this.current?.finish();
    await this.idle;
  }
}
