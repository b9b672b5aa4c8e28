/*
 * The executions list kept live from GET /events: which read an event asks for, and the list
 * once that read is back. Pure: the page (pages/executions-page.tsx) batches the reads
 * (row-reads.ts) and applies their answers here.
 */
import type { InstanceSummary } from '../../shared/api/process.js';
import { matchesFilters, type Filters } from './filters.js';

/** A lifecycle event of GET /events, the fields the list uses. */
export interface ListEvent {
  readonly type: string;
  readonly processInstanceId: string;
  readonly processId?: string;
}

/** What the list shows: a page of top-level executions and the children of the rows opened. */
export interface ListRows {
  /** Top-level executions, newest first. */
  readonly items: readonly InstanceSummary[];
  /** The cursor of the next page; null: every match is loaded. */
  readonly nextCursor: string | null;
  /** The children shown under an opened row, newest first, by the parent's id. */
  readonly children: Readonly<Record<string, readonly InstanceSummary[]>>;
}

/** A read of one execution: `refresh` a row on screen, `probe` one that may belong in the list. */
export interface RowRead {
  readonly id: string;
  readonly kind: 'refresh' | 'probe';
}

/** Whether execution `id` is a row on screen (top level or an opened row's child). Pure. */
export function onScreen(rows: ListRows, id: string): boolean {
  return (
    rows.items.some((e) => e.processInstanceId === id) ||
    Object.values(rows.children).some((list) => list.some((e) => e.processInstanceId === id))
  );
}

/**
 * The read `event` asks for: any PROCESS_* or NODE_* event of a row on screen re-reads it; a
 * PROCESS_STARTED of another execution of a flow the filters allow probes it (it may belong at
 * the top, or under an opened parent). Null: nothing to read. Pure.
 */
export function readFor(rows: ListRows, filters: Filters, event: ListEvent): RowRead | null {
  if (!/^(PROCESS|NODE)_/.test(event.type)) return null;
  if (onScreen(rows, event.processInstanceId)) return { id: event.processInstanceId, kind: 'refresh' };
  if (event.type !== 'PROCESS_STARTED') return null;
  // A child execution is shown under its parent whatever the filters say of its flow.
  const opened = Object.keys(rows.children).length > 0;
  if (!opened && filters.processId !== undefined && event.processId !== filters.processId) return null;
  return { id: event.processInstanceId, kind: 'probe' };
}

/** `list` with `e` replacing the row of the same id (the same list when it has none). */
function replaced(list: readonly InstanceSummary[], e: InstanceSummary): readonly InstanceSummary[] {
  const at = list.findIndex((x) => x.processInstanceId === e.processInstanceId);
  if (at < 0) return list;
  const copy = list.slice();
  copy[at] = e;
  return copy;
}

/** `list` (newest first) with `e` in its place by start time. */
function inserted(list: readonly InstanceSummary[], e: InstanceSummary): InstanceSummary[] {
  const at = list.findIndex((x) => x.startTime < e.startTime);
  const copy = list.slice();
  copy.splice(at < 0 ? copy.length : at, 0, e);
  return copy;
}

/**
 * The list once execution `e` was read for `read`. A refreshed row is replaced where it stands
 * (a row that no longer matches the filters stays until the list is loaded again, so nothing
 * moves under the reader's eyes). A probed execution that matches the filters is inserted in
 * start order, unless it belongs on a page not loaded yet; one whose parent is on screen is
 * counted in the parent's childCount, and shown under it when that row is opened. Pure.
 */
export function applyRead(rows: ListRows, filters: Filters, read: RowRead, e: InstanceSummary): ListRows {
  if (read.kind === 'refresh' || onScreen(rows, e.processInstanceId)) {
    const children: Record<string, readonly InstanceSummary[]> = {};
    for (const [parent, list] of Object.entries(rows.children)) children[parent] = replaced(list, e);
    return { ...rows, items: replaced(rows.items, e), children };
  }
  const parent = e.parentInstanceId;
  if (parent !== null) {
    if (!onScreen(rows, parent)) return rows;
    const count = (p: InstanceSummary) => (p.processInstanceId === parent ? { ...p, childCount: p.childCount + 1 } : p);
    const children: Record<string, readonly InstanceSummary[]> = {};
    for (const [id, list] of Object.entries(rows.children))
      children[id] = id === parent ? inserted(list, e).map(count) : list.map(count);
    return { ...rows, items: rows.items.map(count), children };
  }
  if (!matchesFilters(e, filters)) return rows;
  const last = rows.items.at(-1);
  if (rows.nextCursor !== null && last !== undefined && e.startTime < last.startTime) return rows;
  return { ...rows, items: inserted(rows.items, e) };
}
