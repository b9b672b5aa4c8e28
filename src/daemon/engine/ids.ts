import { randomFillSync } from 'node:crypto';

/** Random bytes drawn in bulk: one syscall per 409 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then randomness. Execution ids
 * are time-ordered, so the day an execution started, its history bucket, follows from its id.
 */
export function uuidv7(at: Date = new Date()): string {
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const bytes = Buffer.allocUnsafe(16);
  pool.copy(bytes, 6, poolAt, poolAt + 10);
  poolAt += 10;
  // 48-bit big-endian milliseconds; plain arithmetic (a Number holds 2^53 exactly), no BigInt.
  let ms = at.getTime();
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
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
