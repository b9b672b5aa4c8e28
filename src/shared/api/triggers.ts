/*
 * Trigger health: GET /admin/triggers (and `wfx daemon status`); schedules paused, resumed and
 * backfilled (/admin/schedules). Answers are types only.
 */
import { Type, type Static } from './schema.js';
import { ENVIRONMENTS, StringEnum, type Environment } from './common.js';

/** The flow version a trigger belongs to. */
export interface TriggerSubject {
  readonly processId: string;
  readonly flowName: string;
  readonly organization: string;
  readonly environment: Environment;
  readonly version: string;
}

/** What every trigger's health says, besides its own details. */
export interface TriggerState {
  readonly state: 'active' | 'failing' | 'disabled';
  readonly lastFire: string | null;
  readonly nextFire: string | null;
  readonly lastError: string | null;
}

/** A schedule trigger's health. */
export interface ScheduleHealth extends TriggerSubject, TriggerState {
  readonly type: 'schedule';
  readonly key: string;
  readonly cron: string;
  readonly timezone: string;
  readonly missedRuns: 'skip' | 'last' | 'all';
  /** What a fire does while an execution an earlier fire started still runs. */
  readonly overlap: 'skip' | 'buffer-one' | 'allow' | 'cancel-other';
  /** Fire times waiting their turn (a buffered fire, a backfill's). */
  readonly waiting: number;
  /** disabled: turned off in its environment (paused: `wfx schedules pause`; a deploy's `schedules: {FLOW: off}`), never fired. */
  readonly state: 'active' | 'failing' | 'disabled';
  /** The next SCHEDULE_NEXT_FIRES fire times (the first is nextFire), as the scheduler computes them. */
  readonly nextFires: readonly string[];
}

/** How many of a schedule's next fire times its health lists (`nextFires`). */
export const SCHEDULE_NEXT_FIRES = 5;

/** A webhook trigger's health. */
export interface WebhookHealth extends TriggerSubject, TriggerState {
  readonly type: 'webhook';
  readonly webhook: string;
  /** active; failing (its last delivery was refused: bad signature, stale); disabled (no such registration). lastFire: the last delivery that started this flow. */
  readonly state: 'active' | 'failing' | 'disabled';
  readonly nextFire: null;
}

/** An email trigger's health. */
export interface EmailHealth extends TriggerSubject, TriggerState {
  readonly type: 'email';
  readonly connection: string;
  /** active (connected, watching); failing (cannot connect: retrying; or the latest email's start was refused, as its flow's inputs refused the email: see lastError); disabled (no such connection). */
  readonly state: 'active' | 'failing' | 'disabled';
  readonly nextFire: null;
}

/** An on-demand trigger: nothing fires it, the flow is started by hand or over the API. Always `active`, lastFire null. */
export interface OnDemandHealth extends TriggerSubject, TriggerState {
  readonly type: 'on-demand';
  readonly description: string | null;
  readonly state: 'active';
  readonly nextFire: null;
  readonly lastError: null;
}

/**
 * An execution trigger's health: always `active` (the end of a watched execution fires it);
 * lastFire: the newest start it made that the daemon noted since it started, or still holds.
 */
export interface ExecutionTriggerHealth extends TriggerSubject, TriggerState {
  readonly type: 'execution';
  /** The flow it watches; null: every flow of the organization but its own. */
  readonly watchedProcessId: string | null;
  readonly states: readonly ('COMPLETED' | 'FAILED' | 'CANCELLED')[];
  readonly state: 'active';
  readonly nextFire: null;
  readonly lastError: null;
}

/** One trigger's health, as GET /admin/triggers lists it. */
export type TriggerHealth = ScheduleHealth | WebhookHealth | EmailHealth | OnDemandHealth | ExecutionTriggerHealth;

/** GET /admin/triggers: sorted by flow name, environment, type. */
export interface TriggerList {
  readonly items: readonly TriggerHealth[];
}

/** Body of POST /admin/schedules/{processId}/pause and /resume: the environment (default PRODUCTION). */
export const SchedulePauseBody = Type.Object(
  { environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })) },
  { additionalProperties: false },
);
export type SchedulePauseBody = Static<typeof SchedulePauseBody>;

/** What pause and resume answer: whether the flow's schedules fire in that environment now. */
export interface SchedulesPaused {
  readonly processId: string;
  readonly environment: Environment;
  readonly paused: boolean;
}

/** Body of POST /admin/schedules/{processId}/backfill: a range of fire times of one of its schedules. */
export const BackfillBody = Type.Object(
  {
    /** The first instant (fire times at or after it). */
    from: Type.String({ format: 'date-time' }),
    /** The last instant (fire times at or before it). */
    to: Type.String({ format: 'date-time' }),
    /** Which of the flow's schedule triggers, counted from 1 (default 1). */
    schedule: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })),
  },
  { additionalProperties: false },
);
export type BackfillBody = Static<typeof BackfillBody>;

/** What a backfill answers: the fire times it starts (now, or in turn as the schedule's overlap says). */
export interface Backfilled {
  readonly processId: string;
  readonly environment: Environment;
  readonly schedule: number;
  readonly fireTimes: readonly string[];
}
