import { IANAZone } from 'luxon';

/** A schedule expression that does not parse, or a zone that does not exist. */
export class ScheduleError extends Error {
  readonly code = 'INVALID_SCHEDULE';
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Names for the values, from `min` on (jan = 1, sun = 0). */
  readonly names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES },
  // 7 is Sunday too, as in every cron since Vixie's.
  { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES },
];

/** The longest day-of-month each month can have (February: in a leap year). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Days searched for the next fire before giving up: 28 years, the calendar's whole cycle of
 * leap days and weekdays (a 29 February that must be a Monday comes at least once in it).
 */
const SEARCH_DAYS = 28 * 366;

/**
 * A parsed five-field cron expression in an IANA zone: minute hour day-of-month month
 * day-of-week, evaluated as Vixie cron (and cronie, and every Linux crontab) does:
 * - a field is `*`, a value, a range `a-b`, any of these with a step `/n` (`a/n` is `a-max/n`),
 *   or a comma list of them; months and days of week may be named (`jan`, `mon-fri`);
 * - when day-of-month and day-of-week are both restricted, a day that matches EITHER fires; when
 *   either starts with `*`, a day must match both. A field starting with `*` counts as
 *   unrestricted even with a step, exactly Vixie's rule: `0 0 1-31 * 1` fires every day, while a
 *   day-of-month of `*` stepped by 2 with day-of-week 1 fires on odd days that are Mondays.
 * Across DST changes a local time that occurs twice fires once, and one that does not occur
 * (skipped at the spring change) does not fire. The scheduler and `wfx cron next` both use this,
 * so they agree.
 */
export class Schedule {
  private readonly minutes: readonly number[];
  private readonly hours: readonly number[];
  private readonly daysOfMonth: ReadonlySet<number>;
  private readonly months: ReadonlySet<number>;
  private readonly daysOfWeek: ReadonlySet<number>;
  /** True when a day must match both day fields (one of them starts with `*`). */
  private readonly bothDays: boolean;

  /** Throws ScheduleError for anything but five valid fields, an unknown zone, or a schedule that never fires. */
  constructor(
    readonly expression: string,
    readonly timezone = 'UTC',
  ) {
    const fields = expression.trim().split(/\s+/);
    if (fields.length !== 5)
      throw new ScheduleError(
        `a schedule has five fields (minute hour day-of-month month day-of-week), "${expression}" has ${fields.length}`,
      );
    if (!IANAZone.isValidZone(timezone))
      throw new ScheduleError(`"${timezone}" is not an IANA time zone (e.g. Europe/Berlin, UTC)`);
    const [minutes, hours, daysOfMonth, months, daysOfWeek] = fields.map((f, i) => fieldValues(f, FIELDS[i]!));
    this.minutes = [...minutes!].sort((a, b) => a - b);
    this.hours = [...hours!].sort((a, b) => a - b);
    this.daysOfMonth = daysOfMonth!;
    this.months = months!;
    if (daysOfWeek!.delete(7)) daysOfWeek!.add(0);
    this.daysOfWeek = daysOfWeek!;
    this.bothDays = fields[2]!.startsWith('*') || fields[4]!.startsWith('*');
    // Either-day matching always finds a weekday in any month; both-day matching needs a real date.
    if (this.bothDays && ![...this.months].some((m) => [...this.daysOfMonth].some((d) => d <= MONTH_DAYS[m - 1]!)))
      throw new ScheduleError(`"${expression}" never fires: no month it allows has the day of month it asks for`);
  }

  /** The first fire time strictly after `from`. */
  next(from: Date): Date {
    const after = from.getTime();
    const zone = IANAZone.create(this.timezone);
    // `from` as wall-clock fields of the zone, read off a UTC date shifted by the zone's offset.
    const local = new Date(after + zone.offset(after) * 60_000);
    const [year, month, date] = [local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()];
    for (let i = 0; i < SEARCH_DAYS; i++) {
      const day = new Date(Date.UTC(year, month, date + i));
      if (!this.firesOn(day)) continue;
      for (const hour of this.hours) {
        // On the first day, wall times before `from`'s cannot be after it: skip them unbuilt.
        if (i === 0 && hour < local.getUTCHours()) continue;
        for (const minute of this.minutes) {
          if (i === 0 && hour === local.getUTCHours() && minute < local.getUTCMinutes()) continue;
          const at = firstInstant(zone, day.getTime() + (hour * 60 + minute) * 60_000);
          if (at !== undefined && at > after) return new Date(at);
        }
      }
    }
    throw new ScheduleError(`"${this.expression}" never fires`);
  }

  /** The next `count` fire times after `from`. */
  nextTimes(from: Date, count: number): Date[] {
    const out: Date[] = [];
    let at = from;
    for (let i = 0; i < count; i++) {
      at = this.next(at);
      out.push(at);
    }
    return out;
  }

  /** `day`: midnight UTC of the calendar date. */
  private firesOn(day: Date): boolean {
    if (!this.months.has(day.getUTCMonth() + 1)) return false;
    const dom = this.daysOfMonth.has(day.getUTCDate());
    const dow = this.daysOfWeek.has(day.getUTCDay());
    return this.bothDays ? dom && dow : dom || dow;
  }
}

/**
 * The first instant whose wall-clock time in `zone` is `wall` (that wall time's fields, as UTC
 * milliseconds): the earlier of two when the clock goes back (so it fires once), none when the
 * time is skipped at the spring change (so it does not fire).
 */
function firstInstant(zone: IANAZone, wall: number): number | undefined {
  const DAY = 86_400_000;
  let first: number | undefined;
  // Any offset the zone has near this wall time is its offset a day before, at, or a day after it.
  for (const offset of new Set([zone.offset(wall - DAY), zone.offset(wall), zone.offset(wall + DAY)])) {
    const at = wall - offset * 60_000;
    if (zone.offset(at) === offset && (first === undefined || at < first)) first = at;
  }
  return first;
}

/** The values one cron field allows; throws ScheduleError naming the field when it does not parse. */
function fieldValues(field: string, spec: FieldSpec): Set<number> {
  const bad = (why: string) => new ScheduleError(`bad ${spec.name} field "${field}": ${why}`);
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const m = /^(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:\/([0-9]+))?$/i.exec(part);
    if (!m) throw bad(part === '' ? 'an empty list item' : `"${part}" is not *, a value, a range or a step`);
    const [, range, stepText] = m as unknown as [string, string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw bad('a step is 1 or more');
    let lo = spec.min;
    let hi = spec.max;
    if (range !== '*') {
      const [a, b] = range.split('-') as [string, string | undefined];
      lo = value(a, spec, bad);
      hi = b !== undefined ? value(b, spec, bad) : stepText !== undefined ? spec.max : lo;
      if (hi < lo) throw bad(`the range ${range} runs backwards`);
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

function value(text: string, spec: FieldSpec, bad: (why: string) => ScheduleError): number {
  const named = spec.names?.indexOf(text.toLowerCase()) ?? -1;
  // Month names count from 1, day names from 0 (their field's minimum).
  const v = named >= 0 ? named + (spec.name === 'month' ? 1 : 0) : /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(v)) throw bad(`"${text}" is not a number${spec.names ? ' or a name' : ''}`);
  if (v < spec.min || v > spec.max) throw bad(`${v} is outside ${spec.min}-${spec.max}`);
  return v;
}
