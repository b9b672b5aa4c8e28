/**
 * A schedule's `overlap`: what a fire does while an execution an earlier fire started still
 * runs. `allow` (the default) starts it anyway; `skip` drops it; `buffer-one` keeps one to start
 * once the running one ends; `cancel-other` cancels the running one and starts. A backfill's fire
 * times (Scheduler.backfill) wait their turn under every policy but `allow`, one at a time, and
 * under `allow` start BACKFILL_PACE at a time. The plan is pure; the scheduler carries it out and
 * records the runs and the waiting times with the starts (`schedule.overlap`).
 */
import { WfxError } from '../../shared/errors.js';
import type { ScheduleOverlap } from '../../shared/flow/types.js';
import type { Schedule } from '../../shared/schedule.js';

/** Fire times a backfill under `allow` starts at once, at most, each turn (a turn: a second, or an end). */
export const BACKFILL_PACE = 10;
/** Fire times one backfill starts at most (a longer range is refused: BACKFILL_TOO_LARGE). */
export const MAX_BACKFILL = 1000;

/** What a turn of a schedule does. */
export interface OverlapPlan {
  /** Fire times to start now, oldest first. */
  readonly start: readonly string[];
  /** Running executions to cancel first (`cancel-other`). */
  readonly cancel: readonly string[];
  /** Fire times left waiting, oldest first. */
  readonly pending: readonly string[];
}

/** Why the scheduler plans: a timer's fire (or missed ones), a backfill, or a turn (an end, a second passed). */
export type OverlapTurn = 'fire' | 'backfill' | 'turn';

/**
 * What schedule turn `turn` with fire times `due` does under `policy`, `running` being the
 * executions its fires started that still run and `pending` the fire times waiting. Pure.
 */
export function planOverlap(
  policy: ScheduleOverlap,
  running: readonly string[],
  pending: readonly string[],
  due: readonly string[],
  turn: OverlapTurn,
): OverlapPlan {
  if (policy === 'allow') {
    // A timer's fires start at once; a backfill's are paced.
    const queue = turn === 'fire' ? pending : [...pending, ...due];
    const now = turn === 'fire' ? due : [];
    const paced = queue.slice(0, BACKFILL_PACE);
    return { start: [...paced, ...now], cancel: [], pending: queue.slice(paced.length) };
  }
  const last = due.at(-1);
  if (running.length > 0) {
    if (turn !== 'fire' || last === undefined) return { start: [], cancel: [], pending: [...pending, ...due] };
    if (policy === 'skip') return { start: [], cancel: [], pending };
    if (policy === 'buffer-one') return { start: [], cancel: [], pending: pending.length > 0 ? pending : [last] };
    return { start: [last], cancel: running, pending };
  }
  const queue = [...pending, ...due];
  return { start: queue.slice(0, 1), cancel: [], pending: queue.slice(1) };
}

/**
 * The fire times of `schedule` from `from` to `to`, both included, as ISO times. Throws
 * BACKFILL_TOO_LARGE past MAX_BACKFILL of them.
 */
export function fireTimesBetween(schedule: Schedule, from: Date, to: Date): string[] {
  const times: string[] = [];
  for (let at = schedule.next(new Date(from.getTime() - 1)); at <= to; at = schedule.next(at)) {
    if (times.length === MAX_BACKFILL)
      throw new WfxError(
        'BACKFILL_TOO_LARGE',
        `${from.toISOString()} to ${to.toISOString()} holds more than ${MAX_BACKFILL} fire times: backfill a shorter range at a time`,
        { details: { max: MAX_BACKFILL } },
      );
    times.push(at.toISOString());
  }
  return times;
}
