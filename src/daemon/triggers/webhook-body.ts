/**
 * What the delivery log keeps of a delivery instead of its body (a size, a hash, a short
 * preview), and the bounds on the other fields a sender controls, so that a record's size is
 * bounded whatever was posted.
 */
import { createHash } from 'node:crypto';
import { DELIVERY_PREVIEW_BYTES, type DeliveryBody } from '../../shared/api/index.js';

/** Characters of a delivery's event type, event id or reason kept in its record, at most. */
export const RECORD_TEXT_MAX = 200;
/** Characters of a reason (it may list every start the engine refused) kept, at most. */
export const RECORD_REASON_MAX = 2000;

/** `sha256:<hex>` of `bytes`. */
export function sha256Of(...parts: Array<Buffer | string>): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return `sha256:${h.digest('hex')}`;
}

/** `text` cut to `max` characters (at a code point), with an ellipsis when cut. */
export function clipText(text: string, max: number): string;
export function clipText(text: string | null, max: number): string | null;
export function clipText(text: string | null, max: number): string | null {
  if (text === null || text.length <= max) return text;
  let end = max - 1;
  // Not between the two halves of a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
  return `${text.slice(0, end)}…`;
}

/** Control characters (Unicode Cc: C0, DEL, C1) but tab, line feed and carriage return. */
const CONTROLS = /[^\P{Cc}\t\n\r]/gu;

/**
 * The first bytes of `body` as readable text: at most `max` bytes of UTF-8, never a character
 * cut in two, bytes that are not UTF-8 and control characters as U+FFFD; and whether that is
 * less than the whole body.
 */
export function previewOf(body: Buffer, max = DELIVERY_PREVIEW_BYTES): { preview: string; truncated: boolean } {
  let end = Math.min(body.length, max);
  // Back to the start of a character the cut would split (UTF-8 continuation bytes are 10xxxxxx).
  if (end < body.length) {
    let back = end;
    while (back > 0 && end - back < 3 && (body[back]! & 0xc0) === 0x80) back--;
    if ((body[back]! & 0xc0) !== 0x80) end = back;
  }
  const chars = [...body.subarray(0, end).toString('utf8').replace(CONTROLS, '\uFFFD')];
  let truncated = end < body.length;
  // U+FFFD takes 3 bytes where the byte it replaced took 1: cut again, a character at a time.
  let bytes = chars.reduce((n, c) => n + Buffer.byteLength(c), 0);
  while (bytes > max) {
    bytes -= Buffer.byteLength(chars.pop()!);
    truncated = true;
  }
  return { preview: chars.join(''), truncated };
}

/** What the log keeps of a body read whole: its size, its SHA-256 and a short preview. */
export function bodySummary(body: Buffer, sha256: string = sha256Of(body)): DeliveryBody {
  const { preview, truncated } = previewOf(body);
  return { bytes: body.length, sha256, preview, truncated };
}
