/*
 * The executions list's filters and the URL: every filter lives in the page's query string
 * (a filtered list is a link), with the same names as GET /process/instances takes them.
 */
import type { Environment } from '../../shared/api/common.js';
import { WAITING_FOR, type InstanceSummary, type StateName, type WaitingFor } from '../../shared/api/process.js';
import { parseWhere } from '../../shared/flow/search-attributes.js';
import { STATE_NAMES } from './states.js';

/** The environments, in the order the filters list them. */
export const ENVIRONMENT_NAMES = ['PRODUCTION', 'DEVELOPMENT'] as const satisfies readonly Environment[];

/** The list's filters; an absent one does not filter. Dates are ISO date-times. */
export interface Filters {
  readonly processId?: string;
  readonly version?: string;
  readonly environment?: Environment;
  readonly state?: StateName;
  readonly errorCode?: string;
  /** The node failed executions failed at (not in the list's items: only the daemon filters by it). */
  readonly failedNode?: string;
  readonly correlationKey?: string;
  /** Running executions waiting for this (`any`: anything) at some node. */
  readonly waiting?: WaitingFor | 'any';
  /** A search attribute, `name=value` (a flow's `search:`). */
  readonly where?: string;
  readonly startedAfter?: string;
  readonly startedBefore?: string;
}

/** The filters' names, in the order the query string writes them. */
export const FILTER_KEYS = [
  'processId',
  'version',
  'environment',
  'state',
  'errorCode',
  'failedNode',
  'correlationKey',
  'waiting',
  'where',
  'startedAfter',
  'startedBefore',
] as const satisfies readonly (keyof Filters)[];

/** The `waiting` filter's choices, as the filters list them. */
export const WAITING_CHOICES: ReadonlyArray<readonly [WaitingFor | 'any', string]> = [
  ['person', 'for a person'],
  ['event', 'for an event'],
  ['timer', 'for a timer'],
  ['worker', 'for a worker'],
  ['child', 'for child executions'],
  ['queue', 'in the queue'],
  ['any', 'for anything'],
];

const isDate = (v: string) => /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v));
/** Whether a query value is one the filter takes (anything else in a URL is left out). */
const VALID: Record<keyof Filters, (v: string) => boolean> = {
  processId: (v) => v.length > 0 && v.length <= 200,
  version: (v) => /^[0-9]+$/.test(v),
  environment: (v) => (ENVIRONMENT_NAMES as readonly string[]).includes(v),
  state: (v) => (STATE_NAMES as readonly string[]).includes(v),
  errorCode: (v) => v.length > 0 && v.length <= 200,
  failedNode: (v) => v.length > 0 && v.length <= 200,
  correlationKey: (v) => v.length > 0 && v.length <= 1000,
  waiting: (v) => v === 'any' || (WAITING_FOR as readonly string[]).includes(v),
  where: (v) => v.length <= 241 && !('error' in parseWhere(v)),
  startedAfter: isDate,
  startedBefore: isDate,
};

/** The filters a query string holds; values that are not valid are left out. Pure. */
export function filtersFromQuery(query: URLSearchParams | Readonly<Record<string, string | undefined>>): Filters {
  const get = (k: string) => (query instanceof URLSearchParams ? query.get(k) : query[k]) ?? undefined;
  const filters: Record<string, string> = {};
  for (const key of FILTER_KEYS) {
    const value = get(key)?.trim();
    if (value !== undefined && VALID[key](value)) filters[key] = value;
  }
  return filters as Filters;
}

/** The query string of `filters` (`?processId=a&state=FAILED`, or '' with none), keys in FILTER_KEYS order. Pure. */
export function filtersToQuery(filters: Filters, extra: Readonly<Record<string, string>> = {}): string {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = filters[key];
    if (value !== undefined && value !== '') params.set(key, value);
  }
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** Whether `filters` filter anything. Pure. */
export function hasFilters(filters: Filters): boolean {
  return FILTER_KEYS.some((k) => filters[k] !== undefined);
}

/**
 * Whether an execution belongs in the list these filters make (a top-level execution; a child
 * belongs under its parent). A field the answer lacks does not exclude it. Pure.
 */
export function matchesFilters(e: InstanceSummary, filters: Filters): boolean {
  if (e.parentInstanceId !== null) return false;
  if (filters.processId !== undefined && e.processId !== filters.processId) return false;
  if (filters.version !== undefined && e.processVersion !== filters.version) return false;
  if (filters.environment !== undefined && e.environment !== filters.environment) return false;
  if (filters.state !== undefined && e.state !== filters.state) return false;
  if (filters.errorCode !== undefined && e.errorCode !== filters.errorCode) return false;
  if (filters.correlationKey !== undefined && e.correlationKey !== filters.correlationKey) return false;
  if (filters.waiting !== undefined) {
    const want = filters.waiting;
    if (e.state !== 'RUNNING' || !(e.waits ?? []).some((w) => want === 'any' || w.for === want)) return false;
  }
  if (filters.where !== undefined) {
    const pair = parseWhere(filters.where);
    if ('error' in pair || e.search?.[pair.name] !== pair.value) return false;
  }
  const started = Date.parse(e.startTime);
  if (filters.startedAfter !== undefined && started < Date.parse(filters.startedAfter)) return false;
  if (filters.startedBefore !== undefined && started >= Date.parse(filters.startedBefore)) return false;
  return true;
}

/** An ISO date-time as a `datetime-local` input's value, in the browser's zone (`2026-01-31T09:05`). Pure. */
export function toLocalInput(iso: string | undefined): string {
  if (iso === undefined) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A `datetime-local` input's value as an ISO date-time (undefined when empty or not a date). Pure. */
export function fromLocalInput(local: string): string | undefined {
  if (local === '') return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}
