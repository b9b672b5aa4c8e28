import { InvalidArgumentError } from 'commander';

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
