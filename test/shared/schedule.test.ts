import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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

t.test("Vixie's day rule: a day field starting with * makes both day fields count", async (t) => {
  const days = (expression: string) =>
    new Schedule(expression).nextTimes(new Date('2026-11-30T12:00:00Z'), 4).map((d) => d.toISOString().slice(0, 10));
  t.same(
    days('0 0 1-31 * 1'),
    ['2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04'],
    '1-31 is restricted: every day',
  );
  t.same(days('0 0 */2 * 1'), ['2026-12-07', '2026-12-21', '2027-01-11', '2027-01-25'], '*/2 counts as *: odd Mondays');
  t.same(days('0 0 13 * */2'), ['2026-12-13', '2027-02-13', '2027-03-13', '2027-04-13'], '13ths on Sun/Tue/Thu/Sat');
  t.same(days('0 0 13 * 1,*/3'), days('0 0 13 * 0,1,3,6'), 'a list starting with a value is restricted: either');
  t.same(days('0 0 * * 7'), days('0 0 * * 0'), '7 is Sunday');
  t.same(days('0 8 * DEC Sun'), days('0 8 * 12 0'), 'names in any case');
  t.same(
    days('0 0 29 2 1'),
    ['2027-02-01', '2027-02-08', '2027-02-15', '2027-02-22'],
    'either: Mondays of February too',
  );
  t.same(
    new Schedule('0 0 29 2 */1').nextTimes(new Date('2026-01-01T00:00:00Z'), 2).map((d) => d.toISOString()),
    ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z'],
    'both: only leap days',
  );
});

t.test('a schedule that can never fire, and each malformed field, is refused with the field named', async (t) => {
  for (const never of ['0 0 30 2 *', '0 0 31 4 *', '0 0 30 2 */1', '0 0 31 2,4,6,9,11 *'])
    t.throws(() => new Schedule(never), { code: 'INVALID_SCHEDULE', message: /never fires/ }, never);
  t.doesNotThrow(() => new Schedule('0 0 31 2 1'), 'either: Mondays in February');
  const bad: [string, RegExp][] = [
    ['60 * * * *', /bad minute field "60": 60 is outside 0-59/],
    ['* 24 * * *', /bad hour field/],
    ['* * 0 * *', /bad day-of-month field/],
    ['* * * 13 *', /bad month field/],
    ['* * * * 8', /bad day-of-week field/],
    ['* * * * 1/mon', /bad day-of-week field/],
    ['*/0 * * * *', /a step is 1 or more/],
    ['5-1 * * * *', /runs backwards/],
    ['1,,2 * * * *', /an empty list item/],
    ['** * * * *', /bad minute field/],
    ['* * * foo *', /"foo" is not a number or a name/],
    ['* * * * ?', /bad day-of-week field/],
  ];
  for (const [expression, message] of bad)
    t.throws(() => new Schedule(expression), { code: 'INVALID_SCHEDULE', message }, expression);
});

t.test('published vectors: every field form, as Vixie cron computes it', async (t) => {
  const file = fileURLToPath(new URL('../../../test/fixtures/cron-vectors.json', import.meta.url));
  const { vectors } = JSON.parse(readFileSync(file, 'utf8')) as {
    vectors: { expression: string; from: string; next: string[] }[];
  };
  t.ok(vectors.length > 100, 'the vectors are there');
  for (const v of vectors) {
    const got = new Schedule(v.expression).nextTimes(new Date(v.from), v.next.length);
    t.same(
      got.map((d) => d.toISOString().replace('.000Z', 'Z')),
      v.next,
      `${v.expression} from ${v.from}`,
    );
  }
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
