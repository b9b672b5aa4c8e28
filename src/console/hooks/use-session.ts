/* Who the session is (GET /auth/whoami), read once for the app by SessionProvider and given to every view. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Permission } from '../../shared/api/keys.js';
import type { WhoAmI } from '../../shared/api/meta.js';
import type { ApiRead } from './use-api.js';

/** The session's read; null outside a SessionProvider. */
export const SessionContext = createContext<ApiRead<WhoAmI> | null>(null);

/** The session: its identity and permissions once read, the read's error, and `reload`. Throws outside a SessionProvider. */
export function useSession(): ApiRead<WhoAmI> {
  const session = useContext(SessionContext);
  if (session === null) throw new Error('useSession is used outside a SessionProvider');
  return session;
}

/** Whether the session holds `permission` (false until it is read: the daemon decides anyway). */
export function useMay(permission: Permission): boolean {
  return useSession().data?.permissions.includes(permission) ?? false;
}
