/* A table of rows the page lists: its caption for screen readers, its column headings, its rows; wider than the page, it scrolls in its own box. */
import type { ComponentChildren } from 'preact';

/** A column's heading: its words, or words only a screen reader says (a column of buttons). */
export type Column = string | { readonly hidden: string };

/** Props of DataTable. */
type Props = {
  /** The table's class (how styles.css lays it out). */
  readonly class?: string;
  /** What the table lists, said to screen readers. */
  readonly caption: string;
  /** The headings, in order; false leaves a column out (one some sessions do not see). */
  readonly columns: readonly (Column | false)[];
  /** The rows. */
  readonly children: ComponentChildren;
};

/** The table (see the top of this file). */
export function DataTable({ class: cls, caption, columns, children }: Props) {
  return (
    <div class="table-scroll">
      <table class={cls}>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c, i) =>
              c === false ? null : typeof c === 'string' ? (
                <th key={i} scope="col">
                  {c}
                </th>
              ) : (
                <th key={i} scope="col">
                  <span class="visually-hidden">{c.hidden}</span>
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
