/**
 * The scheduler: fires `schedule` triggers (each schedule's turns: schedule-fire.ts, as its
 * overlap says: schedule-overlap.ts), makes up for runs missed while the daemon was down, and
 * backfills a range of fire times on request. What it shows of them is schedule-health.ts's.
 */
import type { ScheduleHealth } from '../../shared/api/index.js';
import { scheduleKey, schedulesHealth, turnedOff, type ArmedSchedule } from './schedule-health.js';
import { Schedule } from '../../shared/schedule.js';
import type { Engine } from '../engine/engine.js';
import { TimerQueue } from '../engine/timers.js';
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import { activeTriggers, subjectOf } from '../state/active-triggers.js';
import type { RecordStore } from '../store/record-store.js';
import { WorkCount } from '../../shared/work-count.js';
import { errorMessage, WfxError } from '../../shared/errors.js';
import { fireTimesBetween, type OverlapTurn } from './schedule-overlap.js';
import { scheduleTurn, type ScheduleTurnOf, type TurnResult } from './schedule-fire.js';

export { scheduleKey };

/** Runs missed while the daemon was down that `missedRuns: all` makes up for, at most. */
export const MAX_MISSED_RUNS = 100;
/** How often fire times waiting their turn are looked at (a backfill's pace), in ms. */
const PACE_MS = 1000;
/** Fire times looked at when catching up (a minutely schedule down for months stops here). */
const MAX_CATCH_UP_SCAN = 500_000;

/** One schedule trigger of an active flow version in one environment. */
type Entry = ArmedSchedule;

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
  /** Schedules with runs that hold back their next fire or fire times waiting: what an end or a pace turn looks at. */
  private readonly watched = new Map<string, ScheduleTurnOf>();
  /** Each schedule's turn under way: the next waits for it. */
  private readonly lanes = new Map<string, Promise<void>>();
  private pacer: NodeJS.Timeout | null = null;
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
    this.engine.on('finished', this.onFinished);
    // Fire times left waiting, and runs holding back the next fire, before a restart.
    for (const a of activeTriggers(this.store.state, 'schedule')) {
      const key = scheduleKey(a.flow.processId, a.environment, a.index, a.trigger);
      const fires = this.store.state.scheduleFires[key];
      if (fires?.runs === undefined && fires?.pending === undefined) continue;
      const s = { key, ...subjectOf(a), overlap: a.trigger.overlap ?? 'allow' } as const;
      this.watched.set(key, s);
      this.track(this.turn(s, [], 'turn', this.now()));
    }
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
    this.engine.off('finished', this.onFinished);
    if (this.pacer !== null) clearInterval(this.pacer);
    this.timers.close();
    await this.idle();
  }

  /** Re-reads the clock (tests moving their clock, or after a clock jump). */
  pokeTimers(): void {
    this.timers.poke();
  }

  /** Every schedule's health, for status and the API. */
  health(): ScheduleHealth[] {
    return schedulesHealth(this.store.state, this.entries.values(), this.errors);
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

  /** Fires `instants` of `entry` (a timer's, or missed ones), as its overlap says. */
  private async fire(entry: Entry, instants: readonly Date[], now: Date): Promise<void> {
    const due = instants.map((d) => d.toISOString());
    await this.turn(this.turnOf(entry), due, 'fire', now);
  }

  /** What a turn of `entry` is of. */
  private turnOf(entry: Entry): ScheduleTurnOf {
    const { key, organization, processId, environment } = entry;
    return { key, organization, processId, environment, overlap: entry.trigger.overlap ?? 'allow' };
  }

  /**
   * A turn of schedule `s` (schedule-fire.ts), after the turns of it under way (one at a time: two
   * would both start what waits). Notes a start that failed as the schedule's error.
   */
  private turn(s: ScheduleTurnOf, due: readonly string[], turn: OverlapTurn, now: Date): Promise<TurnResult> {
    const run = async (): Promise<TurnResult> => {
      const result = await scheduleTurn(this.engine, s, this.store.state.scheduleFires[s.key], due, turn, now);
      if (result.started < result.asked)
        this.errors.set(
          s.key,
          `${result.asked - result.started} of ${result.asked} runs could not start at ${now.toISOString()}${result.refused === '' ? '' : `: ${result.refused}`}`,
        );
      else if (result.asked > 0) this.errors.delete(s.key);
      const fires = this.store.state.scheduleFires[s.key];
      if (fires?.runs !== undefined || fires?.pending !== undefined) this.watched.set(s.key, s);
      else this.watched.delete(s.key);
      this.pace();
      return result;
    };
    const previous = this.lanes.get(s.key) ?? Promise.resolve();
    const work = previous.then(run, run);
    const lane = work.then(
      () => undefined,
      () => undefined,
    );
    this.lanes.set(s.key, lane);
    void lane.then(() => {
      if (this.lanes.get(s.key) === lane) this.lanes.delete(s.key);
    });
    return work;
  }

  /** An execution ended: the schedules whose fires started it take a turn (what waits may start). */
  private readonly onFinished = (id: string): void => {
    if (this.watched.size === 0 || this.closed) return;
    for (const [key, s] of this.watched)
      if (this.store.state.scheduleFires[key]?.runs?.includes(id) === true)
        this.track(this.turn(s, [], 'turn', this.now()));
  };

  /** While fire times wait, a turn every PACE_MS (a backfill under `allow` is started a slice at a time). */
  private pace(): void {
    const waiting = [...this.watched.keys()].some((k) => (this.store.state.scheduleFires[k]?.pending?.length ?? 0) > 0);
    if (!waiting || this.closed) {
      if (this.pacer !== null) clearInterval(this.pacer);
      this.pacer = null;
      return;
    }
    this.pacer ??= setInterval(() => {
      for (const s of this.watched.values())
        if ((this.store.state.scheduleFires[s.key]?.pending?.length ?? 0) > 0)
          this.track(this.turn(s, [], 'turn', this.now()));
    }, PACE_MS);
    this.pacer.unref();
  }

  /**
   * Starts one execution per fire time of schedule `index` (0-based) of flow `processId` in
   * `environment` from `from` to `to` (both included), each with its `{scheduledTime}`, as its
   * overlap says (schedule-overlap.ts): answers the fire times. Throws NOT_FOUND for no such
   * schedule, BACKFILL_TOO_LARGE past MAX_BACKFILL fire times.
   */
  async backfill(processId: string, environment: Environment, index: number, from: Date, to: Date): Promise<string[]> {
    const a = activeTriggers(this.store.state, 'schedule').find(
      (x) => x.flow.processId === processId && x.environment === environment && x.index === index,
    );
    if (a === undefined)
      throw new WfxError('NOT_FOUND', `flow ${processId} has no schedule ${index + 1} active in ${environment}`);
    const times = fireTimesBetween(new Schedule(a.trigger.cron, a.trigger.timezone ?? 'UTC'), from, to);
    if (times.length === 0) return [];
    const key = scheduleKey(processId, environment, index, a.trigger);
    const s = { key, ...subjectOf(a), overlap: a.trigger.overlap ?? 'allow' } as const;
    await this.turn(s, times, 'backfill', this.now());
    return times;
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
