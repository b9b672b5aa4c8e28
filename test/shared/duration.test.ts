import t from 'tap';
import { DurationError, formatDuration, isDuration, parseDuration } from '../../src/shared/duration.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

t.test('short forms: a number and one unit', async (t) => {
  const rows: [string, number][] = [
    ['500ms', 500],
    ['0ms', 0],
    ['0s', 0],
    ['1ms', 1],
    ['30s', 30 * S],
    ['5m', 5 * M],
    ['2h', 2 * H],
    ['1d', D],
    ['1.5h', 1.5 * H],
    ['0.5s', 500],
    ['1.1s', 1100],
    ['2.25m', 135 * S],
    ['0.5ms', 1],
    ['0.4ms', 0],
    ['007s', 7 * S],
    ['365d', 365 * D],
  ];
  for (const [text, ms] of rows) {
    t.equal(parseDuration(text), ms, `${text} = ${ms}ms`);
    t.equal(isDuration(text), true, `${text} is a duration`);
  }
});

t.test('ISO 8601 durations', async (t) => {
  const rows: [string, number][] = [
    ['PT30M', 30 * M],
    ['P1D', D],
    ['P1DT2H30M', D + 2 * H + 30 * M],
    ['PT0.5S', 500],
    ['PT0,5S', 500],
    ['P2W', 14 * D],
    ['P1W2D', 9 * D],
    ['PT1H', H],
    ['PT1H30M15S', H + 30 * M + 15 * S],
    ['PT90M', 90 * M],
    ['PT1.5H', 1.5 * H],
    ['P0D', 0],
    ['PT0S', 0],
    ['P1DT0.25H', D + 15 * M],
    ['pt5m', 5 * M],
    ['P1dT1h', D + H],
    ['PT0.001S', 1],
  ];
  for (const [text, ms] of rows) {
    t.equal(parseDuration(text), ms, `${text} = ${ms}ms`);
    t.equal(isDuration(text), true, `${text} is a duration`);
  }
});

t.test('rejected forms throw INVALID_DURATION', async (t) => {
  const bad = [
    '',
    ' ',
    '-5s',
    '-PT5M',
    '5',
    '5 s',
    ' 5s',
    '5s ',
    '5S',
    '5M',
    '5H',
    '5sec',
    '5min',
    '1w',
    '1y',
    's',
    '.5s',
    '5.s',
    '1e3ms',
    '1h30m',
    '1h 30m',
    '+5s',
    '0x10s',
    'Infinity',
    'NaN',
    'P',
    'PT',
    'P1DT',
    'P1Y',
    'P1M',
    'P1Y2D',
    'P2MT1H',
    'PT1H2D',
    'P1.5DT2H',
    'PT1.5H30M',
    'PT5M4H',
    'T5M',
    'PT-5M',
    'PT5',
    'PT5M ',
    'P 1D',
    'PT1,5,5S',
    'P99999999999999999999D',
    '99999999999999999999d',
  ];
  for (const text of bad) {
    t.throws(() => parseDuration(text), { code: 'INVALID_DURATION' }, JSON.stringify(text));
    t.equal(isDuration(text), false, `${JSON.stringify(text)} is not a duration`);
  }
  t.ok(new DurationError('x') instanceof Error);
  t.throws(() => parseDuration(undefined as unknown as string), { code: 'INVALID_DURATION' }, 'not a string');
  t.equal(isDuration(42 as unknown as string), false);
});

t.test('formatDuration: at most two units, largest first', async (t) => {
  const rows: [number, string][] = [
    [0, '0s'],
    [250, '250ms'],
    [1, '1ms'],
    [999, '999ms'],
    [1000, '1s'],
    [1500, '1s 500ms'],
    [45 * S, '45s'],
    [90 * S, '1m 30s'],
    [5 * M, '5m'],
    [H + 30 * M, '1h 30m'],
    [H + 30 * M + 59 * S + 999, '1h 30m'],
    [H + 5 * S, '1h 5s'],
    [2 * D + 3 * H, '2d 3h'],
    [2 * D + 3 * H + 4 * M, '2d 3h'],
    [D, '1d'],
    [14 * D, '14d'],
    [400 * D + 1, '400d 1ms'],
    [0.4, '0s'],
    [1499.6, '1s 500ms'],
    [-90 * S, '-1m 30s'],
    [-0.2, '0s'],
  ];
  for (const [ms, text] of rows) t.equal(formatDuration(ms), text, `${ms}ms → ${text}`);
  for (const bad of [Number.NaN, Infinity, -Infinity]) {
    t.throws(() => formatDuration(bad), { code: 'INVALID_DURATION' }, String(bad));
  }
});

t.test('formatted single-unit values parse back', async (t) => {
  for (const ms of [0, 250, 45 * S, 5 * M, 2 * H, 3 * D]) {
    t.equal(parseDuration(formatDuration(ms)), ms, formatDuration(ms));
  }
});
