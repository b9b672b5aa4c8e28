/**
 * When each flow was last started by an execution trigger, per environment: kept beside the
 * state by the reducer (instance.started, instance.revived), not in it, so that it outlives the
 * executions' archiving without a record of its own, and noted for every live execution by the
 * recovery walk (engine/recovery.ts: at a start, and for a partition taken), so that trigger
 * health reads it without walking the executions. */
import type { Execution, WfxState } from './state.js';

const fires = new WeakMap<WfxState, Map<string, string>>();

/** The key of a flow in an environment. */
const keyOf = (processId: string, environment: string) => `${processId} ${environment}`;

/** Notes the start of `inst` when an execution trigger made it (the reducer's call). */
export function noteTriggeredStart(state: WfxState, inst: Execution): void {
  if (inst.triggeredBy !== undefined) noteTriggeredStartAt(state, inst.processId, inst.environment, inst.startTime);
}

/** Notes a start by an execution trigger of flow `processId` in `environment` at `startTime` (an ISO time). */
export function noteTriggeredStartAt(state: WfxState, processId: string, environment: string, startTime: string): void {
  let map = fires.get(state);
  if (!map) fires.set(state, (map = new Map()));
  const key = keyOf(processId, environment);
  const seen = map.get(key);
  if (seen === undefined || startTime > seen) map.set(key, startTime);
}

/** The last start of flow `processId` in `environment` by an execution trigger, as noted; null: none seen. */
export function lastTriggeredStart(state: WfxState, processId: string, environment: string): string | null {
  return fires.get(state)?.get(keyOf(processId, environment)) ?? null;
}

/** Notes in `into` the starts noted in `from` (a step's draft committed to the live state, state/draft/). */
export function carryTriggerFires(from: WfxState, into: WfxState): void {
  const map = fires.get(from);
  if (map === undefined) return;
  for (const [key, startTime] of map) {
    let to = fires.get(into);
    if (!to) fires.set(into, (to = new Map()));
    const seen = to.get(key);
    if (seen === undefined || startTime > seen) to.set(key, startTime);
  }
  fires.delete(from);
}
