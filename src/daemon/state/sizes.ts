/**
 * What an execution holds, counted as the reducer applies its records: the JSON size of its
 * variables and of its log, and its live node instances (its parallel branches). The engine
 * checks its limits against these before a step spends the memory (engine/limits.ts); kept on
 * the execution, they cost a number each instead of a walk over the variables at every node.
 * An execution from a snapshot written before they existed has them counted on first use.
 */
import { assignOwn } from '../../shared/json-object.js';
import { jsonSize, numberSize } from '../../shared/json-size.js';
import { STATUS, type Execution, type LogEntry, type LogLine } from './state.js';

/**
 * A log line carries a copy of the variables (a node that set some, the start) only while the
 * log holds less than this: past it, lines keep their message and the variables are read from
 * the execution. Each copy is written out whole in snapshots, history and log streams. A
 * constant, not an option: the reducer must decide alike on every replay.
 */
export const LOG_VARIABLES_BYTES = 4 * 1024 * 1024;

/** The JSON size of `inst`'s variables (counted now if its record predates the count). */
export function variablesSize(inst: Execution): number {
  return inst.varSize ?? (inst.varSize = jsonSize(inst.variables));
}

/** The JSON size of `inst`'s log. */
export function logSize(inst: Execution): number {
  return inst.logSize ?? (inst.logSize = jsonSize(inst.logs));
}

/** `inst`'s node instances that are Active or Waiting: its tokens, each a parallel branch. */
export function liveNodes(inst: Execution): number {
  if (inst.liveNodes !== undefined) return inst.liveNodes;
  let n = 0;
  for (const id in inst.nodes) {
    const s = inst.nodes[id]!.statusCd;
    if (s === STATUS.ACTIVE || s === STATUS.WAITING) n++;
  }
  return (inst.liveNodes = n);
}

/** What merging a set of variables into an execution's would make: their size, and the size of what is set. */
export interface VariablesMeasure {
  /** The JSON size of the variables with the set merged in. */
  readonly total: number;
  /** The JSON size of the set's values (what its record writes). */
  readonly written: number;
}

/**
 * The JSON size `inst`'s variables would have with `set` merged into them (the values `set`
 * replaces taken out, its own put in), and of what `set` writes. Stops counting once either
 * is past `cap` (it is then over it). Pure.
 */
export function measureVariables(
  inst: Execution,
  set: Readonly<Record<string, unknown>>,
  cap = Number.POSITIVE_INFINITY,
): VariablesMeasure {
  let total = variablesSize(inst);
  let written = 0;
  const vars = inst.variables;
  for (const key in set) {
    if (!Object.hasOwn(set, key)) continue;
    if (Object.hasOwn(vars, key) && vars[key] !== undefined) total -= jsonSize(vars[key]) + key.length + 4;
    const value = set[key];
    if (value === undefined) continue;
    const size = jsonSize(value, cap) + key.length + 4;
    total += size;
    written += size;
    if (total > cap || written > cap) break;
  }
  return { total, written };
}

/** Merges `set` into `inst`'s variables (as assignOwn does) and counts their new size. */
export function setVariables(inst: Execution, set: Readonly<Record<string, unknown>>): void {
  inst.varSize = measureVariables(inst, set).total;
  assignOwn(inst.variables, set);
}

/**
 * Appends `line` to `inst`'s log and counts it; `variables`: the line carries a copy of the
 * execution's variables (counted at their size, not walked again).
 */
export function pushLog(inst: Execution, line: LogLine, variables: boolean): void {
  const size =
    typeof line === 'string'
      ? line.length + 3
      : variables
        ? lineSizeWithout(line) + variablesSize(inst)
        : jsonSize(line);
  inst.logSize = logSize(inst) + size;
  inst.logs.push(line);
}

/** Whether a new log line of `inst` may carry a copy of its variables (LOG_VARIABLES_BYTES). */
export function logKeepsVariables(inst: Execution): boolean {
  return logSize(inst) + variablesSize(inst) <= LOG_VARIABLES_BYTES;
}

/** A log line's size but for the variables it copies (an array's fifth item, an entry's `variables`). */
function lineSizeWithout(line: Exclude<LogLine, string>): number {
  if (Array.isArray(line)) {
    // [nodeInstanceId, level, message, ms, variables]: brackets, four commas, three quoted strings.
    // Read by index: a destructuring would make an iterator for every line.
    const ms = line[3] as number | string;
    const strings = (line[0] as string).length + (line[1] as string).length + (line[2] as string).length;
    return 12 + strings + (typeof ms === 'number' ? numberSize(ms) : ms.length + 2);
  }
  // An entry (the execution's last line): its fields but the variables, as JSON.
  const e = line as LogEntry;
  return 80 + e.nodeId.length + e.nodeName.length + e.nodeType.length + e.message.length + e.timestamp.length;
}

/** Counts a node instance becoming live (entered) or ending (completed, failed, cancelled, timed out). */
export function countLiveNode(inst: Execution, delta: 1 | -1): void {
  inst.liveNodes = liveNodes(inst) + delta;
}
