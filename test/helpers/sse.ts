/** The tests read Server-Sent Events with the client's own parser. */
export { parseSse, type SseEvent } from '../../src/shared/sse.js';
import { parseSse, type SseEvent } from '../../src/shared/sse.js';

/** Reads Server-Sent Events (comments included) from a fetch response. */
export function readSse(res: Response): AsyncGenerator<SseEvent> {
  return parseSse(res.body!);
}
