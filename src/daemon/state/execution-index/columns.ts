/**
 * Typed-array columns of the execution index and the strings they share: a column grows by
 * doubling and is never shrunk (slots are reused), and a repeated string is interned once and
 * kept as its number (docs/decisions/005-no-long-lived-growing-collections.md).
 */
import type { ImageIn, ImageOut } from './image.js';

/** A typed array of one of the index's column kinds. */
export type Column = Int32Array | Uint32Array | Uint8Array | Float64Array;

/** `column` with room for `length` elements, its contents kept (itself when it has room). */
export function grown<C extends Column>(column: C, length: number): C {
  if (column.length >= length) return column;
  const made = new (column.constructor as new (n: number) => C)(length);
  made.set(column);
  return made;
}

/** Strings numbered once each (organization, flow, version, node, ref, domain, assignee ...). */
export class Interner {
  private readonly codes = new Map<string, number>();
  private texts: string[] = [];

  /** Saves the strings (image.ts). */
  save(out: ImageOut): void {
    out.texts(this.texts);
  }

  /** Takes the strings an image saved (an empty interner). */
  restore(inp: ImageIn): void {
    const texts = inp.texts();
    this.codes.clear();
    for (let i = 0; i < texts.length; i++) {
      const t = texts[i];
      if (t == null || this.codes.has(t)) throw new RangeError('the image has an interned string twice or none');
      this.codes.set(t, i);
    }
    this.texts = texts as string[];
  }

  /** The number of `text`, given one if it has none. */
  code(text: string): number {
    let code = this.codes.get(text);
    if (code === undefined) {
      code = this.texts.length;
      this.codes.set(text, code);
      this.texts.push(text);
    }
    return code;
  }

  /** The number of `text`, or -1 when it was never interned (no execution can have it). */
  find(text: string): number {
    return this.codes.get(text) ?? -1;
  }

  /** The text of `code`. */
  text(code: number): string {
    return this.texts[code]!;
  }
}

/** The value of each hex digit by char code (lowercase only), -1 for any other character. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;

/** The value of a hex digit's char code, or -1. */
function hexValue(c: number): number {
  return c < 128 ? HEX_VALUE[c]! : -1;
}

/** Where the 8 digits of each 32-bit word of a UUID's text start, digit by digit. */
const DIGITS: readonly number[] = [
  0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,
];

/**
 * Writes the 16 bytes of `id`, a UUID in lowercase canonical text (8-4-4-4-12 hex digits), to
 * `words` at `at` as four big-endian 32-bit words, so that the words' order is the text's.
 * Returns false, writing nothing meaningful, when `id` is not such a UUID.
 */
export function parseUuid(id: string, words: Uint32Array, at: number): boolean {
  if (id.length !== 36 || id.charCodeAt(8) !== 45 || id.charCodeAt(13) !== 45) return false;
  if (id.charCodeAt(18) !== 45 || id.charCodeAt(23) !== 45) return false;
  for (let w = 0; w < 4; w++) {
    let word = 0;
    for (let d = 0; d < 8; d++) {
      const v = hexValue(id.charCodeAt(DIGITS[w * 8 + d]!));
      if (v < 0) return false;
      word = (word << 4) | v;
    }
    words[at + w] = word >>> 0;
  }
  return true;
}

const HEX = Buffer.from('0123456789abcdef');
/** Where the two digits of each of the 16 bytes go in the 36-character text. */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** Text is written here digit by digit, then read as one flat string (ids.ts does the same). */
const text = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');

/** The canonical text of the UUID held as four words at `at` of `words`. */
export function formatUuid(words: Uint32Array, at: number): string {
  for (let i = 0; i < 16; i++) {
    const b = (words[at + (i >> 2)]! >>> (24 - 8 * (i & 3))) & 255;
    text[AT[i]!] = HEX[b >> 4]!;
    text[AT[i]! + 1] = HEX[b & 15]!;
  }
  return text.toString('latin1', 0, 36);
}

/**
 * A 31-bit hash of the UUID at `at`: the low three words of a UUIDv7 are mostly random, the
 * first is its time, so all four are mixed (murmur3's finalizer).
 */
