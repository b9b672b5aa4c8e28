/* The console's header: its name, the pages, who is signed in, and Sign out. */
import { useLocation } from 'preact-iso/router';
import { useState } from 'preact/hooks';
import { calls } from '../../shared/api/calls/index.js';
import type { WhoAmI } from '../../shared/api/meta.js';
import { leave, send } from '../api/http.js';
import { useSession } from '../hooks/use-session.js';
import { ADMIN_BASE, showsAdmin } from '../model/admin-pages.js';

/** The pages of the navigation, by the path each starts with. */
const PAGES = [
  { href: '/executions', label: 'Executions' },
  { href: '/tasks', label: 'Tasks' },
  { href: '/failures', label: 'Failures' },
  { href: '/flows', label: 'Flows' },
  { href: '/triggers', label: 'Triggers' },
  // Only for sessions that may create them (WORKFLOW_PUBLISH).
  { href: '/bulk', label: 'Bulk operations', permission: 'WORKFLOW_PUBLISH' },
] as const;

/** Who the session is, in a few words. */
function whoWords(w: WhoAmI): string {
  const who = w.keyId !== undefined ? `key ${w.keyId}` : (w.subject ?? 'signed in');
  return `${who} · ${w.organization ?? 'system'}`;
}

/** The header. */
export function Header() {
  const { path } = useLocation();
  const whoami = useSession();
  const [signingOut, setSigningOut] = useState(false);
  const signOut = async () => {
    setSigningOut(true);
    try {
      const answer = await send(calls.auth.signOut(), { keep401: true });
      leave(answer.endSessionUrl ?? '/sign-in');
    } catch {
      // Signed out already (401), or the daemon is away: the sign-in page says which.
      leave('/sign-in');
    }
  };
  return (
    <header class="app-header">
      <a class="brand" href="/executions">
        wfx <span>console</span>
      </a>
      <nav aria-label="Main">
        <ul>
          {[
            ...PAGES.filter((p) => !('permission' in p) || whoami.data?.permissions.includes(p.permission)),
            ...(showsAdmin(whoami.data?.permissions ?? []) ? [{ href: ADMIN_BASE, label: 'Admin' }] : []),
          ].map((p) => (
            <li key={p.href}>
              <a href={p.href} aria-current={path === p.href || path.startsWith(`${p.href}/`) ? 'page' : undefined}>
                {p.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="session">
        {whoami.data && <span class="muted who">{whoWords(whoami.data)}</span>}
        <button type="button" onClick={() => void signOut()} disabled={signingOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}
