/* A list read from the API as a table: ReadState until it has rows, then a DataTable of them. */
import type { ComponentChildren } from 'preact';
import type { ApiRead } from '../hooks/use-api.js';
import { DataTable, type Column } from './data-table.js';
import { ReadState } from './read-state.js';

/** Props of ReadTable. */
type Props<T> = {
  /** The read the items come from: its error, or no answer yet. */
  readonly read: Pick<ApiRead<unknown>, 'data' | 'error'>;
  /** The items to list, in order. */
  readonly items: readonly T[];
  /** What is read, as the error names it ("The flows"). */
  readonly what: string;
  /** Said once read when there are no items. */
  readonly empty?: string;
  /** The table's class, caption and columns (DataTable's). */
  readonly class?: string;
  readonly caption: string;
  readonly columns: readonly (Column | false)[];
  /** The row of an item. */
  readonly row: (item: T) => ComponentChildren;
};

/** The read's state, then its items' rows in a table. */
export function ReadTable<T>({ read, items, what, empty, row, ...table }: Props<T>) {
  return (
    <>
      <ReadState read={read} what={what} empty={items.length === 0 && empty} />
      {items.length > 0 && <DataTable {...table}>{items.map(row)}</DataTable>}
    </>
  );
}
