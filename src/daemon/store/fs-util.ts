import { constants } from 'node:fs';
import { mkdir, open, chmod, rename, rm, stat, type FileHandle } from 'node:fs/promises';
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
    await this.fh.sync();
    await this.fh.close();
    await rename(this.tmp, this.path);
    await fsyncDir(dirname(this.path));
  }

  /** Closes (if still open) and removes the temporary file; `path` keeps its old content. */
  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
    await rm(this.tmp, { force: true });
  }
}
