import { SCHEDULE_NEXT_FIRES, type ScheduleHealth } from '../../shared/api/index.js';
import type { Trigger } from '../../shared/flow/types.js';
import { Schedule } from '../../shared/schedule.js';
import type { Engine, StartRequest } from '../engine/engine.js';
import { TimerQueue } from '../engine/timers.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import { activeTriggers, subjectOf, type TriggerSubject } from '../state/active-triggers.js';
import type { RecordStore } from '../store/record-store.js';
import { WorkCount } from '../../shared/work-count.js';
import { errorMessage } from '../../shared/errors.js';

/** Runs missed while the daemon was down that `missedRuns: all` makes up for, at most. */
export const MAX_MISSED_RUNS = 100;
/** Fire times looked at when catching up (a minutely schedule down for months stops here). */
const MAX_CATCH_UP_SCAN = 500_000;

type ScheduleTrigger = Extract<Trigger, { type: 'schedule' }>;

/** One schedule trigger of an active flow version in one environment. */
interface Entry extends TriggerSubject {
  readonly key: string;
  readonly trigger: ScheduleTrigger;
  readonly schedule: Schedule;
  /** The fire time the timer is armed for. */
  next: Date | null;
}

/** What GET /admin/triggers shows of this trigger (the wire's type, shared/api). */
export type { ScheduleHealth };

export interface SchedulerOptions {
  readonly store: RecordStore<WfxState, WfxRecord>;
  readonly engine: Engine;
  /** The clock (tests pass their own). */
  readonly now?: () => Date;
  readonly onError?: (err: unknown, what: string) => void;
  /** Told how many runs missed while the daemon was down are skipped (metrics). */
  readonly onMissed?: (skipped: number) => void;
}

/** The identity of a schedule: a changed expression or zone is a new schedule (armed afresh). */
export function scheduleKey(processId: string, environment: Environment, index: number, t: ScheduleTrigger): string {
  return `${processId}|${environment}|${index}|${t.cron}|${t.timezone ?? 'UTC'}`;
}

/** Whether the schedules of `a`'s flow are turned off in its environment. */
const turnedOff = (a: { flow: { schedulesOff?: readonly string[] }; environment: Environment }): boolean =>
  a.flow.schedulesOff?.includes(a.environment) === true;

/**
 * Fires `schedule` triggers: for each environment, the schedules of its active flow version.
 * A fire starts the execution and records the instant in the same transaction
 * (`schedule.fired`), so after a crash a fire is neither repeated nor lost; runs missed while
 * the daemon was down follow the trigger's `missedRuns` (skip, last, all: at most 100).
 * Activating a version re-arms its schedules; one that is no longer active, or turned off, stops.
 */
