import type { Key } from 'ink';

/**
 * Where a scrolled text's first shown line goes on a key (pure): ↑/k ↓/j a line, PgUp/PgDn a
 * page of `page` lines, g the top, G the bottom; kept within 0..`max`. Null: not a scroll key.
 */
export function scrollTo(top: number, max: number, page: number, input: string, key: Key): number | null {
  const within = (n: number) => Math.max(0, Math.min(max, n));
  if (key.upArrow || input === 'k') return within(top - 1);
  if (key.downArrow || input === 'j') return within(top + 1);
  if (key.pageUp) return within(top - page);
  if (key.pageDown) return within(top + page);
  if (input === 'g') return 0;
  if (input === 'G') return max;
  return null;
}
