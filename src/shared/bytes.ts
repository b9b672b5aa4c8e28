/**
 * Sizes in bytes as people write and read them: `512KiB`, `16MiB`, `1.5 MiB`, or plain bytes.
 * One parser for every option and field that takes a size.
 */

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/**
 * `text` as a whole number of bytes: a number (fractions allowed with a unit) and an optional
 * unit, KiB, MiB or GiB (also KB, MB, GB, K, M, G: all powers of 1024), any case; null when it
 * is not one. Pure.
 */
export function parseBytes(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  if (!m) return null;
  const unit = m[2]!.toLowerCase();
  const scale = unit === '' ? 1 : Object.hasOwn(UNITS, unit) ? UNITS[unit]! : undefined;
  if (scale === undefined || (scale === 1 && m[1]!.includes('.'))) return null;
  return Math.floor(Number(m[1]) * scale);
}

/** A size in bytes as people read it: `512 B`, `64 KiB`, `1.5 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes / 1024;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${units[u]}`;
}
