/**
 * How webhook and email triggers pace their starts (a trigger's StartPacing). `throttle: N/m`
 * starts at most N a period (a sliding window, per trigger, kept in memory: a restart begins a
 * new one) and drops the rest. `debounce: 10s` holds a start back: the trigger records it (with
 * the delivery or email that caused it, in one journal entry), a later event of the same trigger
 * and `debounceKey` value replaces it and moves it on, and once it is due it starts with the last
 * event's data, its record removed in the same entry. So a burst is one start, and a restart
 * loses none of those held back.
 */
import { parseDuration } from '../../shared/duration.js';
import { errorMessage } from '../../shared/errors.js';
import { resolveTemplate } from '../../shared/expr/template.js';
import type { StartPacing } from '../../shared/flow/types.js';
import type { Engine, StartRequest } from '../engine/engine.js';
import { TimerQueue } from '../engine/timers.js';
import type { WfxRecord } from '../state/records.js';
import type { DebouncedStart, Environment, WfxState } from '../state/state.js';
import type { DurableStore } from '../store/durable-store.js';

/** A start a trigger asks for: the request, the trigger's pacing, and the trigger's identity. */
export interface PacedStart {
  readonly req: StartRequest & { readonly environment: Environment; readonly data: Record<string, unknown> };
  readonly pacing: StartPacing;
  /** The trigger: `<processId>|<environment>|<index>`. */
  readonly trigger: string;
}

/** What pacing makes of a trigger's starts: those to start now, the records of those held back, what was dropped. */
export interface Paced {
  readonly start: StartRequest[];
  readonly records: WfxRecord[];
  readonly debounced: number;
  readonly throttled: number;
}

const PERIOD_MS = { s: 1000, m: 60_000, h: 3_600_000 } as const;

/** `throttle`'s count and period (ms). Pure; the flow's schema checked its form. */
function throttleOf(text: string): { readonly n: number; readonly ms: number } {
  const [n, unit] = text.split('/') as [string, keyof typeof PERIOD_MS];
  return { n: Number(n), ms: PERIOD_MS[unit] };
}

/** The pacing of webhook and email starts (see the top of this file). */
export class StartPacer {
  /** Each throttled trigger's starts in its window, oldest first (ms). */
  private readonly windows = new Map<string, number[]>();
  private readonly timers: TimerQueue;
  private closed = false;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly options: {
      readonly store: DurableStore<WfxState, WfxRecord>;
      readonly engine: Engine;
      readonly now: () => Date;
      readonly onError: (err: unknown, what: string) => void;
    },
  ) {
    this.timers = new TimerQueue(
      (key) => this.track(this.due(key)),
      () => this.options.now().getTime(),
    );
  }

  /** Arms the starts `records` hold back: call once they are durable (with the event that held them). */
  held(records: readonly WfxRecord[]): void {
    for (const r of records) if (r.type === 'start.debounced') this.timers.set(r.key, Date.parse(r.start.due));
  }

  /** Arms the starts held back before a restart (overdue ones start at once). */
  start(): void {
    for (const [key, d] of Object.entries(this.options.store.state.debounced)) this.timers.set(key, Date.parse(d.due));
  }

  /** Stops; resolves once the starts under way are durable. */
  async close(): Promise<void> {
    this.closed = true;
    this.timers.close();
    await Promise.allSettled([...this.inflight]);
  }

  /** Re-reads the clock (tests moving theirs). */
  pokeTimers(): void {
    this.timers.poke();
  }

  /** What `starts` become at `now` (see the top of this file): throttling is counted here, debouncing recorded by the caller. */
  pace(starts: readonly PacedStart[], now: Date): Paced {
    const start: StartRequest[] = [];
    const records: WfxRecord[] = [];
    let debounced = 0;
    let throttled = 0;
    for (const s of starts) {
      if (s.pacing.throttle !== undefined && !this.admits(s.trigger, s.pacing.throttle, now.getTime())) {
        throttled++;
        continue;
      }
      if (s.pacing.debounce === undefined) {
        start.push(s.req);
        continue;
      }
      const keyValue =
        s.pacing.debounceKey === undefined
          ? ''
          : String(resolveTemplate(s.pacing.debounceKey, { vars: s.req.data, env: {} }).value ?? '');
      const held: DebouncedStart = {
        organization: s.req.organization ?? '',
        processId: s.req.processId,
        environment: s.req.environment,
        data: s.req.data,
        due: new Date(now.getTime() + parseDuration(s.pacing.debounce)).toISOString(),
      };
      records.push({ type: 'start.debounced', key: `${s.trigger}\0${keyValue}`, start: held });
      debounced++;
    }
    return { start, records, debounced, throttled };
  }

  /** Whether trigger `trigger` may start one more now under `throttle` (counted if so). */
  private admits(trigger: string, throttle: string, nowMs: number): boolean {
    const { n, ms } = throttleOf(throttle);
    const window = this.windows.get(trigger) ?? [];
    while (window.length > 0 && window[0]! <= nowMs - ms) window.shift();
    if (window.length >= n) return false;
    window.push(nowMs);
    this.windows.set(trigger, window);
    return true;
  }

  /** A held start's time came: it starts (unless a later event moved it on), its record removed with it. */
  private async due(key: string): Promise<void> {
    if (this.closed) return;
    const held = this.options.store.state.debounced[key];
    if (held === undefined) return;
    if (Date.parse(held.due) > this.options.now().getTime()) return this.timers.set(key, Date.parse(held.due));
    const { due: _due, ...req } = held;
    try {
      await this.options.engine.startBatch([req], () => [{ type: 'start.undebounced', key }]);
    } catch (err) {
      this.options.onError(err, `the debounced start of ${held.processId} (${errorMessage(err)})`);
    }
  }

  private track(work: Promise<unknown>): void {
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work));
  }
}
