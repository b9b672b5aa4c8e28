/**
 * Memoizes a pure function of one string, keeping at most `max` results (the oldest goes
 * first). For parsing that flows repeat on every execution (conditions, templates): the same
 * few texts, parsed once. The results are shared, so they must be treated as immutable.
 */
export function memoByText<T>(fn: (text: string) => T, max = 2_000): (text: string) => T {
  const cache = new Map<string, T>();
  return (text) => {
    const hit = cache.get(text);
    if (hit !== undefined) return hit;
    const value = fn(text);
    if (cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(text, value);
    return value;
  };
}
