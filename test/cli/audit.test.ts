import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import type { AuditEntry } from '../../src/shared/api/index.js';
import { served } from '../helpers/served.js';

t.test('wfx audit: the table and --json, filtered, scoped to the organization', async (t) => {
  const { h, wfx, wfxAs } = await served(t);
  const wfxOther = await wfxAs('other');
  await h.store.commit({
    type: 'memory.written',
    organization: 'acme',
    namespace: 'chat',
    key: 'customer-1',
    entry: { value: 1, updatedAt: h.clock.now().toISOString(), expiresAt: null },
  });
  t.equal((await wfx(['memory', 'delete', 'chat', 'customer-1'])).code, 0);

  const table = await wfx(['audit']);
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /^AT\s+ORGANIZATION\s+ACTOR\s+ACTION\s+STATUS\s+TARGETS\s+FROM\n/);
  t.match(
    table.stdout,
    /acme\s+key:\w+\s+DELETE \/admin\/memory\/:namespace\/:key\s+200\s+namespace=chat key=customer-1\s+127\.0\.0\.1/,
  );

  const json = await wfx(['audit', '--json', '--action', 'DELETE', '--target', 'customer-1']);
  t.equal(json.code, 0, json.stderr);
  const items = JSON.parse(json.stdout) as AuditEntry[];
  t.equal(items.length, 1);
  t.match(items[0], { organization: 'acme', action: 'DELETE /admin/memory/:namespace/:key', userAgent: String });
  t.same(JSON.parse((await wfx(['audit', '--json', '--action', 'POST'])).stdout), []);
  t.same(JSON.parse((await wfxOther(['audit', '--json'])).stdout), [], "another organization's admin reads none");
});
