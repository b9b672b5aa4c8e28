/**
 * Durations for timers and timeouts, in two spellings:
 *
 * - short: a non-negative integer or decimal number and exactly one unit, no spaces:
 *   `500ms`, `30s`, `5m`, `2h`, `1d`, `1.5h` (units are lower case: `m` is minutes);
 * - ISO 8601: `PT30M`, `P1D`, `P1DT2H30M`, `PT0.5S`, `P2W` (designators in any case; a decimal
 *   fraction, with `.` or `,`, only on the last component). Years and months are rejected
 *   because their length varies; a day is always 24 hours and a week 7 days.
 *
 * Results are whole milliseconds (rounded to the nearest).
 */

/** A text that is not a duration we accept. Match on `code`, never on the message. */
export class DurationError extends Error {
  readonly code = 'INVALID_DURATION' as const;

  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

const SHORT = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$/;
const SHORT_UNITS: Readonly<Record<string, number>> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY };

const N = '([0-9]+(?:[.,][0-9]+)?)';
const ISO = new RegExp(`^P(?:${N}Y)?(?:${N}M)?(?:${N}W)?(?:${N}D)?(T(?:${N}H)?(?:${N}M)?(?:${N}S)?)?$`, 'i');

function finish(ms: number, text: string): number {
  const rounded = Math.round(ms);
  if (!Number.isSafeInteger(rounded)) throw new DurationError(`duration ${JSON.stringify(text)} is too large`);
  return rounded;
}

/**
 * The length of `text` in milliseconds. Pure.
 * @throws DurationError for anything but the two forms above: empty text, spaces, negative
 * numbers, unknown units, years or months, `P`/`PT` without components, a fraction on a
 * component that is not the last, or a value too large to be a safe integer.
 */
export function parseDuration(text: string): number {
  if (typeof text !== 'string' || text === '') throw new DurationError('a duration must be a non-empty string');
  const quoted = JSON.stringify(text);
  const short = SHORT.exec(text);
  if (short) return finish(Number(short[1]) * SHORT_UNITS[short[2]!]!, text);

  const iso = ISO.exec(text);
  if (!iso) {
    throw new DurationError(`${quoted} is not a duration: use e.g. 500ms, 30s, 5m, 2h, 1d or ISO 8601 like PT30M`);
  }
  const [, years, months, weeks, days, time, hours, minutes, seconds] = iso;
  if (years !== undefined || months !== undefined) {
    throw new DurationError(`${quoted}: years and months have no fixed length; use weeks (W) or days (D)`);
  }
  const parts: [string | undefined, number][] = [
    [weeks, WEEK],
    [days, DAY],
    [hours, HOUR],
    [minutes, MINUTE],
    [seconds, SECOND],
  ];
  const present = parts.filter(([v]) => v !== undefined) as [string, number][];
  if (present.length === 0) throw new DurationError(`${quoted} has no components`);
  if (time !== undefined && hours === undefined && minutes === undefined && seconds === undefined) {
    throw new DurationError(`${quoted}: T must be followed by hours, minutes or seconds`);
  }
  let ms = 0;
  present.forEach(([v, unit], k) => {
    if (/[.,]/.test(v) && k !== present.length - 1) {
      throw new DurationError(`${quoted}: only the last component may have a fraction`);
    }
    ms += Number(v.replace(',', '.')) * unit;
  });
  return finish(ms, text);
}

/** Whether parseDuration accepts `text`. Pure; never throws. */
export function isDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

const FORMAT_UNITS: readonly [string, number][] = [
  ['d', DAY],
  ['h', HOUR],
  ['m', MINUTE],
  ['s', SECOND],
  ['ms', 1],
];

/**
 * A human form of `ms` milliseconds: at most two units, largest first, the two largest that are
 * not zero, the rest dropped (not rounded): `250ms`, `45s`, `1h 30m`, `2d 3h`, `1h 5s`.
 * Fractions of a millisecond are rounded; zero is `0s`; a negative value gets a leading `-`.
 * Pure. @throws DurationError when `ms` is NaN or infinite.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new DurationError(`cannot format ${String(ms)} milliseconds`);
  let rest = Math.round(Math.abs(ms));
  const sign = ms < 0 && rest > 0 ? '-' : '';
  const parts: string[] = [];
  for (const [unit, size] of FORMAT_UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 && parts.length < 2) parts.push(`${count}${unit}`);
  }
  return parts.length === 0 ? '0s' : sign + parts.join(' ');
}
