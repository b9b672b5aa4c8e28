/**
 * The append-only file of the journal and the history: appends gathered into one durable write
 * at a time (group commit), over zeros written ahead of the data. The writes themselves, one
 * writev on an O_DSYNC descriptor, are fd-writes.ts's.
 */
import { constants } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FILE_MODE, fsyncDir } from '../disk/durable-files.js';
import { byteLength, DSYNC, fdWriter, writeAll, writeZeros, type ChunkWriter } from './fd-writes.js';

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

/** Zeros written ahead of the data at first, doubled at each extension up to PREALLOCATE_MAX. */
const PREALLOCATE_MIN = 64 << 10;
/**
 * The most zeros written ahead of the data at once. Each data write's cache flush waits for the
 * zeros already sent to the disk too: larger extensions showed in the start load's p99
 * (docs/decisions/014-preallocated-log-files.md).
 */
const PREALLOCATE_MAX = 1 << 20;

/** Options of an AppendFile. */
export interface AppendFileOptions {
  /**
   * Holds back the first write until it settles: a journal's next segment must not become
   * durable before the previous segment's last records are.
   */
  readonly gate?: Promise<unknown> | null;
  /**
   * Write zeros ahead of the data (in the background, 64 KiB at first, doubling up to 1 MiB) and
   * write the data over them, so that a durable write changes no file size or block map (see
   * the class). Readers must then take the end of the data from `size` (after a crash: the end
   * of the last line, as History's `cutTail` finds it), not from the file's size. Off by default.
   */
  readonly preallocate?: boolean;
}

/**
 * An append-only file with group commit. `append()` queues data and returns a promise that
 * resolves once the data is written and durable (O_DSYNC, or fdatasync). While one durable
 * write is in flight, everything appended meanwhile accumulates in the next batch and shares
 * the next one, so throughput grows with concurrency instead of being one fsync per record.
 *
 * Appends made in the same tick always share a batch (the flush starts on a microtask).
 *
 * With `preallocate`, the file is kept ahead of the data with zeros, written in the background
 * (durably: their sizes and blocks are on disk before any data goes over them), and each batch
 * is written in place over them. A durable write that grows a file must also commit the new
 * size and blocks (on ext4 a journal commit), about twice the system time of a write in place;
 * the zeros cost far less, once (docs/decisions/014-preallocated-log-files.md).
 * This is what PostgreSQL does with WAL segments it zero-fills and RocksDB with recycled WAL
 * files. On close the zeros are cut off; after a crash, whoever opens the file next cuts them
 * (History's `cutTail`, `Journal.open`). A crash can tear only the batch in flight, which
 * nobody was told is durable: its sectors may land in any order, so its frames may stand after
 * a damaged line. The journal tells such a torn batch from damage by the write each of its
 * frames names (see Journal).
 *
 * After any write or sync error the file is failed for good (after a failed fsync the kernel
 * may have dropped the dirty pages, so nothing later could be trusted): the batch in flight
 * and every later append reject with that error. The zeros go out through a descriptor of
 * their own: Linux reports a page's failed writeback once per open file description, to
 * whichever sync on it checks first, so a zeros write sharing the data's descriptor could take
 * the error of a data batch written beside it, and that batch would then be told it is
 * durable. An extension that fails for want of space (ENOSPC, EDQUOT, EFBIG) is not a failed
 * write: the data goes on past the zeros, growing the file as without preallocation; any other
 * error on it fails the file, as a data write's would.
 */
export class AppendFile {
  /** Bytes in the file, including appends not yet durable (never the zeros written ahead). */
  size: number;
  /** Durable writes (or fdatasync calls) made so far (group commit makes this far smaller than the appends). */
  syncs = 0;
  readonly path: string;
  private fh: FileHandle | null = null;
  /** The writes of `fh`'s descriptor (fdWriter), made when it opens. */
  private out: ChunkWriter | null = null;
  /** With preallocate: the same file opened again, for the zeros written ahead (see the class). */
  private zerosFh: FileHandle | null = null;
  private next: Batch | null = null;
  private flushing: Promise<void> | null = null;
  private failed: Error | null = null;
  private closing = false;
  private gate: Promise<unknown> | null;
  /** Bytes of data written (where the next batch goes). */
  private written: number;
  /** Bytes of data known durable: the end of the last batch synced (a backup copies up to here). */
  private durableTo: number;
  /** With preallocate: the size of the next extension (0 once one failed: no more). */
  private ahead: number;
  /** The file's size as far as it is durable: data written and zeros after it. */
  private zeroedTo: number;
  /** The extension being written, if any: no data goes beyond `zeroedTo` until it is done. */
  private extending: Promise<void> | null = null;
  /** Preallocating: written at explicit positions, not with O_APPEND (which writes at the end, after the zeros). */
  private readonly positional: boolean;

  /**
   * An appender for `path`, which holds `size` bytes already (0 for a file not yet created),
   * and nothing after them. The file is opened (created with mode 0600, its directory fsynced
   * so the name is durable too) on the first flush, so appends can be queued synchronously
   * right away.
   */
  constructor(path: string, size = 0, options: AppendFileOptions = {}) {
    this.path = path;
    this.size = size;
    this.written = size;
    this.durableTo = size;
    this.zeroedTo = size;
    this.gate = options.gate ?? null;
    this.positional = options.preallocate === true;
    this.ahead = this.positional ? PREALLOCATE_MIN : 0;
  }

