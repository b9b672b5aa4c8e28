import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The bytes written under `dir`: each file up to its last byte that is not zero. Journal
 * segments are kept ahead of their data with zeros (store/append-file.ts), so a file's size
 * says how much was reserved, not how much was written.
 */
export function writtenBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) n += writtenBytes(path);
    else if (e.isFile()) {
      const bytes = readFileSync(path);
      let end = bytes.length;
      while (end > 0 && bytes[end - 1] === 0) end--;
      n += end;
    }
  }
  return n;
}

/** Whether any file under `dir` holds `needle` (its bytes as latin1 text). */
export function anyFileHolds(dir: string, needle: string): boolean {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory() ? anyFileHolds(path, needle) : e.isFile() && readFileSync(path, 'latin1').includes(needle))
      return true;
  }
  return false;
}
