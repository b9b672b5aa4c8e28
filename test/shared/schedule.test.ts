import t from 'tap';
import { Schedule } from '../../src/shared/schedule.js';
import { wfxIn } from '../helpers/cli.js';

const iso = (d: Date[]) => d.map((x) => x.toISOString());

t.test('five fields, Vixie day-of-month OR day-of-week', async (t) => {
  const s = new Schedule('0 0 13 * 5', 'UTC');
  t.same(
    iso(s.nextTimes(new Date('2026-12-05T00:00:00Z'), 4)),
    ['2026-12-11T00:00:00.000Z', '2026-12-13T00:00:00.000Z', '2026-12-18T00:00:00.000Z', '2026-12-25T00:00:00.000Z'],
    'Fridays and the 13th (a Sunday)',
  );
  t.same(
    iso(new Schedule('*/15 9-17 * * 1-5', 'UTC').nextTimes(new Date('2026-11-21T10:00:00Z'), 2)),
    ['2026-11-23T09:00:00.000Z', '2026-11-23T09:15:00.000Z'],
    'a Saturday: next on Monday',
  );
  for (const bad of ['* * * *', '0 * * * * *', '61 * * * *', 'nope'])
    t.throws(() => new Schedule(bad), { code: 'INVALID_SCHEDULE' }, bad);
  t.throws(() => new Schedule('* * * * *', 'Mars/Base'), { code: 'INVALID_SCHEDULE' });
});

t.test('DST: a skipped local time does not fire; a repeated one fires once', async (t) => {
  const berlin = new Schedule('30 2 * * *', 'Europe/Berlin');
  // 2027-03-28: 02:00 -> 03:00 in Berlin, so 02:30 does not exist that day.
  t.same(iso(berlin.nextTimes(new Date('2027-03-27T00:00:00Z'), 3)), [
    '2027-03-27T01:30:00.000Z',
    '2027-03-29T00:30:00.000Z',
    '2027-03-30T00:30:00.000Z',
  ]);
  // 2027-10-31: 03:00 -> 02:00, so 02:30 happens twice; it fires once.
  t.same(iso(berlin.nextTimes(new Date('2027-10-30T00:00:00Z'), 3)), [
    '2027-10-30T00:30:00.000Z',
    '2027-10-31T00:30:00.000Z',
    '2027-11-01T01:30:00.000Z',
  ]);
  t.same(
    iso(new Schedule('0 3 * * *', 'Europe/Berlin').nextTimes(new Date('2027-03-27T12:00:00Z'), 1)),
    ['2027-03-28T01:00:00.000Z'],
    '03:00 right after the gap does fire',
  );
});

t.test('wfx cron next: one ISO time a line, same code as the scheduler', async (t) => {
  const res = await wfxIn([
    'cron',
    'next',
    '30 2 * * *',
    '--tz',
    'Europe/Berlin',
    '--from',
    '2027-03-27T00:00:00Z',
    '--count',
    '3',
  ]);
  t.equal(res.code, 0);
  t.equal(res.stdout, '2027-03-27T01:30:00.000Z\n2027-03-29T00:30:00.000Z\n2027-03-30T00:30:00.000Z\n');
  const bad = await wfxIn(['cron', 'next', '* * *']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^USAGE_ERROR: a schedule has five fields/);
  t.same(
    JSON.parse(
      (await wfxIn(['cron', 'next', '0 0 1 1 *', '--from', '2026-01-01T00:00:00Z', '--count', '1', '--json'])).stdout,
    ),
    ['2027-01-01T00:00:00.000Z'],
  );
});
