/*
 * The frame of every admin page: the section's navigation (the pages the session may open), and
 * in place of the page a plain "not allowed" when the session lacks the permission its API needs
 * (the daemon would refuse its calls anyway: the console only spares the attempt).
 */
import type { ComponentChildren, JSX } from 'preact';
import { useLocation } from 'preact-iso/router';
import type { Permission } from '../../shared/api/keys.js';
import type { WhoAmI } from '../../shared/api/meta.js';
import { useSession } from '../hooks/use-session.js';
import { useTitle } from '../hooks/use-title.js';
import { adminPagesFor } from '../model/admin-pages.js';

/** Props of AdminShell. */
type Props = {
  /** The page's heading and title. */
  readonly title: string;
  /** The permission the page's API needs. */
  readonly needs: Permission;
  /** The page, given who the session is (rendered only when it holds `needs`). */
  readonly children: (me: WhoAmI) => ComponentChildren;
};

/** The route component of an admin page: `page` in AdminShell, given who the session is. */
export function adminPage(
  title: string,
  needs: Permission,
  page: (me: WhoAmI) => ComponentChildren,
): () => JSX.Element {
  return () => (
    <AdminShell title={title} needs={needs}>
      {page}
    </AdminShell>
  );
}

/** An admin page: its heading, the section's navigation, and the page or "not allowed". */
export function AdminShell({ title, needs, children }: Props) {
  const me = useSession();
  const { path } = useLocation();
  const allowed = me.data?.permissions.includes(needs) ?? false;
  useTitle(me.data && !allowed ? 'Not allowed' : title);
  if (me.error) return <p role="alert" class="error-text">{`Who you are cannot be read: ${me.error.message}`}</p>;
  if (!me.data) return <p class="muted">Loading…</p>;
  if (!allowed)
    return (
      <>
        <h1>Not allowed</h1>
        <p>
          {`This page needs the permission ${needs}, which your session does not have. `}
          <a href="/executions">See the executions</a>.
        </p>
      </>
    );
  const pages = adminPagesFor(me.data.permissions);
  return (
    <>
      <div class="page-head">
        <h1>{title}</h1>
      </div>
      {pages.length > 1 && (
        <nav aria-label="Admin" class="admin-nav">
          <ul>
            {pages.map((p) => (
              <li key={p.href}>
                <a href={p.href} aria-current={path === p.href ? 'page' : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      {children(me.data)}
    </>
  );
}
