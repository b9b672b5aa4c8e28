/**
 * The scratch row the execution index writes an execution's fields through (execution-index.ts `attach`):
 * strings as their interned numbers, a location checked to fit the columns.
 */
import type { ExecutionSummary } from '../execution-summary.js';

/** Where an execution's document is: its execution segment, and its bytes there. */
export interface Location {
  readonly segment: number;
  readonly offset: number;
  readonly length: number;
}

/**
 * No place kept: the index's owner finds the document itself (the JSON store from the id
 * in its segments, PostgreSQL by the row's key).
 */
export const ELSEWHERE: Location = { segment: 0, offset: 0, length: 0 };

/** An execution as the execution index answers for it. */
export interface ExecutionIndexEntry {
  readonly summary: ExecutionSummary;
  readonly location: Location;
}

/** What `list` pages by: ids older than `after`, at most `limit`, optionally filtered. */
export interface ListQuery {
  readonly after?: string | null;
  readonly limit: number;
  readonly organization?: string;
  readonly processId?: string;
  readonly stateCd?: number;
}

/** Running executions of a flow, and those of them that only wait (no Active node, a wait). */
export interface FlowCounts {
  readonly running: number;
  readonly waitingOnly: number;
}

/** Locations are kept as 32-bit numbers: a segment's offset past 4 GiB is refused. */
const MAX_U32 = 0xffffffff;

/** An execution's fields as `attach` writes them, strings as their numbers (one scratch row per index). */
export interface CodedRow {
  org: number;
  proc: number;
  ver: number;
  env: number;
  flow: number;
  state: number;
  /** FLAG_* bits: started by a trigger, a child. */
  flags: number;
  startMs: number;
  active: number;
  correlation: string | null;
  /** Search attributes; undefined: none. */
  search: Readonly<Record<string, string>> | undefined;
  root: string | null;
  parent: string | null;
  dueMs: number | null;
  segment: number;
  offset: number;
  length: number;
}

/** Throws when the row's location does not fit the 32-bit columns. */
export function checkLocation(r: CodedRow): void {
  if (r.offset > MAX_U32 || r.length > MAX_U32 || r.segment > MAX_U32)
    throw new RangeError('a location past 4 GiB cannot be kept');
}

/** A fresh scratch row. */
export function emptyRow(): CodedRow {
  return {
    org: 0,
    proc: 0,
    ver: 0,
    env: 0,
    flow: 0,
    state: 0,
    flags: 0,
    startMs: 0,
    active: 0,
    correlation: null,
    search: undefined,
    root: null,
    parent: null,
    dueMs: null,
    segment: 0,
    offset: 0,
    length: 0,
  };
}

/**
 * An execution as the index's `walk` shows it: one object refilled for each, strings
 * decoded (interned: none made), its id and waits made only when asked (`idAt`, `waitsAt`).
 */
export interface WalkRow {
  slot: number;
  organization: string;
  processId: string;
  environment: string;
  stateCd: number;
  /** FLAG_* bits (execution-summary.ts). */
  flags: number;
  startMs: number;
  active: number;
  root: string | null;
  parent: string | null;
  /** Its waits, and how many of them are job waits. */
  waits: number;
  jobs: number;
}

/** A walk's row before the first execution. */
export function emptyWalkRow(): WalkRow {
  return {
    slot: -1,
    organization: '',
    processId: '',
    environment: '',
    stateCd: 0,
    flags: 0,
    startMs: 0,
    active: 0,
    root: null,
    parent: null,
    waits: 0,
    jobs: 0,
  };
}
