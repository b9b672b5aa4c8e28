import type { CliContext } from './context.js';

/** Carriage return and erase-line: the spinner's line is gone, the cursor at its start. */
export const CLEAR_LINE = '\r\u001b[2K';
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CYAN = '\u001b[36m';
const RESET = '\u001b[0m';
/** Milliseconds between two frames. */
const FRAME_MS = 100;

/** `ms` as a person reads a wait: `4s`, `1m 05s`, `2h 03m`. Pure. */
export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/**
 * Frame `n` of a spinner line: the spinner (cyan when `color`), `label`, the elapsed time; cut to
 * `columns - 1` so it never wraps (a wrapped line would not be cleared by one erase-line). Pure.
 */
export function spinnerFrame(n: number, label: string, elapsedMs: number, columns: number, color: boolean): string {
  const frame = FRAMES[n % FRAMES.length]!;
  const time = elapsed(elapsedMs);
  const room = Math.max(0, columns - 1 - frame.length - time.length - 2);
  const text = label.length > room ? `${label.slice(0, Math.max(0, room - 1))}…` : label;
  return `${color ? `${CYAN}${frame}${RESET}` : frame} ${text} ${time}`;
}

type Stream = CliContext['stderr'] & { columns?: number };

/**
 * A spinner with the elapsed time on one line of a terminal, redrawn in place until `stop()`,
 * which erases it. Whoever writes other output while it spins calls `clear()` first; the next
 * frame draws it again. Its timer is unref'd: it never keeps the process alive.
 */
export class Spinner {
  private frame = 0;
  private timer: NodeJS.Timeout | null = null;
  private drawn = false;
  private readonly started: number;

  constructor(
    private readonly out: Stream,
    private readonly label: string,
    private readonly color: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  /**
   * Whether a command of `ctx` may spin on stderr: a terminal, not --json (machine output), not
   * in CI (a CI log keeps every frame), not TERM=dumb. Pure.
   */
  static allowed(ctx: CliContext, json: boolean): boolean {
    return ctx.stderr.isTTY === true && !json && !isCi(ctx.env) && ctx.env.TERM !== 'dumb';
  }

  /** Draws the first frame now, then one every FRAME_MS. */
  start(): this {
    this.draw();
    this.timer = setInterval(() => this.draw(), FRAME_MS);
    this.timer.unref();
    return this;
  }

  /** Draws the next frame over the line. */
  draw(): void {
    const columns = this.out.columns && this.out.columns > 0 ? this.out.columns : 80;
    this.out.write(
      `${CLEAR_LINE}${spinnerFrame(this.frame++, this.label, this.now() - this.started, columns, this.color)}`,
    );
    this.drawn = true;
  }

  /** Erases the line, if a frame is on it (before other output). */
  clear(): void {
    if (!this.drawn) return;
    this.out.write(CLEAR_LINE);
    this.drawn = false;
  }

  /** Stops and erases the line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
  }
}

/** Whether `env` says the process runs in CI (CI, or CONTINUOUS_INTEGRATION, set and not false). */
function isCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI ?? env.CONTINUOUS_INTEGRATION;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}
