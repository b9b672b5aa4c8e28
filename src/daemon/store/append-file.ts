import { constants } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FILE_MODE, fsyncDir } from './fs-util.js';

/** Frames waiting for the same durable write; they all settle together. */
interface Batch {
  chunks: Buffer[];
  readonly promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch nobody awaits must not become an unhandled rejection; the error is also kept in
  // `failed` and given to every later caller.
  promise.catch(() => undefined);
  return { chunks: [], promise, resolve, reject };
}

/** Most buffers one writev takes (the usual IOV_MAX); a batch of more is joined first. */
const MAX_IOV = 1024;

/**
 * Writes `chunks` one after the other at the end of the file: in one writev, so a batch of
 * frames is not copied into one buffer first (a copy of every byte journaled, and a large
 * buffer per batch for the GC); the rest, after a short write, as one buffer.
 */
export async function writeAll(fh: Pick<FileHandle, 'write' | 'writev'>, chunks: Buffer[]): Promise<void> {
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  let written = 0;
  if (chunks.length > 1 && chunks.length <= MAX_IOV) written = (await fh.writev(chunks)).bytesWritten;
  if (written === total) return;
  const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  while (written < total) written += (await fh.write(buf, written, total - written)).bytesWritten;
}

/**
 * Where the system has it, the file is opened with O_DSYNC: each write returns once its data
 * (and the file size) is on disk, as write + fdatasync would, in one system call instead of
 * two. It halved the time of a durable append here (ext4), and each call handed to libuv's
 * thread pool also costs the event loop. Elsewhere: write, then fdatasync.
 */
const DSYNC: number | undefined = constants.O_DSYNC;

/**
 * An append-only file with group commit. `append()` queues data and returns a promise that
 * resolves once the data is written and durable (O_DSYNC, or fdatasync). While one durable
 * write is in flight, everything appended meanwhile accumulates in the next batch and shares
 * the next one, so throughput grows with concurrency instead of being one fsync per record.
 *
 * Appends made in the same tick always share a batch (the flush starts on a microtask).
 *
 * After any write or sync error the file is failed for good (after a failed fsync the kernel
 * may have dropped the dirty pages, so nothing later could be trusted): the batch in flight
 * and every later append reject with that error.
 */
export class AppendFile {
  /** Bytes in the file, including appends not yet durable. */
  size: number;
  /** Durable writes (or fdatasync calls) made so far (group commit makes this far smaller than the appends). */
  syncs = 0;
  readonly path: string;
  private fh: FileHandle | null = null;
  private next: Batch | null = null;
  private flushing: Promise<void> | null = null;
  private failed: Error | null = null;
  private closed = false;
  private gate: Promise<unknown> | null;

  /**
   * An appender for `path`, which holds `size` bytes already (0 for a file not yet created).
   * The file is opened (created with mode 0600, its directory fsynced so the name is durable
   * too) on the first flush, so appends can be queued synchronously right away. `gate`, when
   * given, holds back the first write until it settles: a journal's next segment must not
   * become durable before the previous segment's last records are.
   */
  constructor(path: string, size = 0, gate: Promise<unknown> | null = null) {
    this.path = path;
    this.size = size;
    this.gate = gate;
  }

  /** An appender for an existing or new file at `path`, its size read from disk. */
  static async forFile(path: string): Promise<AppendFile> {
    const size = await stat(path).then((st) => st.size, (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return 0;
      throw err;
    });
    return new AppendFile(path, size);
  }

  /**
   * Queues `data` (whole lines) and returns where it starts and a promise of durability.
   * Throws at once when the file is closed or has failed.
   */
  append(data: Buffer): { offset: number; durable: Promise<void> } {
    if (this.failed) throw this.failed;
    if (this.closed) throw new Error('append to a closed file');
    const offset = this.size;
    this.size += data.length;
    const batch = (this.next ??= newBatch());
    batch.chunks.push(data);
    this.flushing ??= this.flushLoop();
    return { offset, durable: batch.promise };
  }

  /**
   * Resolves when everything appended so far is durable (rejects if it cannot be), including
   * what the gate holds back: a new segment's flush waits for the previous segment's close.
   */
  async flush(): Promise<void> {
    if (this.gate) await this.gate;
    while (this.flushing) await this.flushing;
    if (this.failed) throw this.failed;
  }

  /** True once a write or sync failed: the file takes no more appends. */
  get broken(): boolean {
    return this.failed !== null;
  }

  /** Flushes and closes. Later appends throw. */
  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.flush();
    } finally {
      await this.fh?.close();
      this.fh = null;
    }
  }

  private async flushLoop(): Promise<void> {
    // Yield first so that every append of the current tick joins the first batch.
    try {
      await (this.gate ?? Promise.resolve());
    } catch (err) {
      this.failed = err instanceof Error ? err : new Error(String(err));
    }
    this.gate = null;
    try {
      while (this.next) {
        const batch = this.next;
        this.next = null;
        if (this.failed) {
          batch.reject(this.failed);
          continue;
        }
        try {
          const fh = (this.fh ??= await this.openForAppend());
          await writeAll(fh, batch.chunks);
          if (DSYNC === undefined) await fh.datasync();
          this.syncs++;
          batch.resolve();
        } catch (err) {
          this.failed = err instanceof Error ? err : new Error(String(err));
          batch.reject(this.failed);
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  private async openForAppend(): Promise<FileHandle> {
    const flags = DSYNC === undefined ? 'a' : constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | DSYNC;
    const fh = await open(this.path, flags, FILE_MODE);
    try {
      await fsyncDir(dirname(this.path));
    } catch (err) {
      await fh.close();
      throw err;
    }
    return fh;
  }
}