export class Scheduler {
  private readonly store: RecordStore<WfxState, WfxRecord>;
  private readonly engine: Engine;
  private readonly now: () => Date;
  private readonly onError: (err: unknown, what: string) => void;
  private readonly timers: TimerQueue;
  private readonly entries = new Map<string, Entry>();
  private readonly errors = new Map<string, string>();
  private readonly inflight = new WorkCount();
  private syncQueued = false;
  /** The latest sync under way or queued: what `synced()` waits for. */
  private syncing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: SchedulerOptions) {
    this.store = options.store;
    this.engine = options.engine;
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => undefined);
    this.timers = new TimerQueue(
      (key) => this.track(this.fireDue(key)),
      () => this.now().getTime(),
    );
  }

  /** Arms every schedule of the active versions (making up for missed runs) and follows activations. */
  async start(): Promise<void> {
    this.store.onCommit((records) => {
      if (
        this.syncQueued ||
        this.closed ||
        !records.some(
          (r) =>
            r.type === 'flow.activated' ||
            r.type === 'flow.published' ||
            r.type === 'flow.deactivated' ||
            r.type === 'flow.schedules',
        )
      )
        return;
      this.syncQueued = true;
      // One sync at a time, each after the one before (a sync awaits commits while it arms).
      const previous = this.syncing;
      this.syncing = new Promise<void>((resolve) =>
        setImmediate(() => {
          this.syncQueued = false;
          const work = previous.then(() => this.sync());
          this.track(work);
          void work.finally(resolve);
        }),
      );
    });
    this.syncing = this.sync();
    await this.syncing;
  }

  /** Resolves once fires under way (and the arming after them) are done. */
  async idle(): Promise<void> {
    await this.inflight.idle();
  }

  /** Resolves once the schedules follow the flows as committed so far (after a publish or an activation). */
  synced(): Promise<void> {
    return this.syncing;
  }

  /** Stops firing; resolves once fires under way are durable. */
  async close(): Promise<void> {
    this.closed = true;
    this.timers.close();
    await this.idle();
  }

  /** Re-reads the clock (tests moving their clock, or after a clock jump). */
  pokeTimers(): void {
    this.timers.poke();
  }

  /** Every schedule's health, for status and the API. */
  health(): ScheduleHealth[] {
    const armed = [...this.entries.values()].map(({ key, trigger, schedule, next, ...subject }): ScheduleHealth => {
      const error = this.errors.get(key) ?? null;
      return {
        type: 'schedule',
        key,
        ...subject,
        cron: trigger.cron,
        timezone: trigger.timezone ?? 'UTC',
        missedRuns: trigger.missedRuns ?? 'skip',
        state: error ? 'failing' : 'active',
        lastFire: this.store.state.scheduleFires[key]?.lastFire ?? null,
        nextFire: next?.toISOString() ?? null,
        // The fires after it, by the same code that fires them (and `wfx cron next`).
        nextFires: next ? [next, ...schedule.nextTimes(next, SCHEDULE_NEXT_FIRES - 1)].map((d) => d.toISOString()) : [],
        lastError: error,
      };
    });
    // Those turned off (a deploy's `schedules: {FLOW: off}`): listed, never armed.
    const off = activeTriggers(this.store.state, 'schedule')
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
          state: 'disabled',
          lastFire: this.store.state.scheduleFires[key]?.lastFire ?? null,
          nextFire: null,
          nextFires: [],
          lastError: null,
        };
      });
    return [...armed, ...off];
  }

  /** The schedules the state calls for now: arms new ones, drops those no longer active. */
  private async sync(): Promise<void> {
    if (this.closed) return;
    const wanted = new Map<string, Entry>();
    for (const a of activeTriggers(this.store.state, 'schedule')) {
      if (turnedOff(a)) continue;
      const { trigger } = a;
      const key = scheduleKey(a.flow.processId, a.environment, a.index, trigger);
      wanted.set(key, {
        key,
        ...subjectOf(a),
        trigger,
        schedule: new Schedule(trigger.cron, trigger.timezone ?? 'UTC'), // validated at publish
        next: null,
      });
    }
    for (const key of this.entries.keys()) {
      if (wanted.has(key)) continue;
      this.entries.delete(key);
      this.errors.delete(key);
      this.timers.delete(key);
      // Re-activated later, it fires from then on: the time it was inactive is not downtime.
      await this.store
        .commit({ type: 'schedule.disarmed', key, at: this.now().toISOString() })
        .catch((err: unknown) => this.onError(err, `schedule ${key}`));
    }
    for (const [key, entry] of wanted) {
      const current = this.entries.get(key);
      if (current) {
        if (current.version !== entry.version) this.entries.set(key, { ...entry, next: current.next });
        continue;
      }
      this.entries.set(key, entry);
      await this.arm(entry);
    }
  }

  /** Deals with the runs missed since the schedule's last instant, then arms the next fire. */
  private async arm(entry: Entry): Promise<void> {
    const now = this.now();
    const fires = this.store.state.scheduleFires[entry.key];
    const since = fires?.inactive ? undefined : fires?.at;
    try {
      if (since === undefined) {
        // A new (or re-activated) schedule fires from now on, never for times before it was active.
        await this.store.commit({ type: 'schedule.armed', key: entry.key, at: now.toISOString() });
      } else {
        const missed = this.missed(entry.schedule, new Date(since), now);
        const policy = entry.trigger.missedRuns ?? 'skip';
        if (missed.length > 0) {
          const kept = policy === 'skip' ? 0 : policy === 'last' ? 1 : Math.min(missed.length, MAX_MISSED_RUNS);
          if (kept < missed.length) this.options.onMissed?.(missed.length - kept);
          if (policy === 'skip')
            await this.store.commit({ type: 'schedule.armed', key: entry.key, at: now.toISOString() });
          else await this.fire(entry, policy === 'last' ? missed.slice(-1) : missed.slice(-MAX_MISSED_RUNS), now);
        }
      }
      this.setNext(entry, now);
    } catch (err) {
      this.fail(entry, err);
    }
  }

  /** Fire times in (since, now], the latest MAX_MISSED_RUNS of them. */
  private missed(schedule: Schedule, since: Date, now: Date): Date[] {
    const out: Date[] = [];
    let at = since;
    for (let i = 0; i < MAX_CATCH_UP_SCAN; i++) {
      at = schedule.next(at);
      if (at > now) break;
      out.push(at);
      if (out.length > MAX_MISSED_RUNS) out.shift();
    }
    return out;
  }

  /** Arms the entry's timer for its first fire time after `after` (and after its last dealt-with instant). */
  private setNext(entry: Entry, after: Date): void {
    const current = this.entries.get(entry.key);
    if (this.closed || current === undefined) return;
    const since = this.store.state.scheduleFires[entry.key]?.at;
    const from = since !== undefined && Date.parse(since) > after.getTime() ? new Date(since) : after;
    current.next = current.schedule.next(from);
    this.timers.set(entry.key, current.next.getTime());
  }

  /**
   * The timer of `key` is due: fire its instant, then arm the next one after it. A fire time
   * that passed while the daemon ran (a slow fire, an event-loop stall) still fires, late; only
   * a long gap (the machine slept) is treated as downtime and follows `missedRuns`.
   */
  private async fireDue(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry?.next || this.closed) return;
    const due = entry.next;
    try {
      await this.fire(entry, [due], this.now());
    } catch (err) {
      this.fail(entry, err);
    }
    const now = this.now();
    if (entry.schedule.next(due) <= now && this.missed(entry.schedule, due, now).length > MAX_MISSED_RUNS / 10) {
      await this.arm(entry);
      return;
    }
    this.setNext(entry, due);
  }

  /**
   * Starts one execution per instant of the entry's active version, with `{scheduledTime}`,
   * and records the last instant in the same transaction.
   */
  private async fire(entry: Entry, instants: readonly Date[], now: Date): Promise<void> {
    const last = instants.at(-1)!.toISOString();
    const requests: StartRequest[] = instants.map((at) => ({
      organization: entry.organization,
      processId: entry.processId,
      environment: entry.environment,
      data: { scheduledTime: at.toISOString(), triggerType: 'schedule' },
    }));
    let why = '';
    const started = await this.engine.startBatch(requests, (_started, refused) => {
      // Why a run did not start (its flow's inputs refuse the data, say) is said, not only that it did not.
      const first = refused[0]?.error;
      if (first) why = `: ${first.code}: ${first.message}`;
      return [{ type: 'schedule.fired', key: entry.key, at: last }];
    });
    if (started.length < requests.length) {
      this.errors.set(
        entry.key,
        `${requests.length - started.length} of ${requests.length} runs could not start at ${now.toISOString()}${why}`,
      );
    } else {
      this.errors.delete(entry.key);
    }
  }

  private fail(entry: Entry, err: unknown): void {
    const message = errorMessage(err);
    this.errors.set(entry.key, message);
    this.onError(err, `schedule ${entry.key}`);
  }

  private track(work: Promise<unknown>): void {
    void this.inflight.track(work);
  }
}
