/*
 * Reads who the session is once per page load and gives it to every view (useSession): the
 * header, the admin frame and the pages that show what the session may do. The sign-in page has
 * no session to read; signing in loads the console anew, which reads it then.
 */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso/router';
import { calls } from '../../shared/api/calls/index.js';
import { useApi } from '../hooks/use-api.js';
import { SessionContext } from '../hooks/use-session.js';

/** Props of SessionProvider. */
type Props = {
  /** The views that read the session. */
  readonly children: ComponentChildren;
};

/** Provides the session's read to `children`. */
export function SessionProvider({ children }: Props) {
  const { path } = useLocation();
  const session = useApi(path === '/sign-in' ? null : calls.auth.whoami());
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}
