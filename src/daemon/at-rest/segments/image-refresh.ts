/**
 * Directory images written while the daemon runs (SegmentsImage.retired): one child process
 * at a time (image-worker.ts), at a lower CPU priority than the daemon, the last refresh asked
 * for meanwhile made once it ends, none once the store closes.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { StoreLogger } from '../../store/durable-store.js';
import type { Covered } from './directory-image.js';
import type { ImageAnswer, ImageJob } from './image-worker.js';

/** The program that writes an image while the daemon runs. */
const IMAGE_WORKER = fileURLToPath(new URL('./image-worker.js', import.meta.url));
/** Its niceness: the daemon's own work (answers, checkpoints) goes first on a busy machine. */
const NICENESS = 10;

export class ImageRefresh {
  /** The process writing a new image, until it exits. */
  private imaging: { readonly child: ChildProcess; readonly exited: Promise<void> } | null = null;
  /** The last refresh asked for while one was under way: made once that one has ended. */
  private next: ImageJob | null = null;
  private stopped = false;

  /** `written`: told the segments an image written covers. */
  constructor(
    private readonly written: (covered: Covered[]) => void,
    private readonly logger: StoreLogger | undefined,
  ) {}

  /** Starts writing the image `job` names, or once the refresh under way ends. Nothing once stopped. */
  request(job: ImageJob): void {
    if (this.stopped) return;
    if (this.imaging !== null) {
      this.next = job;
      return;
    }
    const started = performance.now();
    let child: ChildProcess;
    try {
      // Without V8 flags of the daemon's (its young generation sized for requests); its output
      // goes where the daemon's does. Referenced: a process that waits for it (a test) stays up.
      child = fork(IMAGE_WORKER, [JSON.stringify(job)], {
        execArgv: [],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
    } catch (err) {
      // Out of memory for a process, say: no image now, the next stop or open writes one.
      this.logger?.warn({ err }, 'store: the directory image was not refreshed');
      return;
    }
    try {
      if (child.pid !== undefined) setPriority(child.pid, NICENESS);
    } catch {
      // Not allowed here: it runs at the daemon's priority.
    }
    let answered = false;
    const exited = new Promise<void>((resolve) => {
      child.once('message', (answer: ImageAnswer) => {
        answered = true;
        if ('error' in answer) {
          this.logger?.warn({ err: { message: answer.error } }, 'store: the directory image was not refreshed');
          return;
        }
        this.written(answer.covered);
        this.logger?.info(
          { covered: answer.covered.length, ms: Math.round(performance.now() - started) },
          'store: directory image refreshed',
        );
      });
      child.once('error', (err) => this.logger?.warn({ err }, 'store: the directory image was not refreshed'));
      // 'close': after its exit and its IPC channel's end (its answer read), or after a spawn error.
      child.once('close', (code, signal) => {
        // Out of memory, say, or killed by someone else (a close's kill is no failure).
        if (!answered && !this.stopped && child.pid !== undefined)
          this.logger?.warn({ code, signal }, 'store: the directory image was not refreshed');
        this.imaging = null;
        resolve();
        const next = this.next;
        this.next = null;
        if (next !== null) this.request(next);
      });
    });
    this.imaging = { child, exited };
  }

  /** Resolves once no refresh is under way, nor one asked for (tests). */
  async idle(): Promise<void> {
    while (this.imaging !== null) await this.imaging.exited;
  }

  /**
   * Kills a refresh under way and waits until its process has exited; none starts after. Its
   * files are its own (REFRESH_TEMPORARY), and an image it renamed into place before it stopped
   * covers segments that were listed, which readImage checks against the list it is given.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    const imaging = this.imaging;
    if (imaging === null) return;
    imaging.child.kill('SIGKILL');
    await imaging.exited;
  }
}
