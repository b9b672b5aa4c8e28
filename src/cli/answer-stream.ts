import type { LogProgress } from '../shared/api/index.js';
import type { CliContext } from './context.js';

/** How streamed answers are shown: rewritten in place on a terminal, as plain text in a pipe, or as JSON lines. */
export type AnswerStreamMode = 'tty' | 'plain' | 'json';

const CLEAR_LINE = '\r\u001b[2K';
const DIM = '\u001b[2m';
const RESET = '\u001b[0m';
/** Kept of a node's answer: a terminal line shows only its tail. */
const KEEP_CHARS = 4096;

/**
 * Prints a model's answer as it streams in (the `progress` events of `wfx logs --follow` and
 * `wfx run --follow`) between the log lines, which stay the record: on a terminal the text grows
 * on one line that the next log line replaces; in a pipe each node's text is written as it comes,
 * its line ended before the next log line; with --json each event is a line
 * `{"event":"progress",nodeId,nodeInstanceId,delta}`.
 */
export class AnswerStream {
  /** The node instance whose text is on the open line (tty, plain). */
  private open: string | null = null;
  /** Each streaming node instance's node and text so far (tty). */
  private readonly streams = new Map<string, { readonly nodeId: string; text: string }>();

  constructor(
    private readonly out: CliContext['stdout'] & { columns?: number },
    private readonly mode: AnswerStreamMode,
    private readonly color: boolean,
  ) {}

  /** The mode for `ctx`'s stdout and the command's --json. Pure. */
  static modeFor(ctx: CliContext, json: boolean): AnswerStreamMode {
    return json ? 'json' : ctx.stdout.isTTY ? 'tty' : 'plain';
  }

  /** One piece of a node's answer. */
  progress(p: LogProgress): void {
    if (this.mode === 'json') {
      this.out.write(`${JSON.stringify({ event: 'progress', ...p })}\n`);
      return;
    }
    const prefix = `${p.nodeId}: `;
    if (this.mode === 'plain') {
      if (this.open !== p.nodeInstanceId) {
        if (this.open !== null) this.out.write('\n');
        this.out.write(prefix);
        this.open = p.nodeInstanceId;
      }
      this.out.write(p.delta);
      return;
    }
    const s = this.streams.get(p.nodeInstanceId) ?? { nodeId: p.nodeId, text: '' };
    s.text = (s.text + p.delta).slice(-KEEP_CHARS);
    this.streams.set(p.nodeInstanceId, s);
    const room = Math.max(10, (this.out.columns ?? 80) - prefix.length - 1);
    const line = s.text.replace(/\s+/g, ' ').slice(-room);
    this.out.write(`${CLEAR_LINE}${this.color ? `${DIM}${prefix}${RESET}` : prefix}${line}`);
    this.open = p.nodeInstanceId;
  }

  /**
   * Before a log line of `nodeId` ('' for the execution): the open line is ended (plain) or
   * cleared (tty). The node's own log line replaces the text streamed for it: a retry's answer
   * streams from the start.
   */
  beforeEntry(nodeId: string): void {
    this.close();
    for (const [id, s] of this.streams) if (s.nodeId === nodeId) this.streams.delete(id);
  }

  /** Ends the open line, if any. */
  close(): void {
    if (this.open !== null) this.out.write(this.mode === 'tty' ? CLEAR_LINE : '\n');
    this.open = null;
  }
}
