import { InvalidArgumentError, Option } from 'commander';

/**
 * A commander option parser for a whole number from `min` to `max` (`--limit`, `--count`): a
 * value out of range or not a whole number is a usage error naming the range.
 */
export function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

/** A commander option parser for a whole number from 1, with no upper bound (`--concurrency`, `--limit`). */
export function wholeFromOne(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number from 1');
  return n;
}

/** The `--org` option of a command whose system keys name one organization (default: default). */
export function orgOption(): Option {
  return new Option('--org <organization>', 'system keys: the organization (default: default)');
}

/** The request's `organization` from `--org`: absent when the option is not given. */
export function orgOf(opts: { readonly org?: string }): { organization?: string } {
  return opts.org === undefined ? {} : { organization: opts.org };
}

/**
 * `fields` without those whose value is undefined, in their order: a request made of optional
 * flags carries a field only where its flag was given. Pure.
 */
export function givenOnly<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const given: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) given[key] = value;
  return given as { [K in keyof T]?: Exclude<T[K], undefined> };
}