  /** An appender for an existing or new file at `path`, its size read from disk. */
  static async forFile(path: string, options: AppendFileOptions = {}): Promise<AppendFile> {
    const size = await stat(path).then(
      (st) => st.size,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return 0;
        throw err;
      },
    );
    return new AppendFile(path, size, options);
  }

  /**
   * Queues `data` (whole lines) and returns where it starts and a promise of durability.
   * Throws at once when the file is closed or has failed.
   */
  append(data: Buffer): { offset: number; durable: Promise<void> } {
    if (this.failed) throw this.failed;
    if (this.closing) throw new Error('append to a closed file');
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

  /**
   * True while appended data waits for the next durable write: an append now joins it. False
   * when the next append starts a write of its own (nothing waits, or only a write in flight).
   * Everything one write carries is appended while this is true, from its first append on.
   */
  get queued(): boolean {
    return this.next !== null;
  }

  /** True once close() was called: the file takes no more appends. */
  get closed(): boolean {
    return this.closing;
  }

  /** True once a write or sync failed: the file takes no more appends. */
  get broken(): boolean {
    return this.failed !== null;
  }

  /** Bytes of data written to the file by writes that succeeded (what a reader may take once they are flushed; the end of the data after a failure). */
  get writtenSize(): number {
    return this.written;
  }

  /**
   * Bytes at the start of the file that are durable now: whole batches, never a write in flight
   * nor the zeros written ahead. What a copy of the file taken now while appends go on may hold.
   */
  get durableSize(): number {
    return this.durableTo;
  }

  /** Flushes and closes (cutting off the zeros written ahead). Later appends throw. */
  async close(): Promise<void> {
    this.closing = true;
    try {
      await this.flush();
    } finally {
      await this.extending;
      // The zeros ahead are cut (after a failed extension some may be there, past zeroedTo).
      // Not synced: if the cut is lost in a crash, the next opener cuts them (History's
      // cutTail, Journal.open).
      // Cutting writes no data: the file keeps the time of its last write (retention goes by it).
      if (this.fh && this.positional && (this.zeroedTo > this.written || this.ahead === 0)) {
        const fh = this.fh;
        await fh
          .stat()
          .then(async ({ atime, mtime }) => {
            await fh.truncate(this.written);
            await fh.utimes(atime, mtime);
          })
          .catch(() => undefined);
      }
      await this.zerosFh?.close().catch(() => undefined);
      this.zerosFh = null;
      await this.fh?.close();
      this.fh = null;
      this.out = null;
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
          const out = (this.out ??= fdWriter(fh.fd));
          await this.write(out, batch.chunks);
          if (DSYNC === undefined) await fh.datasync();
          this.syncs++;
          this.durableTo = this.written;
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

  /** Writes a batch after the data written so far: over zeros written ahead where there are some. */
  private async write(out: ChunkWriter, chunks: Buffer[]): Promise<void> {
    const length = byteLength(chunks);
    if (!this.positional) {
      await writeAll(out, chunks);
      this.written += length;
      return;
    }
    this.extendAhead(length);
    // Never into zeros still being written: wait for them (the first batch, or a burst).
    if (this.written + length > this.zeroedTo && this.extending) await this.extending;
    await writeAll(out, chunks, this.written);
    this.written += length;
    if (this.written > this.zeroedTo) this.zeroedTo = this.written;
  }

  /**
   * Starts writing the next zeros when, after a batch of `coming` bytes, fewer than half an
   * extension would be left ahead of the data: usually while that batch is written below them.
   */
  private extendAhead(coming: number): void {
    if (
      this.ahead === 0 ||
      this.extending !== null ||
      this.closing ||
      this.zeroedTo - (this.written + coming) >= this.ahead / 2
    )
      return;
    const from = this.zeroedTo;
    const length = this.ahead;
    this.extending = this.zerosWriter()
      .then(({ fh, out }) => writeZeros(fh, out, from, length))
      .then(
        () => {
          this.zeroedTo = from + length;
          this.ahead = Math.min(PREALLOCATE_MAX, length * 2);
          this.extending = null;
        },
        (err: NodeJS.ErrnoException) => {
          // Out of space: the data goes on past the zeros (some of them may be on disk: zeros
          // after the data, cut by the next opener). Anything else: the file may have lost a
          // page, maybe one of the data's (see the class).
          if (!SPACE_ERRORS.has(err.code ?? '')) this.failed ??= err instanceof Error ? err : new Error(String(err));
          this.ahead = 0;
          this.extending = null;
        },
      );
  }

  /** The descriptor the zeros are written through, opened on the first extension. */
  private async zerosWriter(): Promise<{ fh: FileHandle; out: ChunkWriter }> {
    const fh = (this.zerosFh ??= await open(
      this.path,
      DSYNC === undefined ? constants.O_WRONLY : constants.O_WRONLY | DSYNC,
    ));
    return { fh, out: fdWriter(fh.fd) };
  }

  private async openForAppend(): Promise<FileHandle> {
    const mode = this.positional
      ? constants.O_WRONLY | constants.O_CREAT
      : constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND;
    const flags = DSYNC === undefined ? mode : mode | DSYNC;
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

/** Errors of an extension that mean only that the file cannot grow: the data goes on without zeros ahead. */
const SPACE_ERRORS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);
