/* The admin section's pages, and which of them a session may open: the permission each needs is its API's. */
import type { Permission } from '../../shared/api/keys.js';

/** One page of the admin section. */
export interface AdminPage {
  readonly href: string;
  readonly label: string;
  /** The permission its API routes need (docs/api.md): the daemon refuses them without it. */
  readonly needs: Permission;
}

/** Where the admin section lives: `/admin/...` is the API's (GET /admin/memory, /admin/sessions). */
export const ADMIN_BASE = '/manage';

/** The admin pages, in the order of the section's navigation. */
export const ADMIN_PAGES: readonly AdminPage[] = [
  { href: `${ADMIN_BASE}/workers`, label: 'Workers and jobs', needs: 'WORKFLOW_READ' },
  { href: `${ADMIN_BASE}/providers`, label: 'Model providers', needs: 'ADMIN' },
  { href: `${ADMIN_BASE}/memory`, label: 'Memory', needs: 'ADMIN' },
  { href: `${ADMIN_BASE}/environment`, label: 'Environment values', needs: 'ADMIN' },
  { href: `${ADMIN_BASE}/secrets`, label: 'Flow secrets', needs: 'ADMIN' },
  { href: `${ADMIN_BASE}/keys`, label: 'API keys', needs: 'ADMIN' },
  { href: `${ADMIN_BASE}/sessions`, label: 'Console sessions', needs: 'ADMIN' },
];

/** The admin pages a session holding `permissions` may open. Pure. */
export function adminPagesFor(permissions: readonly string[]): AdminPage[] {
  return ADMIN_PAGES.filter((p) => permissions.includes(p.needs));
}

/**
 * Whether the header shows the Admin entry: for administrators (ADMIN). The workers page alone
 * needs only WORKFLOW_READ; a viewer may open it by its address, but is shown no admin section.
 * Pure.
 */
export function showsAdmin(permissions: readonly string[]): boolean {
  return permissions.includes('ADMIN');
}
