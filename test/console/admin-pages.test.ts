import t from 'tap';
import { ADMIN_BASE, ADMIN_PAGES, adminPagesFor, showsAdmin } from '../../src/console/model/admin-pages.js';
import { APP_PATHS } from '../../src/console/app.js';
import { ROLE_PERMISSIONS } from '../../src/shared/api/keys.js';

t.test('each role is offered the admin pages its permissions open, no more', async (t) => {
  const labels = (role: keyof typeof ROLE_PERMISSIONS) => adminPagesFor(ROLE_PERMISSIONS[role]).map((p) => p.label);
  t.same(
    labels('admin'),
    ADMIN_PAGES.map((p) => p.label),
    'an admin: every page',
  );
  for (const role of ['viewer', 'operator', 'developer'] as const)
    t.same(labels(role), ['Workers and jobs'], `${role}: the workers page only (WORKFLOW_READ, as GET /jobs)`);
  t.same(labels('worker'), [], 'a worker key: none');
  t.same(
    (Object.keys(ROLE_PERMISSIONS) as Array<keyof typeof ROLE_PERMISSIONS>).filter((r) =>
      showsAdmin(ROLE_PERMISSIONS[r]),
    ),
    ['admin'],
    'the Admin entry: administrators only',
  );
});

t.test('the admin pages are console paths, never the API under /admin', async (t) => {
  t.equal(ADMIN_BASE, '/manage');
  for (const p of ADMIN_PAGES) {
    t.ok(APP_PATHS.test(p.href), `${p.href} is routed by the console`);
    t.notOk(p.href.startsWith('/admin/'), `${p.href} is not an API path`);
  }
});
