import { closeSync, openSync, writeSync } from 'node:fs';
import { FILE_MODE } from '../disk/durable-files.js';

/**
 * The daemon log's file: lines are gathered in memory and written with one synchronous write
 * per `chunkSize` (64 KiB), and at least every `intervalMs` (a quarter of a second; and on
 * `close()`, at stop). A crash that gives no chance to flush (SIGKILL) loses at most that
 * interval of log, never journaled state.
 *
 * Why not pino's own destination (sonic-boom): it appends each line to one growing string
 * and measures that string's UTF-8 length on every write, which flattens it: each access-log
 * line copied the string and counted its bytes again
 * (docs/decisions/009-http-per-request-costs.md).
 * Here a line is stored as it comes and joined once per write. The write is synchronous
 * because a write into the page cache (no O_DSYNC: this is a log, not the journal) costs less
 * than handing it to libuv's thread pool, and it keeps lines in order without a queue.
 *
 * Lines still held when the process exits (an uncaught exception, a failed shutdown) are
 * written by an 'exit' handler, so the lines that explain the exit are kept.
 *
 * A failed write (a full disk) drops those lines and is reported to `onError` once; the log
 * must never stop the daemon. A line cut short by the failure is ended before the next write.
 */
export class LogFile {
  private fd: number | null;
  private lines: string[] = [];
  /** UTF-16 units gathered: close enough to bytes to decide when to write. */
  private pending = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly onExit = (): void => this.flush();
  private reported = false;
  /** A write failed part way: the file ends inside a line. */
  private torn = false;

  constructor(
    readonly path: string,
    private readonly options: { chunkSize?: number; intervalMs?: number; onError?: (err: Error) => void } = {},
  ) {
    this.fd = openSync(path, 'a', FILE_MODE);
    this.timer = setInterval(() => this.flush(), options.intervalMs ?? 250).unref();
    process.on('exit', this.onExit);
  }

  /** Queues one line (with its newline); pino calls this for every log line. */
  write(line: string): boolean {
    if (this.fd === null) return false;
    this.lines.push(line);
    this.pending += line.length;
    if (this.pending >= (this.options.chunkSize ?? 64 * 1024)) this.flush();
    return true;
  }

  /** Writes every queued line now. */
  flush(): void {
    if (this.lines.length === 0 || this.fd === null) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    const data = Buffer.from(this.torn ? `\n${text}` : text);
    this.lines = [];
    this.pending = 0;
    let written = 0;
    try {
      while (written < data.length) written += writeSync(this.fd, data, written);
      this.torn = false;
    } catch (err) {
      if (written > 0) this.torn = true;
      if (!this.reported) {
        this.reported = true;
        try {
          this.options.onError?.(err as Error);
        } catch {
          // reporting must not fail the daemon either
        }
      }
    }
  }

  /** Flushes and closes; later lines are dropped. */
  close(): void {
    this.flush();
    clearInterval(this.timer);
    process.off('exit', this.onExit);
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
