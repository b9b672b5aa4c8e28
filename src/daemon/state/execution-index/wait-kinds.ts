/** The kinds of the wait table's rows, and what it answers and reads (waits.ts). */

/** Wait kinds as a row holds them (0: a free row); an event's is its eventType. */
export const KINDS = ['', 'input', 'message', 'signal', 'job', 'timer', 'child', 'loop', 'tools', 'queue'] as const;
export const INPUT = 1;
/** The row kind of a message wait; a signal wait's is the next one. */
export const MESSAGE = 2;
export const SIGNAL = 3;
export const JOB = 4;
/** A message bucket's key when the wait has none (subscriptions.ts keys it the same way). */
export const NO_KEY = '\u0000';

/** A node waiting on an event, as `subscribers` answers: its execution, node and flow node ('' if unknown). */
export interface Subscriber {
  readonly id: string;
  readonly node: string;
  readonly nodeId: string;
}

/** A waiting input task, as `tasks` answers. */
export interface WaitingTask {
  readonly id: string;
  readonly node: string;
  readonly since: number;
  readonly assignee: string | null;
}

/** A job wait, as `jobs` answers. */
export interface WaitingJob {
  readonly id: string;
  readonly node: string;
  readonly notBefore: number | null;
  readonly lockedUntil: number | null;
}

/** What the wait table reads of the executions (the index's slots). */
export interface Owners {
  /** The id of the execution in `slot`. */
  idOf(slot: number): string;
  /** Compares the ids of two slots (negative: `a`'s id comes first). */
  compareIds(a: number, b: number): number;
  /** The correlation key of the execution in `slot` (set before its waits are added). */
  correlationOf(slot: number): string | null;
}

/** `ms`, or null for NaN (a column's none). */
export function orNull(ms: number): number | null {
  return Number.isNaN(ms) ? null : ms;
}

/** Strings in code unit order (as `<` compares them). */
export function textOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
