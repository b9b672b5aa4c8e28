import type { BulkView } from '../shared/api/index.js';
import { CLEAR_LINE, elapsed } from './spinner.js';

/** `n` with thousands separated (`10,000`). Pure. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** How far an operation has come, in words: `4,500/10,000 (45%): 4,480 done, 20 skipped`. Pure. */
export function progressText(v: BulkView): string {
  const reached = v.done + v.skipped;
  const pct = v.total === 0 ? 100 : Math.floor((reached * 100) / v.total);
  return `${count(reached)}/${count(v.total)} (${pct}%): ${count(v.done)} done, ${count(v.skipped)} skipped`;
}

/**
 * One line of a progress bar for `v`, cut to `columns - 1`: `[#####.....] 4,500/10,000 (45%): ...
 * ETA 9s`. Pure.
 */
export function progressBar(v: BulkView, columns: number): string {
  const width = 24;
  const reached = v.done + v.skipped;
  const filled = v.total === 0 ? width : Math.floor((reached * width) / v.total);
  const eta = v.etaSeconds === null ? '' : `, ETA ${elapsed(v.etaSeconds * 1000)}`;
  const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${progressText(v)}${eta}`;
  return line.length > columns - 1 ? line.slice(0, Math.max(0, columns - 1)) : line;
}

/** The closing line of a finished operation. Pure. */
export function finishedText(v: BulkView): string {
  const word = v.state.toLowerCase();
  const skipped = v.skipped > 0 ? ` (why each was skipped: wfx instances bulk show ${v.bulkId} --outcome skipped)` : '';
  const left = v.state !== 'COMPLETED' && v.pending > 0 ? `, ${count(v.pending)} not reached` : '';
  return `bulk ${v.operation} ${v.bulkId} ${word}: ${count(v.done)} done, ${count(v.skipped)} skipped${left}${skipped}`;
}

type Out = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/**
 * Shows an operation's progress on `out` as it comes: a bar redrawn in place on a terminal
 * (`bar`), else a plain line whenever it changed, at most one per `lineEveryMs` but the last.
 */
export class ProgressView {
  private drawn = false;
  private lastLine = '';
  private lastAt = -Infinity;

  constructor(
    private readonly out: Out,
    private readonly bar: boolean,
    private readonly now: () => number = Date.now,
    private readonly lineEveryMs = 1000,
  ) {}

  /** Shows `v` (a plain line at once, whatever the pace, when `v` has ended). */
  show(v: BulkView): void {
    if (this.bar) {
      const columns = this.out.columns && this.out.columns > 0 ? this.out.columns : 80;
      this.out.write(`${CLEAR_LINE}${progressBar(v, columns)}`);
      this.drawn = true;
      return;
    }
    const line = progressText(v);
    const paced = v.state === 'RUNNING' && this.now() - this.lastAt < this.lineEveryMs;
    if (line === this.lastLine || paced) return;
    this.out.write(`${line}\n`);
    this.lastLine = line;
    this.lastAt = this.now();
  }

  /** Ends the bar's line (before other output). */
  end(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}
