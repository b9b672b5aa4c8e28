/**
 * What the test file reader (test-file.ts) and its parts share: a problem at a path of the file,
 * and the checks of a value's shape that throw one.
 */

export type Path = readonly (string | number)[];

/** Thrown inside the reader: one problem stops the file (the next run shows the next). */
export class Problem extends Error {
  constructor(
    readonly path: Path,
    message: string,
    /** The problem is the key `path` ends with (an unknown one), not its value. */
    readonly atKey = false,
  ) {
    super(message);
  }
}

export function object(value: unknown, path: Path): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Problem(path, `${name(path)} must be a mapping`);
  return value as Record<string, unknown>;
}

export function list(value: unknown, path: Path): unknown[] {
  if (!Array.isArray(value)) throw new Problem(path, `${name(path)} must be a list`);
  return value;
}

export function text_(value: unknown, path: Path): string {
  if (typeof value !== 'string' || value === '') throw new Problem(path, `${name(path)} must be a non-empty string`);
  return value;
}

/** Refuses a key the mapping at `path` does not take (a typo would otherwise be ignored). */
export function known(value: Record<string, unknown>, path: Path, keys: readonly string[]): void {
  for (const k of Object.keys(value))
    if (!keys.includes(k)) throw new Problem([...path, k], `unknown key "${k}" (expected ${keys.join(', ')})`, true);
}

export function name(path: Path): string {
  const last = path.at(-1);
  return last === undefined ? 'a test file' : typeof last === 'number' ? `item ${last + 1}` : `"${last}"`;
}
