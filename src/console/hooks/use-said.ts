/* What an admin page last said of an action it took (for its polite live region), and the way to take one. */
import { useState } from 'preact/hooks';
import { errorMessage } from '../../shared/errors.js';

/** What useSaid gives. */
export interface Said {
  /** The last thing said ('' at first). */
  readonly said: string;
  /** Says `text`. */
  readonly say: (text: string) => void;
  /** Runs `act`; says `done` (null: nothing) when it resolves, `failed: <why>` when it rejects; resolves with whether it did. */
  readonly attempt: (act: () => Promise<unknown>, done: string | null, failed: string) => Promise<boolean>;
}

/** An action's outcome in words, kept for the page's live region. */
export function useSaid(): Said {
  const [said, say] = useState('');
  const attempt = async (act: () => Promise<unknown>, done: string | null, failed: string) => {
    try {
      await act();
      if (done !== null) say(done);
      return true;
    } catch (err) {
      say(`${failed}: ${errorMessage(err)}`);
      return false;
    }
  };
  return { said, say, attempt };
}
