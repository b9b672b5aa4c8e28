import { CronTime } from 'cron';
import { DateTime, IANAZone } from 'luxon';

/** A schedule expression that does not parse, or a zone that does not exist. */
export class ScheduleError extends Error {
  readonly code = 'INVALID_SCHEDULE';
}

/**
 * A parsed five-field cron expression in an IANA zone: minute hour day-of-month month
 * day-of-week, with Vixie cron's rule that when both day-of-month and day-of-week are
 * restricted, either matching is enough. Across DST changes a local time that occurs twice
 * fires once, and one that does not occur (skipped at the spring change) does not fire.
 * The scheduler and `wfx cron next` both use this, so they agree.
 */
export class Schedule {
  private readonly time: CronTime;
  private readonly minutes: ReadonlySet<number>;
  private readonly hours: ReadonlySet<number>;

  /** Throws ScheduleError for anything but five fields, or an unknown zone. */
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
    try {
      this.time = new CronTime(expression, timezone);
    } catch (err) {
      throw new ScheduleError(`"${expression}" does not parse: ${(err as Error).message}`);
    }
    this.minutes = fieldValues(fields[0]!, 0, 59);
    this.hours = fieldValues(fields[1]!, 0, 23);
  }

  /** The first fire time strictly after `from`. */
  next(from: Date): Date {
    let at: DateTime = DateTime.fromJSDate(from, { zone: this.timezone });
    for (let guard = 0; guard < 10_000; guard++) {
      const candidate: DateTime = this.time.getNextDateFrom(at, this.timezone);
      // A wall time inside a DST gap comes back moved (02:30 -> 03:00): it does not exist, skip it.
      const local = candidate.setZone(this.timezone);
      if (this.hours.has(local.hour) && this.minutes.has(local.minute)) return candidate.toJSDate();
      at = candidate;
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
}

/** The values a cron field allows: `*`, a step of it, `a`, `a-b`, a stepped range, or a list of these. */
function fieldValues(field: string, min: number, max: number): Set<number> {
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    let lo = min;
    let hi = max;
    if (range !== '*') {
      const [a, b] = range.split('-');
      lo = Number(a);
      hi = b === undefined ? (stepText === undefined ? lo : max) : Number(b);
    }
    if (![lo, hi, step].every(Number.isInteger) || step < 1 || lo < min || hi > max) {
      throw new ScheduleError(`"${field}" is not a valid cron field (${min}-${max})`);
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}
