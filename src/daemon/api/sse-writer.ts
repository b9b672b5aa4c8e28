/**
 * A Server-Sent Events stream written straight to the response, so that its writer sees the
 * socket's backpressure. fastify-sse-v2's `reply.sse` queues events in memory without bound and
 * says nothing of the socket: fine for a trickle of live events, not for replaying a long log.
 */
import type { FastifyReply } from 'fastify';

/** One event as written: its fields, or a `:comment` line. */
export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly comment?: string;
}

/** How long a client waits before it reconnects, sent first (as fastify-sse-v2 does). */
const RETRY_MS = 3000;

/** The text of one event, blank line included; a `data` of several lines becomes several `data:` lines. Pure. */
export function sseText(m: SseMessage): string {
  let text = '';
  if (m.id !== undefined) text += `id: ${m.id}\n`;
  if (m.event !== undefined) text += `event: ${m.event}\n`;
  if (m.data !== undefined) for (const line of m.data.split('\n')) text += `data: ${line}\n`;
  if (m.comment !== undefined) text += `:${m.comment}\n`;
  return text === '' ? '' : `${text}\n`;
}

/**
 * The event stream of one request: hijacks `reply` and writes the stream's head at once (the
 * headers set on the reply so far kept). Writes are whole events; each says whether the socket
 * takes more now, and `drained` waits until it does. After the client goes or `end`, writes are
 * dropped.
 */
export class SseWriter {
  private readonly raw: FastifyReply['raw'];

  constructor(reply: FastifyReply) {
    void reply.hijack();
    this.raw = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) this.raw.setHeader(name, value ?? '');
    this.raw.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.raw.setHeader('Connection', 'keep-alive');
    this.raw.setHeader('Cache-Control', 'no-cache,no-transform');
    this.raw.setHeader('x-no-compression', 1);
    this.raw.statusCode = 200;
    this.raw.write(`retry: ${RETRY_MS}\n\n`);
  }

  /** True once the stream ended or its client went away: nothing more is written. */
  get closed(): boolean {
    return this.raw.writableEnded || this.raw.destroyed;
  }

  /** Writes one event; false when the socket's buffer is full (wait for `drained`) or the stream is closed. */
  send(message: SseMessage): boolean {
    return this.write(sseText(message));
  }

  /** Writes events already made text (sseText); false as `send`. */
  write(text: string): boolean {
    if (this.closed) return false;
    return this.raw.write(text);
  }

  /** Resolves once the socket takes more, or the stream is closed. */
  drained(): Promise<void> {
    if (this.closed || !this.raw.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.raw.off('close', done);
        resolve();
      };
      this.raw.on('drain', done);
      this.raw.on('close', done);
    });
  }

  /** Ends the stream (what was written is still sent). */
  end(): void {
    if (!this.closed) this.raw.end();
  }
}
