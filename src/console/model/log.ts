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
