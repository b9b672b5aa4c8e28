import { crc32 } from 'node:zlib';

/**
 * One line of an append-only log (the journal and the history files):
 *
 *     <crc32 as 8 hex digits> SP <seq> SP <key> SP <json> LF
 *
 * The checksum covers everything after the first space up to (not including) the LF. `key` is
 * a token without spaces ("-" when the log has no use for one); history files use the
 * execution id so an index can be rebuilt without parsing the JSON, the journal the sequence
 * number of the first frame of the durable write the frame went out in. JSON.stringify never
 * emits a raw LF, so a line is a record. Text rather than binary so that an operator can read
 * a journal with `tail`.
 */
export interface Frame<T = unknown> {
  readonly seq: number;
  readonly key: string;
  readonly value: T;
}

const LF = 0x0a;
const SP = 0x20;
const COMMA = 0x2c;
const NO_KEY = '-';
/** ASCII codes of the hex digits, lower case, as `toString(16)` writes them. */
const HEX = Buffer.from('0123456789abcdef');

/** Encodes one record as a frame line (with its trailing LF). Pure. */
export function encodeFrame(seq: number, value: unknown, key: string = NO_KEY): string {
  return frameBytes(seq, JSON.stringify(value), key).toString('utf8');
}

/**
 * JSON text in pieces, written one after the other: `open`, the parts separated by commas,
 * `close`. Callers that hold their records already serialized (a journal entry, an archived
 * execution) pass them so, instead of joining them into one more string first.
 */
export interface JsonPieces {
  readonly open: string;
  readonly parts: readonly string[];
  readonly close: string;
}

/** Frames are written into slabs of this size, one after the other (see frameBytes). */
const SLAB_SIZE = 256 << 10;
/** A frame that might need more than this gets a buffer of its own. */
const SLAB_MAX_FRAME = 32 << 10;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

/**
 * The frame line of `json` as bytes, ready to append: the JSON is encoded once, straight into
 * the line, and the checksum is taken over those bytes (no intermediate strings). Pure, but for
 * where the bytes live: a frame of at most SLAB_MAX_FRAME is a view of a shared slab, written
 * without measuring its UTF-8 length first (room for 3 bytes a character is kept), and the slab
 * is never written again once handed out. A buffer per frame measured every string twice and
 * took a new 8 KiB pool (an ArrayBuffer for the GC) every few frames; a slab lives until the
 * last of its frames is written.
 */
export function frameBytes(seq: number, json: string | JsonPieces, key: string = NO_KEY): Buffer {
  const head = `${seq} ${key} `;
  let chars = head.length;
  if (typeof json === 'string') chars += json.length;
  else {
    chars += json.open.length + json.close.length + json.parts.length;
    for (const part of json.parts) chars += part.length;
  }
  const most = 10 + 3 * chars; // a UTF-16 code unit is at most 3 bytes of UTF-8
  if (most > SLAB_MAX_FRAME) return frameInto(Buffer.allocUnsafe(10 + utf8Length(head, json)), 0, head, json);
  if (slabUsed + most > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
    slabUsed = 0;
  }
  const start = slabUsed;
  const frame = frameInto(slab, start, head, json);
  slabUsed = start + frame.length;
  return frame;
}

/** The UTF-8 length of the frame's head and JSON, exactly (a large frame's buffer is made to measure). */
function utf8Length(head: string, json: string | JsonPieces): number {
  if (typeof json === 'string') return Buffer.byteLength(head) + Buffer.byteLength(json);
  let n =
    Buffer.byteLength(head) +
    Buffer.byteLength(json.open) +
    Buffer.byteLength(json.close) +
    Math.max(0, json.parts.length - 1);
  for (const part of json.parts) n += Buffer.byteLength(part);
  return n;
}

/** Writes the frame at `start` of `buf` (which has room for it) and returns its view. */
function frameInto(buf: Buffer, start: number, head: string, json: string | JsonPieces): Buffer {
  let at = start + 9;
  at += buf.write(head, at, 'utf8');
  if (typeof json === 'string') at += buf.write(json, at, 'utf8');
  else {
    at += buf.write(json.open, at, 'utf8');
    for (let i = 0; i < json.parts.length; i++) {
      if (i > 0) buf[at++] = COMMA;
      at += buf.write(json.parts[i]!, at, 'utf8');
    }
    at += buf.write(json.close, at, 'utf8');
  }
  // The checksum, over everything after its space, as 8 hex digits written digit by digit (no
  // string to make and encode).
  const crc = crc32(buf.subarray(start + 9, at));
  for (let i = 0; i < 8; i++) buf[start + i] = HEX[(crc >>> (28 - 4 * i)) & 15]!;
  buf[start + 8] = SP;
  buf[at++] = LF;
  return buf.subarray(start, at);
}

