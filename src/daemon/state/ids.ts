import { randomFillSync, randomInt } from 'node:crypto';

/** Random bytes drawn in bulk: one syscall per 409 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** ASCII hex digits, and where each of the 16 bytes' two digits go in the 36-character text. */
const HEX = Buffer.from('0123456789abcdef');
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** The id's text is written here, digit by digit, then read as one flat string. */
const text = Buffer.from('00000000-0000-7000-8000-000000000000', 'latin1');

function putByte(i: number, b: number): void {
  text[AT[i]!] = HEX[b >> 4]!;
  text[AT[i]! + 1] = HEX[b & 15]!;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then randomness. Execution ids
 * are time-ordered, so the day an execution started, its history bucket, follows from its id.
 * The digits are written straight into the text and read as one string: a hex string cut into
 * five slices and joined cost 2.5 times as much, and the joined (cons) string was flattened again
 * when it became a key of the live executions.
 */
export function uuidv7(at: Date = new Date()): string {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  // 48-bit big-endian milliseconds; plain arithmetic (a Number holds 2^53 exactly), no BigInt.
  let ms = at.getTime();
  for (let i = 5; i >= 0; i--) {
    putByte(i, ms % 256);
    ms = Math.floor(ms / 256);
  }
  for (let i = 6; i < 16; i++) {
    const b = pool[poolAt++]!;
    putByte(i, i === 6 ? (b & 0x0f) | 0x70 : i === 8 ? (b & 0x3f) | 0x80 : b);
  }
  return text.toString('latin1', 0, 36);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const DAY_MS = 86_400_000;
/** The last day asked for, [start, start + 1 day) in ms: nearly every execution archived today is in it. */
let lastDay = { start: NaN, name: '' };

/** The history bucket (UTC day, YYYY-MM-DD) of an execution id; null when it is not a UUIDv7. */
export function bucketOf(id: string): string | null {
  if (!UUID_RE.test(id)) return null;
  const ms = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  if (!(ms >= lastDay.start && ms < lastDay.start + DAY_MS)) {
    const start = ms - (ms % DAY_MS);
    lastDay = { start, name: new Date(start).toISOString().slice(0, 10) };
  }
  return lastDay.name;
}

/**
 * The partition of execution `id` in a store of `partitions` partitions (decision 035): 0, the
 * directory's, holds every execution only while there is no other; otherwise executions are
 * spread over 1..partitions-1 by the id's last 16 bits (random in a UUIDv7, and chosen by
 * `uuidv7In`), or by a hash of an id of another shape.
 */
export function partitionOf(id: string, partitions: number): number {
  if (partitions <= 1) return 0;
  return 1 + (lastBits(id) % (partitions - 1));
}

/** The id's last 16 bits: its last four hex digits, or an FNV-1a hash of an id that is not hex there. */
function lastBits(id: string): number {
  const tail = id.slice(-4);
  if (/^[0-9a-f]{4}$/i.test(tail)) return Number.parseInt(tail, 16);
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h & 0xffff;
}

/**
 * A UUIDv7 in partition `partition` of `partitions` (partitionOf): its last 16 bits drawn among
 * those that fall there, so a daemon starts executions in the partitions it owns and a child in
 * its parent's without drawing again and again.
 */
export function uuidv7In(partition: number, partitions: number, at: Date = new Date()): string {
  const id = uuidv7(at);
  if (partitions <= 1) return id;
  const n = partitions - 1;
  const r = partition - 1;
  if (!Number.isInteger(r) || r < 0 || r >= n) throw new RangeError(`no partition ${partition} of ${partitions}`);
  // The values below 65536 that are r modulo n: r, r + n, ...; one of them at random.
  const choices = Math.floor((0xffff - r) / n) + 1;
  const v = r + n * randomInt(choices);
  return id.slice(0, 32) + v.toString(16).padStart(4, '0');
}

/**
 * New execution ids on a store of `partitions` partitions (EngineOptions.newInstanceId): a
 * child's in its parent's partition, so that a step changes one partition; a root's in one of
 * the execution partitions `owned` lists, drawn at random.
 */
export function partitionedIds(
  partitions: number,
  owned: () => readonly number[],
): (now: Date, parentInstanceId: string | null) => string {
  return (now, parentInstanceId) => {
    if (parentInstanceId !== null) return uuidv7In(partitionOf(parentInstanceId, partitions), partitions, now);
    const choices = owned();
    if (choices.length === 0) throw new Error('this daemon owns no partition to start an execution in');
    return uuidv7In(choices[randomInt(choices.length)]!, partitions, now);
  };
}
