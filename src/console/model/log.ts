/*
 * An execution's log as the page holds it, fed by the log stream (SSE): each entry's sequence is
 * its event id, so an entry sent again after a reconnect (EventSource resends Last-Event-ID; a
 * stream opened anew replays from the start) is kept once.
 */
import type { LogEntry } from '../../shared/api/process.js';

/** The log so far. */
export interface LogState {
  /** Entries in sequence order, each once. */
  readonly entries: readonly { readonly seq: number; readonly entry: LogEntry }[];
  /** The highest sequence held (0: none). */
  readonly last: number;
  /** The stream said `end`: the execution finished and every entry arrived. */
  readonly ended: boolean;
}

/** A log with nothing in it yet. */
export const EMPTY_LOG: LogState = { entries: [], last: 0, ended: false };

/** One entry as the stream delivered it: its sequence (the SSE id) and its data. */
export interface LogArrival {
  readonly seq: number;
  readonly entry: LogEntry;
}

/**
 * The log with `arrivals` added in order (the stream's entries since the last call, taken in
 * at most once per frame): an entry at or below the last one held is one seen already (a
 * replay) and is dropped, as is one whose sequence is not a positive integer. Pure; the same
 * log when nothing is new.
 */
export function addEntries(log: LogState, arrivals: readonly LogArrival[]): LogState {
  let last = log.last;
  const fresh: LogArrival[] = [];
  for (const a of arrivals) {
    if (!Number.isInteger(a.seq) || a.seq <= last) continue;
    fresh.push(a);
    last = a.seq;
  }
  return fresh.length === 0 ? log : { entries: log.entries.concat(fresh), last, ended: log.ended };
}

/** The log once the stream said `end`. Pure. */
export function endLog(log: LogState): LogState {
  return log.ended ? log : { ...log, ended: true };
}

/** What a node's latest run found and left, as far as the log's copies of the variables tell. */
export interface NodeVariables {
  /** The variables when it started: the last copy logged before its `started` line; null when none was kept. */
  readonly in: Record<string, unknown> | null;
  /** The variables it set or changed (a value that differs from `in`), from the copy its own lines logged; null when none. */
  readonly set: Record<string, unknown> | null;
}

/**
 * The variables node `nodeId`'s latest run began with and set, read from the log: the daemon
 * logs a copy of the execution's variables with each line that changed them (while the log is
 * small enough), so the copy before the node's `started` line is what it found, and the last
 * copy on its own lines after is what it left. Pure.
 */
export function nodeVariables(log: LogState, nodeId: string): NodeVariables {
  const entries = log.entries;
  let start = -1;
  for (let i = entries.length - 1; i >= 0 && start < 0; i--) {
    const e = entries[i]!.entry;
    if (e.nodeId === nodeId && e.message === 'started') start = i;
  }
  if (start < 0) return { in: null, set: null };
  let found: Record<string, unknown> | null = null;
  for (let i = start - 1; i >= 0 && found === null; i--) found = entries[i]!.entry.variables ?? null;
  let left: Record<string, unknown> | null = null;
  for (let i = start + 1; i < entries.length; i++) {
    const e = entries[i]!.entry;
    if (e.nodeId !== nodeId) continue;
    if (e.message === 'started') break;
    if (e.variables) left = e.variables;
  }
  if (left === null) return { in: found, set: null };
  const set: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(left))
    if (found === null || JSON.stringify(found[k]) !== JSON.stringify(v)) set[k] = v;
  return { in: found, set: Object.keys(set).length > 0 ? set : null };
}