/** Result of decoding the frames of one buffer. */
export interface DecodeResult<T> {
  readonly frames: Array<Frame<T> & { readonly offset: number; readonly length: number }>;
  /** Byte offset of the first bad or incomplete line, or null when the buffer ends cleanly. */
  readonly badOffset: number | null;
  /** True when a valid frame follows the first bad line: damage in the middle, not a torn tail. */
  readonly validAfterBad: boolean;
  /** What follows the first bad line (see inspectTail); null when the buffer ends cleanly. */
  readonly tail: TailAfterBad | null;
}

/**
 * Decodes every frame of `buf`, stopping at the first line that is incomplete (no LF) or whose
 * checksum, header or JSON is wrong. When it stops early it looks further for any valid frame,
 * which tells a torn tail (crash mid-append: safe to cut) from damage in the middle (refuse).
 * Pure; never throws on bad input.
 */
export function decodeFrames<T = unknown>(buf: Buffer, options: { keysOnly?: boolean } = {}): DecodeResult<T> {
  const frames: Array<Frame<T> & { offset: number; length: number }> = [];
  let pos = 0;
  while (pos < buf.length) {
    const lf = buf.indexOf(LF, pos);
    const frame = lf < 0 ? null : parseLine<T>(buf, pos, lf, options.keysOnly === true);
    if (frame === null) {
      const tail = inspectTail(buf, pos);
      return { frames, badOffset: pos, validAfterBad: tail.keys.length > 0, tail };
    }
    frames.push({ ...frame, offset: pos, length: lf + 1 - pos });
    pos = lf + 1;
  }
  return { frames, badOffset: null, validAfterBad: false, tail: null };
}

/** What follows the first bad line of a log (see inspectTail). */
export interface TailAfterBad {
  /** Every byte from the bad line on is zero: zeros written ahead of the data, and nothing else. */
  readonly zeros: boolean;
  /** Keys of the valid frames after the bad line, each once, in order (no more than two are collected). */
  readonly keys: readonly string[];
  /**
   * A bad line that ends in an LF and holds no zero byte comes before a valid frame. A write torn
   * over zeros written ahead damages a line only where its sectors never landed, which read as
   * zeros (a frame never holds a zero byte), so this is damage of another kind.
   */
  readonly garbled: boolean;
  /**
   * The bad line itself ends in its LF and holds no zero byte: it was written whole and changed
   * since (a flipped bit, an edit), since a write torn over zeros leaves zeros where it failed.
   */
  readonly whole: boolean;
}

/**
 * Looks at `buf` from `from` (the first bad line, as decodeFrames found it) to its end: whether
 * any valid frame follows it, and, for a log written over zeros, what tells a write torn by a
 * crash from damage (see Journal.open). Pure; never throws.
 */
export function inspectTail(buf: Buffer, from: number): TailAfterBad {
  let pos = from;
  while (pos < buf.length && buf[pos] === 0) pos++;
  if (pos === buf.length) return { zeros: true, keys: [], garbled: false, whole: false };
  const firstLf = buf.indexOf(LF, from);
  const whole = firstLf >= 0 && !buf.subarray(from, firstLf).includes(0);
  const keys: string[] = [];
  let badWithoutZeros = false;
  let garbled = false;
  pos = from;
  while (pos < buf.length && keys.length < 2) {
    const lf = buf.indexOf(LF, pos);
    if (lf < 0) break;
    const frame = parseLine(buf, pos, lf, true);
    if (frame === null) {
      if (!buf.subarray(pos, lf).includes(0)) badWithoutZeros = true;
    } else {
      if (badWithoutZeros) garbled = true;
      if (!keys.includes(frame.key)) keys.push(frame.key);
    }
    pos = lf + 1;
  }
  return { zeros: false, keys, garbled, whole };
}

function parseLine<T>(buf: Buffer, start: number, lf: number, keysOnly: boolean): Frame<T> | null {
  if (lf - start < 15 || buf[start + 8] !== SP) return null;
  const expected = Number.parseInt(buf.toString('latin1', start, start + 8), 16);
  if (!Number.isFinite(expected) || crc32(buf.subarray(start + 9, lf)) !== expected) return null;
  const seqEnd = buf.indexOf(SP, start + 9);
  if (seqEnd < 0 || seqEnd >= lf) return null;
  const keyEnd = buf.indexOf(SP, seqEnd + 1);
  if (keyEnd < 0 || keyEnd >= lf) return null;
  const seq = Number(buf.toString('latin1', start + 9, seqEnd));
  if (!Number.isSafeInteger(seq)) return null;
  const key = buf.toString('utf8', seqEnd + 1, keyEnd);
  if (keysOnly) return { seq, key, value: undefined as T };
  try {
    return { seq, key, value: JSON.parse(buf.toString('utf8', keyEnd + 1, lf)) as T };
  } catch {
    return null;
  }
}
