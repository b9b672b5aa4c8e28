import { namesIn } from '../disk/durable-files.js';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeFrames } from './frame.js';
import { BUCKET_RE, openMarkerPath } from './history-files.js';

/**
 * What is wrong at one place of a history file:
 * - `HISTORY_FRAME_DAMAGED`: a whole line fails its check (checksum, header or JSON) and holds no
 *   zero byte: bits changed on disk, acknowledged data is lost;
 * - `HISTORY_TRUNCATED`: the file ends inside a line although no write was in flight (its bucket
 *   was closed cleanly): cut short, what followed is lost;
 * - `HISTORY_TORN_WRITE`: a line damaged by zeros (sectors that never landed): what a crash leaves
 *   of the write in flight, never acknowledged; the same as a lost sector otherwise.
 */
export type HistoryFindingCode = 'HISTORY_FRAME_DAMAGED' | 'HISTORY_TRUNCATED' | 'HISTORY_TORN_WRITE';

/** One damaged place of a history file. */
export interface HistoryFinding {
  /** The bucket file's name (`YYYY-MM-DD.jsonl`), relative to the history directory. */
  readonly file: string;
  /** Byte offset of the damaged line's first byte. */
  readonly offset: number;
  readonly code: HistoryFindingCode;
  readonly message: string;
  /** The execution id the damaged line's header still names, when it does. */
  readonly instanceId?: string;
}

/**
 * The finding for the damaged whole line `buf[start, lf)` (lf: its LF's index) at file offset
 * `offset`. Pure.
 */
export function damagedLine(file: string, buf: Buffer, start: number, lf: number, offset: number): HistoryFinding {
  const line = buf.subarray(start, lf);
  const instanceId = idOfHeader(line);
  const torn = line.includes(0);
  return {
    file,
    offset,
    code: torn ? 'HISTORY_TORN_WRITE' : 'HISTORY_FRAME_DAMAGED',
    message: torn
      ? `a record damaged by zeros (a write torn by a crash, or a lost sector) in ${file} at byte ${offset}`
      : `a record fails its checksum in ${file} at byte ${offset}`,
    ...(instanceId !== undefined && { instanceId }),
  };
}

/** The finding for a bucket that ends inside a line at `offset` while no write was in flight. Pure. */
export function truncatedAt(file: string, buf: Buffer, offset: number): HistoryFinding {
  const instanceId = idOfHeader(buf);
  return {
    file,
    offset,
    code: 'HISTORY_TRUNCATED',
    message: `${file} is cut short: its last record, at byte ${offset}, is incomplete and what followed it is lost`,
    ...(instanceId !== undefined && { instanceId }),
  };
}

/** Ids are word characters and dashes; a header whose key is anything else names nothing we can trust. */
const ID_RE = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The document id a damaged line's header still gives (`<crc> <seq> <id>[|tags] ...`), if its
 * first three fields look whole. Pure.
 */
export function idOfHeader(line: Buffer): string | undefined {
  const head = line.toString('latin1', 0, Math.min(line.length, 160)).split(' ');
  if (head.length < 4 || !/^[0-9a-f]{8}$/.test(head[0]!) || !/^\d+$/.test(head[1]!)) return undefined;
  const id = head[2]!.split('|')[0]!;
  return ID_RE.test(id) ? id : undefined;
}

/** Bytes read at a time by verifyHistory. */
const VERIFY_CHUNK = 8 << 20;

/**
 * Checks every frame of every bucket in the history directory `dir` and returns what is damaged,
 * by file then offset. Read-only: changes nothing (zeros after the data and a crash's torn last
 * line, which opening history cuts, are reported as they stand: trailing zeros as nothing, an
 * incomplete last line as HISTORY_TORN_WRITE when the bucket was open at a crash, else as
 * HISTORY_TRUNCATED). A directory that does not exist has no findings. Throws on I/O errors.
 */
export async function verifyHistory(dir: string): Promise<HistoryFinding[]> {
  const names = await namesIn(dir);
  const findings: HistoryFinding[] = [];
  for (const name of names.filter((n) => BUCKET_RE.test(n)).sort()) {
    const bucket = BUCKET_RE.exec(name)![1]!;
    const wasOpen = await stat(openMarkerPath(dir, bucket)).then(
      () => true,
      () => false,
    );
    const fh = await open(join(dir, name), 'r');
    try {
      findings.push(...(await verifyFile(fh, name, wasOpen)));
    } finally {
      await fh.close();
    }
  }
  return findings;
}

async function verifyFile(fh: FileHandle, name: string, wasOpen: boolean): Promise<HistoryFinding[]> {
  const findings: HistoryFinding[] = [];
  const { size } = await fh.stat();
  let carry: Buffer | null = null;
  let position = 0;
  while (position < size) {
    const chunk = Buffer.allocUnsafe(Math.min(VERIFY_CHUNK, size - position));
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, position);
    if (bytesRead <= 0) break;
    position += bytesRead;
    const buf: Buffer = carry ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    const start = position - buf.length;
    const end = buf.lastIndexOf(0x0a) + 1;
    scanLines(buf.subarray(0, end), start, name, findings);
    carry = end < buf.length ? Buffer.from(buf.subarray(end)) : null;
  }
  if (carry) {
    // Zeros written ahead of the data are no damage; a crash left them, or a close's cut was lost.
    let last = carry.length - 1;
    while (last >= 0 && carry[last] === 0) last--;
    const trailingZeros = last < carry.length - 1;
    if (last >= 0) {
      const offset = size - carry.length;
      const line = carry.subarray(0, last + 1);
      if (wasOpen || trailingZeros) {
        const id = idOfHeader(line);
        findings.push({
          file: name,
          offset,
          code: 'HISTORY_TORN_WRITE',
          message: `an incomplete last record in ${name} at byte ${offset}, torn by a crash (cut when history opens)`,
          ...(id !== undefined && { instanceId: id }),
        });
      } else findings.push(truncatedAt(name, line, offset));
    }
  }
  return findings;
}

/**
 * Every readable frame header of whole lines of a history file, skipping a damaged line rather
 * than stopping; each damaged line is given to `onBad` (its start and its LF's index in `buf`).
 * Frames decode at their usual cost; only a damaged line costs more.
 */
export function* scanFrames(
  buf: Buffer,
  onBad?: (start: number, lf: number) => void,
): Generator<{ key: string; offset: number; length: number }> {
  let pos = 0;
  while (pos < buf.length) {
    const { frames, badOffset } = decodeFrames(buf.subarray(pos), { keysOnly: true });
    for (const f of frames) yield { key: f.key, offset: pos + f.offset, length: f.length };
    if (badOffset === null) return;
    const lf = buf.indexOf(0x0a, pos + badOffset);
    if (lf < 0) return;
    onBad?.(pos + badOffset, lf);
    pos = lf + 1;
  }
}

/** Adds a finding for each damaged whole line of `buf` (whole lines, from file offset `base`). */
function scanLines(buf: Buffer, base: number, file: string, findings: HistoryFinding[]): void {
  const frames = scanFrames(buf, (start, lf) => findings.push(damagedLine(file, buf, start, lf, base + start)));
  while (!frames.next().done);
}
