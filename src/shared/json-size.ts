/**
 * How big a JSON value is when written out, without writing it: the measure the engine's size
 * limits (variables, logs, what one step writes) are checked in, before the memory or the disk
 * is spent. JSON.stringify would build the very string a limit is there to refuse.
 */

/**
 * The length of `JSON.stringify(value)` in characters, estimated: exact but for escapes (a
 * string counts its length and quotes), `undefined` and functions (nothing); numbers count
 * their decimal form, objects and arrays their punctuation and keys. Pure and
 * iterative (any depth). Stops counting once past `cap` and returns the count so far, which is
 * then more than `cap`: a caller that only compares with a limit pays for no more than it.
 */
export function jsonSize(value: unknown, cap = Number.POSITIVE_INFINITY): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case 'string':
        size += v.length + 2;
        break;
      case 'number':
        size += numberSize(v);
        break;
      case 'boolean':
        size += v ? 4 : 5;
        break;
      case 'bigint':
        size += v.toString().length;
        break;
      case 'object':
        if (v === null) {
          size += 4;
        } else if (Array.isArray(v)) {
          size += v.length === 0 ? 2 : 1 + v.length; // brackets and commas
          for (let i = 0; i < v.length; i++) stack.push(v[i]);
        } else {
          let entries = 0;
          for (const key in v) {
            if (!Object.hasOwn(v, key)) continue;
            const child = (v as Record<string, unknown>)[key];
            if (child === undefined || typeof child === 'function') continue;
            size += key.length + 3; // quotes and colon
            entries++;
            stack.push(child);
          }
          size += entries === 0 ? 2 : 1 + entries; // braces and commas
        }
        break;
      default:
        break;
    }
    if (size > cap) return size;
  }
  return size;
}

/** The length of a number's JSON form; small integers without making a string. */
export function numberSize(n: number): number {
  if (Number.isInteger(n) && n >= 0 && n < 1e9) {
    let digits = 1;
    for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    return digits;
  }
  return Number.isFinite(n) ? String(n).length : 4;
}
