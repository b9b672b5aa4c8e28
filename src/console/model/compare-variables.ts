/*
 * The variables of two runs set against each other: what one run's log says they were when a
 * node was entered and when it was left (the daemon logs a copy of the execution's variables with
 * each line that changed them, while the log is small enough, as replay reads them), and which
 * differ between the runs. Pure.
 */
import type { LogEntry } from '../../shared/api/process.js';

/** How a variable differs from run A to run B: only B has it, only A has it, or both with other values. */
export type ChangeKind = 'added' | 'removed' | 'changed';

/** One variable that differs between the runs. */
export interface VariableChange {
  readonly name: string;
  readonly kind: ChangeKind;
  /** Its value in run A (absent: A has no such variable). */
  readonly a?: unknown;
  /** Its value in run B (absent: B has no such variable). */
  readonly b?: unknown;
}

/** The variables around a node's last visit in one run: null where the log kept no copy to tell. */
export interface VisitVariables {
  /** When the visit started: the last copy logged before its `started` line. */
  readonly entry: Record<string, unknown> | null;
  /** When it ended: the last copy logged up to its last line (null while it runs). */
  readonly exit: Record<string, unknown> | null;
}

/** A value's JSON text with object keys sorted, so that key order does not make two values differ. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : 1)))
      : v,
  );
}

/**
 * The variables that differ from `a` to `b`, by name in alphabetical order: `added` (in b only),
 * `removed` (in a only), `changed` (another value, key order aside). `error` (a failed run's
 * failure, not a variable) is left out. Pure.
 */
export function variableChanges(
  a: Readonly<Record<string, unknown>>,
  b: Readonly<Record<string, unknown>>,
): VariableChange[] {
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((n) => n !== 'error').sort();
  const changes: VariableChange[] = [];
  for (const name of names) {
    const inA = Object.hasOwn(a, name);
    const inB = Object.hasOwn(b, name);
    if (inA && !inB) changes.push({ name, kind: 'removed', a: a[name] });
    else if (!inA && inB) changes.push({ name, kind: 'added', b: b[name] });
    else if (canonical(a[name]) !== canonical(b[name])) changes.push({ name, kind: 'changed', a: a[name], b: b[name] });
  }
  return changes;
}

/**
 * Whether the copies in `entries` run to the end: the last copy equals the variables the run has
 * now (`finalVariables`, its `data`). Past a size the daemon stops copying them into the log; a
 * copy read after that would be stale. True when the log holds no copy at all to compare (a run
 * started without variables that never set any). Pure.
 */
export function copiesComplete(
  entries: readonly LogEntry[],
  finalVariables: Readonly<Record<string, unknown>>,
): boolean {
  for (let i = entries.length - 1; i >= 0; i--) {
    const v = entries[i]!.variables;
    if (v !== undefined) return variableChanges(v, finalVariables).length === 0;
  }
  return Object.keys(finalVariables).filter((k) => k !== 'error').length === 0;
}

/**
 * The variables when node `nodeId`'s last visit started and ended, from a run's log `entries`
 * (in order). A visit is the lines of the node from its `started` line to the next one. When the
 * copies stopped before the end (`complete` false), a value read from the last copy for a visit
 * that started or ended after it is unknown (null). Not visited: both null. Pure.
 */
export function visitVariables(entries: readonly LogEntry[], nodeId: string, complete = true): VisitVariables {
  let start = -1;
  for (let i = entries.length - 1; i >= 0 && start < 0; i--) {
    const e = entries[i]!;
    if (e.nodeId === nodeId && e.message === 'started') start = i;
  }
  if (start < 0) return { entry: null, exit: null };
  let last = start;
  let ended = false;
  for (let i = start + 1; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.nodeId !== nodeId) continue;
    if (e.message === 'started') break;
    last = i;
    ended = endsVisit(e.message);
  }
  let lastCopy = -1;
  for (let i = entries.length - 1; i >= 0 && lastCopy < 0; i--) if (entries[i]!.variables) lastCopy = i;
  const copyAt = (upTo: number): Record<string, unknown> | null => {
    // After the last copy, an incomplete log cannot say what changed since.
    if (!complete && upTo > lastCopy) return null;
    for (let i = upTo; i >= 0; i--) {
      const v = entries[i]!.variables;
      if (v !== undefined) return v;
    }
    return null;
  };
  return { entry: copyAt(start - 1), exit: ended ? copyAt(last) : null };
}

/** A node's log line that says its visit is over: completed, failed, cancelled, timed out. */
function endsVisit(message: string): boolean {
  return /^(completed|failed|cancelled|timed out)\b/.test(message);
}
