/*
 * Bulk operations as the console asks for and shows them: the list's filters as the selection
 * (the same names as GET /process/instances and POST /process/bulk's `query`), an operation's
 * body from what the dialog holds, and an operation's progress in words.
 */
import type { BulkOperationName, BulkQuery, BulkRequest, BulkView } from '../../shared/api/bulk.js';
import { FILTER_KEYS, type Filters } from './filters.js';

/** Each operation in words: the menu's label and the verb of its button. */
export const OPERATIONS: Readonly<Record<BulkOperationName, { readonly label: string; readonly verb: string }>> = {
  cancel: { label: 'Cancel', verb: 'Cancel' },
  retry: { label: 'Retry (failed ones, where they failed)', verb: 'Retry' },
  replay: { label: 'Replay from the start', verb: 'Replay' },
  move: { label: 'Move to a version (running ones)', verb: 'Move' },
};

/** The selection the list's filters make, as a bulk operation's query. Pure. */
export function bulkQueryOf(filters: Filters): BulkQuery {
  const query: Record<string, string | string[]> = {};
  for (const key of FILTER_KEYS) {
    const value = filters[key];
    // The wire's `where` is a list (each must hold); the console's filter is one pair.
    if (value !== undefined && value !== '') query[key] = key === 'where' ? [value] : value;
  }
  return query as BulkQuery;
}

/** What the dialog holds: the operation and its parameters as typed. */
export interface BulkChoice {
  readonly operation: BulkOperationName;
  /** Variables set first (retry) or over the start variables (replay), as JSON text; empty for none. */
  readonly dataText: string;
  /** The version a move moves to. */
  readonly version: string;
}

/**
 * The body of POST /process/bulk for `choice` over `query`, or why it cannot be sent (the
 * variables are not a JSON object, a move names no version). Pure.
 */
export function bulkBody(
  choice: BulkChoice,
  query: BulkQuery,
  dryRun: boolean,
): { readonly ok: true; readonly body: BulkRequest } | { readonly ok: false; readonly message: string } {
  const extra = dryRun ? { dryRun: true, sample: 10 } : {};
  switch (choice.operation) {
    case 'cancel':
      return { ok: true, body: { operation: 'cancel', query, ...extra } };
    case 'move':
      if (!/^[0-9]+$/.test(choice.version.trim())) return { ok: false, message: 'Choose the version to move them to.' };
      return { ok: true, body: { operation: 'move', query, params: { version: choice.version.trim() }, ...extra } };
    case 'retry':
    case 'replay': {
      const text = choice.dataText.trim();
      let data: unknown = undefined;
      if (text !== '') {
        try {
          data = JSON.parse(text);
        } catch {
          data = null;
        }
        if (typeof data !== 'object' || data === null || Array.isArray(data))
          return { ok: false, message: 'The variables must be a JSON object, such as {"token": "new"}.' };
      }
      const params = data === undefined ? {} : { data: data as Record<string, unknown> };
      return { ok: true, body: { operation: choice.operation, query, params, ...extra } };
    }
  }
}

/** How far an operation is: `12 of 30 executions (40%): 10 done, 2 skipped, 18 to go`. Pure. */
export function progressWords(v: BulkView): string {
  const reached = v.done + v.skipped;
  const percent = v.total === 0 ? 100 : Math.floor((reached / v.total) * 100);
  const parts = [`${v.done} done`, `${v.skipped} skipped`];
  if (v.pending > 0) parts.push(`${v.pending} ${v.state === 'RUNNING' ? 'to go' : 'not reached'}`);
  return `${reached} of ${v.total} execution${v.total === 1 ? '' : 's'} (${percent}%): ${parts.join(', ')}`;
}

/** The words of a bulk operation's state. */
export const BULK_STATE_WORDS: Readonly<Record<BulkView['state'], string>> = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  CANCELLED: 'cancelled',
  FAILED: 'failed',
};

/** The selection in words: `the top-level executions with state FAILED, processId …`, or every one. Pure. */
export function selectionWords(filters: Filters): string {
  const set = FILTER_KEYS.filter((k) => filters[k] !== undefined).map((k) => `${k} ${filters[k]}`);
  return set.length === 0
    ? 'every top-level execution this session may see'
    : `the top-level executions with ${set.join(', ')}`;
}
