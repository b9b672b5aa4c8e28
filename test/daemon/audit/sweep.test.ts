import '../../setup/fixtures.js';
import t from 'tap';
import { auditExpired, sweepAudit } from '../../../src/daemon/audit/sweep.js';
import { apiHarness } from '../../helpers/api.js';

const DAY = 24 * 60 * 60 * 1000;

t.test('auditExpired: past the retention, or the oldest beyond the cap', async (t) => {
  const now = new Date('2026-11-21T10:00:00.000Z');
  const at = (days: number) => ({ at: new Date(now.getTime() - days * DAY).toISOString() });
  const audit = { a: at(10), b: at(5), c: at(1), d: at(0) };
  t.same(auditExpired(audit, { retentionMs: 7 * DAY, maxEntries: 100 }, now), ['a']);
  t.same(auditExpired(audit, { retentionMs: 30 * DAY, maxEntries: 2 }, now), ['a', 'b']);
  t.same(auditExpired(audit, { retentionMs: 2 * DAY, maxEntries: 3 }, now), ['a', 'b']);
  t.same(auditExpired(audit, { retentionMs: 30 * DAY, maxEntries: 100 }, now), []);
});

t.test('records survive a restart (journaled), and a sweep removes those past retention for good', async (t) => {
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
  const restarted = await h.restart();
  const names = () => Object.values(restarted.store.state.audit).map((e) => e.summary?.name);
  t.same(names(), ['old', 'new-1', 'new-2'], 'every record is back after a restart, oldest first');
  const swept = await sweepAudit(restarted.store, { retentionMs: 7 * DAY, maxEntries: 100 }, restarted.clock.now());
  t.equal(swept, 1);
  t.same(names(), ['new-1', 'new-2']);
  t.equal(
    await sweepAudit(restarted.store, { retentionMs: 7 * DAY, maxEntries: 1 }, restarted.clock.now()),
    1,
    'the cap',
  );
  const again = await restarted.restart();
  t.same(
    Object.values(again.store.state.audit).map((e) => e.summary?.name),
    ['new-2'],
    'the removal is journaled too',
  );
});
