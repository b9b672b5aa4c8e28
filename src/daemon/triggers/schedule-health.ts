/**
 * What the scheduler shows of its schedules (GET /admin/triggers, `wfx schedules list`): each
 * armed one's next fires, last fire, overlap and waiting fire times, error; and those turned off
 * (paused, or off in a deploy), listed, never armed.
 */
import { SCHEDULE_NEXT_FIRES, type ScheduleHealth } from '../../shared/api/index.js';
import type { Trigger } from '../../shared/flow/types.js';
import type { Schedule } from '../../shared/schedule.js';
import { activeTriggers, subjectOf, type TriggerSubject } from '../state/active-triggers.js';
import type { Environment, WfxState } from '../state/state.js';

type ScheduleTrigger = Extract<Trigger, { type: 'schedule' }>;

/** One schedule trigger of an active flow version in one environment, as the scheduler arms it. */
export interface ArmedSchedule extends TriggerSubject {
  readonly key: string;
  readonly trigger: ScheduleTrigger;
  readonly schedule: Schedule;
  /** The fire time the timer is armed for. */
  next: Date | null;
}

/** The identity of a schedule: a changed expression or zone is a new schedule (armed afresh). */
export function scheduleKey(processId: string, environment: Environment, index: number, t: ScheduleTrigger): string {
  return `${processId}|${environment}|${index}|${t.cron}|${t.timezone ?? 'UTC'}`;
}

/** Whether the schedules of `a`'s flow are turned off (paused) in its environment. */
export const turnedOff = (a: { flow: { schedulesOff?: readonly string[] }; environment: Environment }): boolean =>
  a.flow.schedulesOff?.includes(a.environment) === true;

/** Every schedule's health (the armed ones, then those turned off), for status and the API. */
export function schedulesHealth(
  state: WfxState,
  entries: Iterable<ArmedSchedule>,
  errors: ReadonlyMap<string, string>,
): ScheduleHealth[] {
  const overlapOf = (key: string, trigger: ScheduleTrigger) => ({
    overlap: trigger.overlap ?? 'allow',
    waiting: state.scheduleFires[key]?.pending?.length ?? 0,
  });
  const armed = [...entries].map(({ key, trigger, schedule, next, ...subject }): ScheduleHealth => {
    const error = errors.get(key) ?? null;
    return {
      type: 'schedule',
      key,
      ...subject,
      cron: trigger.cron,
      timezone: trigger.timezone ?? 'UTC',
      missedRuns: trigger.missedRuns ?? 'skip',
      ...overlapOf(key, trigger),
      state: error ? 'failing' : 'active',
      lastFire: state.scheduleFires[key]?.lastFire ?? null,
      nextFire: next?.toISOString() ?? null,
      // The fires after it, by the same code that fires them (and `wfx cron next`).
      nextFires: next ? [next, ...schedule.nextTimes(next, SCHEDULE_NEXT_FIRES - 1)].map((d) => d.toISOString()) : [],
      lastError: error,
    };
  });
  // Those turned off (paused, or a deploy's `schedules: {FLOW: off}`): listed, never armed.
  const off = activeTriggers(state, 'schedule')
    .filter(turnedOff)
    .map((a): ScheduleHealth => {
      const key = scheduleKey(a.flow.processId, a.environment, a.index, a.trigger);
      return {
        type: 'schedule',
        key,
        ...subjectOf(a),
        cron: a.trigger.cron,
        timezone: a.trigger.timezone ?? 'UTC',
        missedRuns: a.trigger.missedRuns ?? 'skip',
        ...overlapOf(key, a.trigger),
        state: 'disabled',
        lastFire: state.scheduleFires[key]?.lastFire ?? null,
        nextFire: null,
        nextFires: [],
        lastError: null,
      };
    });
  return [...armed, ...off];
}
