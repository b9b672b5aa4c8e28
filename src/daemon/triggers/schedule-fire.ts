/**
 * One turn of a schedule trigger, carried out: its overlap plan (schedule-overlap.ts) made over
 * what its earlier fires started and what waits, the running ones cancelled where the plan says,
 * the fire times started, each with `{scheduledTime}`, and what was dealt with recorded in the
 * same transaction as the starts (`schedule.fired` for a timer's fires, `schedule.overlap` for
 * the runs and the waiting times): a crash repeats nothing and loses nothing.
 */
import { isWfxError } from '../../shared/errors.js';
import type { ScheduleOverlap } from '../../shared/flow/types.js';
import type { Engine, StartRequest } from '../engine/engine.js';
import type { WfxRecord } from '../state/records.js';
import { STATE, type Environment, type ScheduleFires } from '../state/state.js';
import { planOverlap, type OverlapTurn } from './schedule-overlap.js';
import type { TriggerStartKey } from '../../shared/flow/trigger-data.js';

/** The schedule a turn is of. */
export interface ScheduleTurnOf {
  readonly key: string;
  readonly organization: string;
  readonly processId: string;
  readonly environment: Environment;
  readonly overlap: ScheduleOverlap;
}

/** What a turn did: how many fire times it started, and why one could not start (empty: all did). */
export interface TurnResult {
  readonly started: number;
  readonly asked: number;
  readonly refused: string;
}

/** The executions of `ids` that still run (resident or at rest). */
export function stillRunning(engine: Engine, ids: readonly string[]): string[] {
  return ids.filter((id) => {
    const live = engine.executions.get(id);
    if (live !== undefined) return live.stateCd === STATE.RUNNING;
    return engine.executions.coldSummary(id)?.stateCd === STATE.RUNNING;
  });
}

/**
 * Carries out turn `turn` of schedule `s` with fire times `due` (see the top of this file).
 * `fired`: the instant a timer's fires are dealt with up to (recorded as `schedule.fired`).
 */
export async function scheduleTurn(
  engine: Engine,
  s: ScheduleTurnOf,
  fires: ScheduleFires | undefined,
  due: readonly string[],
  turn: OverlapTurn,
  now: Date,
): Promise<TurnResult> {
  const running = s.overlap === 'allow' ? [] : stillRunning(engine, fires?.runs ?? []);
  const pending = fires?.pending ?? [];
  const plan = planOverlap(s.overlap, running, pending, due, turn);
  for (const id of plan.cancel)
    await engine.cancel({ organization: null, processInstanceId: id }).catch((err: unknown) => {
      if (!isWfxError(err, 'INSTANCE_NOT_RUNNING') && !isWfxError(err, 'INSTANCE_NOT_FOUND')) throw err;
    });
  const requests: StartRequest[] = plan.start.map((at) => ({
    organization: s.organization,
    processId: s.processId,
    environment: s.environment,
    data: { scheduledTime: at, triggerType: 'schedule' } satisfies Record<TriggerStartKey<'schedule'>, unknown>,
  }));
  let refused = '';
  // The common schedule (allow, nothing waiting) writes no overlap state.
  const quiet = s.overlap === 'allow' && pending.length === 0 && plan.pending.length === 0 && fires?.runs === undefined;
  const started = await engine.startBatch(requests, (begun, notStarted) => {
    // Why a run did not start (its flow's inputs refuse the data, say) is said, not only that it did not.
    const first = notStarted[0]?.error;
    if (first) refused = `${first.code}: ${first.message}`;
    const records: WfxRecord[] = [];
    const last = due.at(-1);
    if (turn === 'fire' && last !== undefined) records.push({ type: 'schedule.fired', key: s.key, at: last });
    const runs =
      s.overlap === 'allow'
        ? []
        : [...(plan.cancel.length > 0 ? [] : running), ...begun.map((e) => e.processInstanceId)];
    if (!quiet)
      records.push({ type: 'schedule.overlap', key: s.key, at: now.toISOString(), runs, pending: plan.pending });
    return records;
  });
  return { started: started.length, asked: requests.length, refused };
}
