/**
 * Looks for secrets in bytes at rest, in every encoding the daemon could have written one in:
 * UTF-8 (and so JSON, when nothing in it needs escaping), JSON-escaped, UTF-16LE, hex (both
 * cases) and base64 / base64url at each of the three alignments a secret can have inside a
 * longer encoded buffer. Used by the tests that no secret rests in plain text (docs/operations.md,
 * Secrets).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One way a secret may be written: what to look for. */
export interface Needle {
  readonly secret: string;
  readonly encoding: string;
  readonly bytes: Buffer;
}

/** The base64 text of `bytes` placed after `skew` other bytes, cut to the characters that depend on `bytes` alone. */
function alignedBase64(bytes: Buffer, skew: number, encoding: 'base64' | 'base64url'): string {
  const text = Buffer.concat([Buffer.alloc(skew), bytes]).toString(encoding);
  const whole = Math.floor((skew + bytes.length) / 3) * 4;
  return text.slice(skew === 0 ? 0 : 4, whole);
}

/** The needles of each of `secrets`. */
export function needlesOf(secrets: readonly string[]): Needle[] {
  const out: Needle[] = [];
  for (const secret of secrets) {
    const utf8 = Buffer.from(secret, 'utf8');
    const add = (encoding: string, text: string | Buffer) =>
      out.push({ secret, encoding, bytes: typeof text === 'string' ? Buffer.from(text, 'utf8') : text });
    add('utf8', utf8);
    add('json', JSON.stringify(secret).slice(1, -1));
    add('utf16le', Buffer.from(secret, 'utf16le'));
    add('hex', utf8.toString('hex'));
    add('HEX', utf8.toString('hex').toUpperCase());
    for (const skew of [0, 1, 2]) {
      add(`base64+${skew}`, alignedBase64(utf8, skew, 'base64'));
      add(`base64url+${skew}`, alignedBase64(utf8, skew, 'base64url'));
    }
  }
  return out;
}

/** Where a needle was found. */
export interface Finding {
  readonly where: string;
  readonly secret: string;
  readonly encoding: string;
}

/** Every needle found in `bytes` (named `where`). */
export function scanBytes(bytes: Buffer, where: string, needles: readonly Needle[]): Finding[] {
  return needles.filter((n) => bytes.includes(n.bytes)).map((n) => ({ where, secret: n.secret, encoding: n.encoding }));
}

/** Every file under `dir` (recursively), as paths. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path) : e.isFile() ? [path] : [];
  });
}

/** Every needle found in any file under `dir`, each named by its path under `dir`. Also returns how many bytes were read. */
export function scanDir(
  dir: string,
  needles: readonly Needle[],
): { findings: Finding[]; files: number; bytes: number } {
  const findings: Finding[] = [];
  let bytes = 0;
  const files = filesUnder(dir);
  for (const file of files) {
    if (statSync(file).size === 0) continue;
    const content = readFileSync(file);
    bytes += content.length;
    findings.push(...scanBytes(content, relative(dir, file), needles));
  }
  return { findings, files: files.length, bytes };
}