export function hashUuid(words: Uint32Array, at: number): number {
  let h = Math.imul(words[at]! ^ words[at + 1]!, 0x85ebca6b) ^ words[at + 2]!;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) ^ words[at + 3]!;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return (h ^ (h >>> 13)) & 0x7fffffff;
}

/** Pairs of numbers (interned strings or other pairs) numbered once each, with no string made. */
export class Pairs {
  private readonly codes = new Map<number, number>();
  private firsts = new Int32Array(16);
  private seconds = new Int32Array(16);
  private count = 0;

  /** Saves the pairs (image.ts). */
  save(out: ImageOut): void {
    out.parallel(this.count, this.firsts, this.seconds);
  }

  /** Takes the pairs an image saved (no pair numbered yet). */
  restore(inp: ImageIn): void {
    [this.firsts, this.seconds, this.count] = inp.parallel('pairs', 'Int32Array', 'Int32Array');
    this.codes.clear();
    for (let code = 0; code < this.count; code++)
      this.codes.set(this.firsts[code]! * 0x4000000 + this.seconds[code]!, code);
  }

  /** The number of the pair (`a`, `b`), given one if it has none (each below 2^26). */
  code(a: number, b: number): number {
    const key = a * 0x4000000 + b;
    let code = this.codes.get(key);
    if (code === undefined) {
      code = this.count++;
      this.codes.set(key, code);
      this.firsts = grown(this.firsts, this.count > this.firsts.length ? this.count * 2 : 0);
      this.seconds = grown(this.seconds, this.firsts.length);
      this.firsts[code] = a;
      this.seconds[code] = b;
    }
    return code;
  }

  /** The number of (`a`, `b`), or -1 when none was given (or either is -1). */
  find(a: number, b: number): number {
    return a < 0 || b < 0 ? -1 : (this.codes.get(a * 0x4000000 + b) ?? -1);
  }

  /** The first number of pair `code`. */
  first(code: number): number {
    return this.firsts[code]!;
  }

  /** The second number of pair `code`. */
  second(code: number): number {
    return this.seconds[code]!;
  }
}

/**
 * An execution's flow (a pair of organization and processId in `flows`), version and
 * environment as one number: there are few distinct ones, so a slot keeps one column where it
 * would keep five.
 */
export class Shapes {
  private readonly versions = new Pairs();
  private readonly tuples = new Pairs();
  /** The last shape given, and what it was given for: a load gives the same one run after run. */
  private last = -1;
  private lastFlow = -1;
  private lastVer = -1;
  private lastEnv = -1;

  constructor(private readonly flows: Pairs) {}

  /** Saves the shapes (image.ts; the flows are their owner's to save). */
  save(out: ImageOut): void {
    this.versions.save(out);
    this.tuples.save(out);
  }

  /** Takes the shapes an image saved. */
  restore(inp: ImageIn): void {
    this.versions.restore(inp);
    this.tuples.restore(inp);
    this.last = this.lastFlow = this.lastVer = this.lastEnv = -1;
  }

  /** The number of flow `flow` (a code of `flows`) at version `ver` in environment `env` (string codes). */
  code(flow: number, ver: number, env: number): number {
    if (flow === this.lastFlow && ver === this.lastVer && env === this.lastEnv) return this.last;
    this.lastFlow = flow;
    this.lastVer = ver;
    this.lastEnv = env;
    return (this.last = this.tuples.code(flow, this.versions.code(ver, env)));
  }

  /** The flow (a code of `flows`) of shape `shape`. */
  flow(shape: number): number {
    return this.tuples.first(shape);
  }

  /** The organization's string code of shape `shape`. */
  org(shape: number): number {
    return this.flows.first(this.tuples.first(shape));
  }

  /** The processId's string code of shape `shape`. */
  proc(shape: number): number {
    return this.flows.second(this.tuples.first(shape));
  }

  /** The version's string code of shape `shape`. */
  ver(shape: number): number {
    return this.versions.first(this.tuples.second(shape));
  }

  /** The environment's string code of shape `shape`. */
  env(shape: number): number {
    return this.versions.second(this.tuples.second(shape));
  }
}
