/* A JSON value shown as indented text. */
import { jsonText } from '../model/format.js';

/** Props of JsonBlock. */
type Props = {
  readonly value: unknown;
  /** What to say when there is no value. */
  readonly empty?: string;
  /** Accessible name of the scrollable block. */
  readonly label: string;
};

/** `value` as indented JSON, in a block that scrolls (and can be reached by keyboard to scroll it). */
export function JsonBlock({ value, empty = 'None.', label }: Props) {
  if (value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0))
    return <p class="muted">{empty}</p>;
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      {jsonText(value)}
    </pre>
  );
}
