/* The task inbox's filters and what a lifecycle event means to it. Pure. */
import type { WaitingTask } from '../../shared/api/tasks.js';

/** The inbox's filters, as the page's query says them (`?processId=&q=&age=`). */
export interface TaskFilters {
  /** One flow's tasks (the daemon filters). */
  readonly processId: string;
  /** Words each shown task's title, node, flow, correlation key or assignee holds (any case). */
  readonly q: string;
  /** Waiting at least this long: a key of AGES, '' any. */
  readonly age: string;
}

/** The ages the filter offers: key -> milliseconds and words. */
export const AGES: Readonly<Record<string, { readonly ms: number; readonly label: string }>> = {
  '5m': { ms: 5 * 60_000, label: 'over 5 minutes' },
  '1h': { ms: 3_600_000, label: 'over an hour' },
  '1d': { ms: 86_400_000, label: 'over a day' },
  '7d': { ms: 7 * 86_400_000, label: 'over a week' },
};

/** The filters of a query string. */
export function taskFiltersFromQuery(query: URLSearchParams): TaskFilters {
  const age = query.get('age') ?? '';
  return { processId: query.get('processId') ?? '', q: query.get('q') ?? '', age: AGES[age] ? age : '' };
}

/** The query string (`?...`, or '' for none) of the filters. */
export function taskFiltersToQuery(f: TaskFilters): string {
  const q = new URLSearchParams();
  if (f.processId) q.set('processId', f.processId);
  if (f.q.trim()) q.set('q', f.q.trim());
  if (f.age) q.set('age', f.age);
  const text = q.toString();
  return text ? `?${text}` : '';
}

/** The tasks the text and age filters keep, in their order (the flow is filtered by the daemon). */
export function filterTasks(tasks: readonly WaitingTask[], f: TaskFilters, now: number): WaitingTask[] {
  const words = f.q.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const age = AGES[f.age]?.ms ?? 0;
  return tasks.filter((t) => {
    if (age > 0 && now - Date.parse(t.waitingSince) < age) return false;
    if (words.length === 0) return true;
    const text = [t.formTitle, t.nodeName, t.processName, t.correlationKey, t.assignee]
      .filter((s): s is string => typeof s === 'string')
      .join(' ')
      .toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** The node types that wait for a person. */
const TASK_NODES = new Set(['inputNode', 'userTask']);

/**
 * Whether a lifecycle event may change the inbox: a task node began waiting, or something
 * happened to an execution a listed task belongs to (answered, timed out, cancelled, ended).
 * `listed` is null while a read is under way: its answer may have been taken before the event,
 * so any execution's event may concern a task it will list.
 */
export function eventTouchesTasks(
  e: { readonly type: string; readonly processInstanceId: string; readonly nodeType?: unknown },
  listed: ReadonlySet<string> | null,
): boolean {
  if (e.type === 'NODE_WAITING') return typeof e.nodeType !== 'string' || TASK_NODES.has(e.nodeType);
  if (e.type === 'NODE_STARTED') return false;
  return listed === null || listed.has(e.processInstanceId);
}

/** The deep link of a task: the inbox with its form open. */
export function taskHref(t: Pick<WaitingTask, 'processInstanceId' | 'nodeId'>): string {
  return `/tasks/${encodeURIComponent(t.processInstanceId)}/${encodeURIComponent(t.nodeId)}`;
}
