/**
 * Events executions throw, given to the other daemons sharing a database (decision 044). An
 * intermediateThrowEvent wakes what waits here in its step; what waits on the others is reached
 * after the step, over HTTP. So that a daemon killed in between loses nothing, the step also
 * keeps the event (`event.thrown`, in the shared state) until the others have it
 * (`event.passed`); the holder of the thrower's partition gives it on, again after a crash, to
 * the other daemons and to what waits on itself (the step that threw it woke what waited on the
 * daemon that ran it, maybe another). An event given again may wake a node that started
 * waiting since the first time (at least once, never lost).
 */
import { crashPoint } from '../store/crash-point.js';
import type { PendingThrow, WfxState } from '../state/state.js';
import type { ThrownEvent } from '../engine/engine-events.js';

/** What gives thrown events to the other daemons (fan-out.ts's Peers.deliverThrown). */
export interface ThrownPassing {
  /**
   * Delivers `event` to what waits on every other daemon, and with `here` to what waits on this
   * one, at the same time: what this daemon served throughout counts as reached. Rejects when a
   * daemon or partition was not reached (it says so in the log: the outbox gives the event
   * again later, `here` included).
   */
  pass(event: ThrownEvent, here?: () => Promise<void>): Promise<void>;
  /** Whether this daemon holds execution `instanceId`'s partition now: it gives on what that execution threw. */
  holds(instanceId: string): boolean;
}

/** Waits before giving an event again after a failure: longer each time, up to the last. */
const RETRY_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000] as const;
/** An event no daemon could be given for this long is given up (logged): a daemon answering errors for an hour is broken. */
const GIVE_UP_MS = 60 * 60 * 1000;

export class ThrownOutbox {
  /** Events being given on now. */
  private readonly busy = new Set<string>();
  /** Events thrown by a step of this engine: that step delivered them here. */
  private readonly thrownByStep = new Set<string>();
  /** Events delivered to what waits here by this process (a retry of the others does not deliver them here again). */
  private readonly deliveredHere = new Set<string>();
  /** Events whose giving failed: when to try again, and how many tries so far. */
  private readonly retries = new Map<string, { timer: NodeJS.Timeout; tries: number }>();
  private closed = false;

  constructor(
    private readonly deps: {
      readonly state: WfxState;
      readonly passing: ThrownPassing;
      /** Writes event `id` as passed (the other daemons had it, or it was given up on), in a step. */
      readonly passed: (id: string) => Promise<void>;
      /** Delivers `event` to what waits here, in a step. */
      readonly deliverHere: (event: ThrownEvent) => Promise<void>;
      readonly now: () => Date;
      readonly track: (work: Promise<unknown>) => void;
      readonly onError: (err: unknown, what: string) => void;
    },
  ) {}

  /** Gives on every event kept whose thrower this daemon holds (after a restart, or partitions taken). */
  passAll(): void {
    // Partitions taken since: what waits in them here has not had the events given before.
    this.thrownByStep.clear();
    this.deliveredHere.clear();
    for (const event of Object.values(this.deps.state.thrown))
      if (this.deps.passing.holds(event.instanceId)) this.pass(event.id);
  }

  /** Gives event `id`, which a step of this engine threw, to the other daemons (see pass). */
  thrownHere(id: string): void {
    this.thrownByStep.add(id);
    this.pass(id);
  }

  /**
   * Gives kept event `id` to the other daemons, and to what waits here unless that had it,
   * then forgets it; tried again later if that fails.
   */
  pass(id: string): void {
    if (this.closed || this.busy.has(id)) return;
    const retry = this.retries.get(id);
    if (retry) clearTimeout(retry.timer);
    this.busy.add(id);
    this.deps.track(
      this.passNow(id)
        .then(() => {
          this.retries.delete(id);
          this.thrownByStep.delete(id);
          this.deliveredHere.delete(id);
        })
        .catch((err: unknown) => {
          if (!this.closed) this.failed(id, err);
        })
        .finally(() => this.busy.delete(id)),
    );
  }

  /** Stops trying: the engine is closing (what is kept is given on at the next start). */
  close(): void {
    this.closed = true;
    for (const { timer } of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  private async passNow(id: string): Promise<void> {
    const event = this.deps.state.thrown[id];
    // Given on already, or its thrower's partition moved: its new holder gives it on.
    if (!event || !this.deps.passing.holds(event.instanceId)) return;
    crashPoint('thrown:kept'); // the event durable here, the other daemons not given it yet
    // Kept by an earlier holder, or thrown to executions here not in memory (`here`): what
    // waits here has not had it all. Once per process: a retry for the others does not give it
    // here again (a restart does: at least once).
    const done = this.deliveredHere.has(id) || (this.thrownByStep.has(id) && event.here !== true);
    const here = done ? undefined : () => this.deps.deliverHere(event).then(() => void this.deliveredHere.add(id));
    await this.deps.passing.pass(event, here);
    await this.deps.passed(id);
  }

  private failed(id: string, err: unknown): void {
    const event: PendingThrow | undefined = this.deps.state.thrown[id];
    if (!event) return;
    if (this.deps.now().getTime() - Date.parse(event.thrownAt) > GIVE_UP_MS) {
      this.deps.onError(
        err,
        `giving event ${event.eventType} (thrown ${event.thrownAt}) to the other daemons; given up`,
      );
      this.retries.delete(id);
      this.thrownByStep.delete(id);
      this.deliveredHere.delete(id);
      this.deps.track(this.deps.passed(id).catch(() => undefined));
      return;
    }
    const tries = (this.retries.get(id)?.tries ?? 0) + 1;
    const timer = setTimeout(() => this.pass(id), RETRY_MS[Math.min(tries, RETRY_MS.length) - 1]);
    this.retries.set(id, { timer, tries });
  }
}
