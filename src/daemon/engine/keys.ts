/**
 * The engine's keys for what it keeps per node instance outside the state: armed timers and
 * work under way. Each is a string (a Map key, cheap to hash and compare) branded by its kind,
 * made and read back only here, so no caller builds or splits one. Node instance ids never
 * hold `|` (`n1`, `n2`, ...) and neither do execution ids (UUIDs) or flow node ids (validated),
 * so the parts are read back exactly.
 */

declare const nodeKeyBrand: unique symbol;
declare const boundaryKeyBrand: unique symbol;

/** One node instance of one execution: its work under way, or its own timer (a wait's `dueAt`). */
export type NodeKey = string & { readonly [nodeKeyBrand]: true };

/** A timer boundary event (`boundaryId`) attached to one node instance of one execution. */
export type BoundaryKey = string & { readonly [boundaryKeyBrand]: true };

declare const wakeKeyBrand: unique symbol;

/**
 * The one timer of the executions not in memory: due at the earliest of their timers (the
 * cold side's `nextDue`); when it comes, those due are read back and their timers armed exactly.
 */
export type WakeKey = string & { readonly [wakeKeyBrand]: true };

/** What the engine's timer queue is keyed by. */
export type TimerKey = NodeKey | BoundaryKey | WakeKey;

/** The wake key: no execution id is `*`. */
export const COLD_DUE = '*|*' as WakeKey;

/** What a timer key names: a node instance, and the boundary event for a boundary's timer. */
export interface TimerTarget {
  readonly instanceId: string;
  readonly nodeInstanceId: string;
  /** The timer boundary event's node id; undefined for the node's own timer. */
  readonly boundaryId: string | undefined;
}

/** The key of node instance `nodeInstanceId` of execution `instanceId`. Pure. */
export function nodeKey(instanceId: string, nodeInstanceId: string): NodeKey {
  return `${instanceId}|${nodeInstanceId}` as NodeKey;
}

/** The key of the timer boundary event `boundaryId` on node instance `nodeInstanceId`. Pure. */
export function boundaryKey(instanceId: string, nodeInstanceId: string, boundaryId: string): BoundaryKey {
  return `${instanceId}|${nodeInstanceId}|${boundaryId}` as BoundaryKey;
}

/** The parts of a timer key (the inverse of nodeKey and boundaryKey). Pure. */
export function timerTarget(key: TimerKey): TimerTarget {
  const a = key.indexOf('|');
  const b = key.indexOf('|', a + 1);
  return b === -1
    ? { instanceId: key.slice(0, a), nodeInstanceId: key.slice(a + 1), boundaryId: undefined }
    : { instanceId: key.slice(0, a), nodeInstanceId: key.slice(a + 1, b), boundaryId: key.slice(b + 1) };
}
