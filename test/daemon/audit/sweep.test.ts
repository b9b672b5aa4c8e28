import '../../setup/fixtures.js';
import { readdir, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { AuditEntry } from '../../../src/shared/api/index.js';
import { moveStateAudit } from '../../../src/daemon/store/audit-sweep.js';
import { FileAuditTrail } from '../../../src/daemon/store/audit-trail.js';
import { History } from '../../../src/daemon/store/history.js';
import { apiHarness } from '../../helpers/api.js';

const DAY = 24 * 60 * 60 * 1000;

t.test('records survive a restart (in their own files), and a sweep removes the days past retention', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'acme');
  const make = async (name: string) => {
    const res = await h.call(admin, { method: 'POST', url: '/admin/api-keys', payload: { name, role: 'viewer' } });
    t.equal(res.statusCode, 201);
  };
  await make('old');
  h.clock.advance(10 * DAY);
  await make('new-1');
  await make('new-2');
  t.same(h.store.state.audit, {}, 'nothing of the trail is held in the state');
  const dir = join(h.dir, 'audit');
  const days = (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
  t.equal(days.length, 2, 'one file a day');
  await h.audit.close();
  // The day of 'old' was last written 10 days ago (its file's time is what retention reads).
  const then = new Date(Date.now() - 10 * DAY);
  await utimes(join(dir, days[0]!), then, then);

  const reopened = new FileAuditTrail(await History.open(dir));
  t.teardown(() => reopened.close());
  const names = async () =>
    (await reopened.page({ limit: 100, organization: 'acme' })).items.map((e) => e.summary?.name);
  t.same(await names(), ['new-2', 'new-1', 'old'], 'every record is read back from its files, newest first');
  t.equal(await reopened.sweep(new Date(Date.now() - 7 * DAY)), 1, 'one day past the retention');
  t.same(await names(), ['new-2', 'new-1']);
  t.equal(await reopened.sweep(new Date(Date.now() - 7 * DAY)), 0, 'today is kept');
});

t.test("an older daemon's records kept in the state move to the trail, and leave the state", async (t) => {
  const h = await apiHarness(t);
  const entry = (n: number): AuditEntry => ({
    id: `01a21000-0000-7000-8000-00000000000${n}`,
    at: new Date(0x01a21000_0000 + n).toISOString(),
    organization: 'acme',
    actor: 'key:k1',
    keyId: 'k1',
    action: 'POST /admin/api-keys',
    status: 201,
    targets: {},
  });
  for (const n of [1, 2, 3]) await h.store.commit({ type: 'audit.recorded', entry: entry(n) });
  t.equal(Object.keys(h.store.state.audit).length, 3);
  t.equal(await moveStateAudit(h.store, h.audit), 3);
  t.same(h.store.state.audit, {}, 'the state holds none');
  t.same(
    (await h.audit.page({ limit: 10, organization: 'acme' })).items.map((e) => e.id),
    [3, 2, 1].map((n) => entry(n).id),
  );
  const restarted = await h.restart();
  t.same(restarted.store.state.audit, {}, 'the removal is journaled');
  t.equal(await moveStateAudit(restarted.store, h.audit), 0);
});
