import type { Key } from 'ink';

/**
 * Where a list's cursor goes on ↑/k or ↓/j, kept within `count` rows (a live list may have
 * shrunk under it); any other key leaves it where it is.
 */
export function moveCursor(selected: number, count: number, input: string, key: Key): number {
  if (key.upArrow || input === 'k') return Math.max(0, Math.min(selected, count - 1) - 1);
  if (key.downArrow || input === 'j') return Math.min(Math.max(0, count - 1), selected + 1);
  return selected;
}

/** The row the cursor stands on in a list of `count` rows (0 when it is empty). */
export function cursorAt(selected: number, count: number): number {
  return Math.min(selected, Math.max(0, count - 1));
}
