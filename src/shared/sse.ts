/** One Server-Sent Event as received: its fields, or a `:comment` line. */
export interface SseEvent {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly retry?: string;
  readonly comment?: string;
}

/**
 * Parses a Server-Sent Events body (the text/event-stream format) into events, one per blank-
 * line-separated block; multi-line `data:` fields are joined with newlines. Used by the CLI's
 * client and by the tests, so both read streams the same way.
 */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let sep: number;
    while ((sep = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, sep);
      buf = buf.slice(sep + 2);
      const ev: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line === '') continue;
        if (line.startsWith(':')) {
          ev.comment = line.slice(1);
          continue;
        }
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
        ev[field] = ev[field] === undefined ? value : `${ev[field]}\n${value}`;
      }
      yield ev as SseEvent;
    }
  }
}
