/* What a page shows of a read of the API in place of its data: its error, "Loading…", or that there is nothing. */
import type { ApiRead } from '../hooks/use-api.js';

/** Props of ReadState. */
type Props = {
  /** The read (useApi's, or one a page keeps itself): its error, or no data yet. */
  readonly read: Pick<ApiRead<unknown>, 'data' | 'error'>;
  /** What is read, as the error names it ("The flows"). */
  readonly what: string;
  /** Said once read when there is nothing to show; false or absent: nothing said. */
  readonly empty?: string | false;
};

/** The read's error (an alert), "Loading…" until its first answer, then `empty` or nothing. */
export function ReadState({ read, what, empty }: Props) {
  if (read.error) return <p role="alert" class="error-text">{`${what} cannot be read: ${read.error.message}`}</p>;
  if (read.data === undefined) return <p class="muted">Loading…</p>;
  return empty ? <p class="muted">{empty}</p> : null;
}
