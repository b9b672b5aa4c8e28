/* What a TUI list table is given besides its items. */

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
