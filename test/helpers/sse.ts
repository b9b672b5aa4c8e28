/** One Server-Sent Event as received. */
export interface SseEvent {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly comment?: string;
}

/** Reads Server-Sent Events from a fetch response, one at a time. */
export async function* readSse(res: Response): AsyncGenerator<SseEvent> {
  const reader = res.body!.getReader();
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
        if (line.startsWith(':')) ev.comment = line.slice(1);
        else {
          const i = line.indexOf(':');
          const field = i < 0 ? line : line.slice(0, i);
          const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
          ev[field] = ev[field] === undefined ? value : `${ev[field]}\n${value}`;
        }
      }
      yield ev as SseEvent;
    }
  }
}
