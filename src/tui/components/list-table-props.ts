/* What a TUI list table is given besides its items. */
import { cursorAt } from '../cursor.js';

/** The cursor, the clock and the space of a list table whose rows say how long ago. */
export interface ListTableProps {
  /** The index of the item under the cursor. */
  readonly selected: number;
  /** What "how long ago" counts from. */
  readonly now: Date;
  /** Lines for the items (the header is extra). */
  readonly rows: number;
  /** Terminal columns: the layout fits them. */
  readonly width: number;
}

/**
 * The props of a list table of `count` items in `rows` lines and `width` columns, ages counted
 * from `now`, its cursor at `selected` kept within the items (cursorAt). Pure.
 */
export function listTable(selected: number, count: number, now: Date, rows: number, width: number): ListTableProps {
  return { selected: cursorAt(selected, count), now, rows, width };
}
