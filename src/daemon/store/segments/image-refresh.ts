/**
 * Directory images written while the daemon runs (ExecutionSegments.imageJob): one child process
 * at a time (image-worker.ts), at a lower CPU priority than the daemon, a refresh asked for
 * meanwhile made once it exits, none once the store closes.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { StoreLogger } from '../durable-store.js';
import type { Covered } from './directory-image.js';
import type { ImageAnswer, ImageJob } from './image-worker.js';

/** The program that writes an image while the daemon runs. */
const IMAGE_WORKER = fileURLToPath(new URL('./image-worker.js', import.meta.url));
/** Its niceness: the daemon's own work (answers, checkpoints) goes first on a busy machine. */
const NICENESS = 10;

export class ImageRefresh {
  /** The process writing a new image, until it exits. */
  private imaging: { readonly child: ChildProcess; readonly exited: Promise<void> } | null = null;
  /** Asked for while one was under way: made once that one has exited. */
  private again = false;
  private stopped = false;

  /**
   * `job`: what to refresh now, or null when no image is worth writing (asked again when the
   * refresh begins, so a refresh that follows another covers the segments listed then);
   * `written`: told the segments an image written covers.
   */
  constructor(
    private readonly job: () => ImageJob | null,
    private readonly written: (covered: Covered[]) => void,
    private readonly logger: StoreLogger | undefined,
  ) {}

  /** Starts a refresh, or one after the refresh under way. Nothing once stopped. */
  request(): void {
    if (this.stopped) return;
    if (this.imaging !== null) {
      this.again = true;
      return;
    }
    const job = this.job();
    if (job === null) return;
    const started = performance.now();
    // Without V8 flags of the daemon's (its young generation sized for requests); its output
    // goes where the daemon's does. Referenced: a process that waits for it (a test) stays up.
    const child = fork(IMAGE_WORKER, [JSON.stringify(job)], {
      execArgv: [],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
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
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        this.imaging = null;
        resolve();
        if (this.again) {
          this.again = false;
          this.request();
        }
      };
      child.once('error', (err) => {
        this.logger?.warn({ err }, 'store: the directory image was not refreshed');
        // A process that never started sends no 'exit'.
        if (child.pid === undefined) end();
      });
      child.once('exit', (code, signal) => {
        // Out of memory, say, or killed by someone else (a close's kill is no failure).
        if (!answered && !this.stopped)
          this.logger?.warn({ code, signal }, 'store: the directory image was not refreshed');
        end();
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
