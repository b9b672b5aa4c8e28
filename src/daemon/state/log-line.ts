/**
 * The execution log's line format (LogLine in state.ts): the packed form the reducer writes
 * (appendLog), and the seed's fields (LogEntry) read back from any form a snapshot or journal may hold.
 */
import type { Execution, LogEntry, LogLine, NodeInstance } from './state.js';
import { logKeepsVariables, pushLog } from './sizes.js';

/** The packed form of a log line without variables (see LogLine). */
export function packedLogLine(nodeInstanceId: string, level: LogEntry['level'], ms: number, message: string): string {
  return `${nodeInstanceId} ${level} ${ms} ${message}`;
}

/** Milliseconds since the epoch of an ISO instant; the last two asked are remembered (a step asks for the same few again and again). */
export function isoMs(iso: string): number {
  if (iso === lastIso[0]) return lastMs[0]!;
  if (iso === lastIso[1]) return lastMs[1]!;
  const ms = Date.parse(iso);
  lastIso[1] = lastIso[0]!;
  lastMs[1] = lastMs[0]!;
  lastIso[0] = iso;
  lastMs[0] = ms;
  return ms;
}
const lastIso: string[] = ['', ''];
const lastMs: number[] = [0, 0];

/**
 * Appends a line to an execution's log (the reducer's, as records change it). The variables
 * snapshot is a shallow copy: variables are only ever replaced at the top level, never changed
 * in place, so nested values can be shared.
 */
export function appendLog(
  inst: Execution,
  node: Pick<NodeInstance, 'id'> | null,
  level: LogEntry['level'],
  message: string,
  at: string,
  withVariables = false,
): void {
  const ms = isoMs(at) - isoMs(inst.startTime);
  // A copy of the variables only while the log is small enough (sizes.ts, LOG_VARIABLES_BYTES).
  const copy = withVariables && logKeepsVariables(inst);
  if (withVariables && !copy && inst.varsUnlogged === undefined) inst.varsUnlogged = inst.logs.length;
  pushLog(
    inst,
    copy
      ? [node?.id ?? '', level, message, ms, { ...inst.variables }]
      : packedLogLine(node?.id ?? '', level, ms, message),
    copy,
  );
}

/**
 * The node instance a log line names ('' for the execution itself; null for a line kept whole,
 * which names a node by its id only), its message and the variables it copies: read without
 * making the seed's fields.
 */
export function lineParts(line: LogLine): {
  nodeInstanceId: string | null;
  message: string;
  variables: Record<string, unknown> | undefined;
} {
  if (typeof line === 'string') {
    const a = line.indexOf(' ');
    const c = line.indexOf(' ', line.indexOf(' ', a + 1) + 1);
    return { nodeInstanceId: line.slice(0, a), message: line.slice(c + 1), variables: undefined };
  }
  if (Array.isArray(line)) {
    const l = line as readonly [string, string, string, unknown, Record<string, unknown>?];
    return { nodeInstanceId: l[0], message: l[2], variables: l[4] };
  }
  const e = line as LogEntry;
  return { nodeInstanceId: null, message: e.message, variables: e.variables };
}

/** A log line with the seed's fields. */
export function logEntry(inst: Pick<Execution, 'nodes' | 'processName' | 'startTime'>, line: LogLine): LogEntry {
  if (typeof line === 'string') {
    const a = line.indexOf(' ');
    const b = line.indexOf(' ', a + 1);
    const c = line.indexOf(' ', b + 1);
    return entryOf(
      inst,
      line.slice(0, a),
      line.slice(a + 1, b) as LogEntry['level'],
      line.slice(c + 1),
      Number(line.slice(b + 1, c)),
      undefined,
    );
  }
  if (!Array.isArray(line)) return line as LogEntry;
  const [at, level, message, time, variables] = line as readonly [
    string,
    LogEntry['level'],
    string,
    number | string,
    Record<string, unknown>?,
  ];
  return entryOf(inst, at, level, message, time, variables);
}

/** The seed's fields of a log line's parts: the node looked up by its instance, the time made an ISO instant. */
function entryOf(
  inst: Pick<Execution, 'nodes' | 'processName' | 'startTime'>,
  at: string,
  level: LogEntry['level'],
  message: string,
  time: number | string,
  variables: Record<string, unknown> | undefined,
): LogEntry {
  const node = at === '' ? undefined : inst.nodes[at];
  const timestamp = typeof time === 'string' ? time : new Date(isoMs(inst.startTime) + time).toISOString();
  // Literals without a spread: one that starts with a spread is slow for every field after it
  // (see extensibleCopy), and a log can be thousands of lines.
  const nodeId = node ? node.nodeId : '';
  const nodeName = node ? node.nodeName : inst.processName;
  const nodeType = node ? node.nodeType : 'process';
  return variables === undefined
    ? { nodeId, nodeName, nodeType, message, level, timestamp }
    : { nodeId, nodeName, nodeType, message, level, timestamp, variables };
}

/** Every log line of an execution with the seed's fields. */
export function logEntries(inst: Pick<Execution, 'nodes' | 'processName' | 'startTime' | 'logs'>): LogEntry[] {
  return inst.logs.map((line) => logEntry(inst, line));
}
