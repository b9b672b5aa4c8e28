/**
 * What a bulk operation selects, and how long a finished one is kept: pure functions of the
 * state, shared by the step (step/bulk.ts) and the operations' facade (bulk-operations.ts).
 */
import type { BulkOperation } from '../../state/bulk.js';
import type { Execution } from '../../state/state.js';
import type { ExecutionQuery } from '../execution-filter.js';
import { executionQueryOf } from '../execution-query.js';

/** Finished operations kept for their results, at most (the oldest finished are forgotten first). */
export const BULKS_KEPT = 100;

/** Executions' results kept over the finished operations, at most (an operation's are kept or forgotten whole). */
export const BULK_RESULTS_KEPT = 1_000_000;

/** The executions `bulk` selects: its query, in its organization, started before its bound. Pure. */
export function bulkSelection(
  bulk: Pick<BulkOperation, 'query' | 'organization' | 'startedBefore'>,
): Omit<ExecutionQuery, 'limit'> {
  return { ...executionQueryOf(bulk.query, bulk.organization), startedBefore: Date.parse(bulk.startedBefore) };
}

/** Whether an operation of `organization` (null: every one) may touch `inst`. Pure. */
export function isVisible(inst: Execution, organization: string | null): boolean {
  return organization === null || inst.organization === organization;
}

/**
 * The finished operations of `bulks` to forget as a new one is created: all but the newest
 * finished ones within BULKS_KEPT and BULK_RESULTS_KEPT (running ones are never forgotten). Pure.
 */
export function retiredBulks(bulks: Readonly<Record<string, BulkOperation>>): string[] {
  const finished = Object.values(bulks)
    .filter((b) => b.state !== 'RUNNING')
    .sort((a, b) => (a.bulkId < b.bulkId ? 1 : -1));
  const retired: string[] = [];
  let kept = 0;
  let results = 0;
  for (const b of finished) {
    const size = Object.values(b.lanes).reduce((n, lane) => n + lane.ids.length, 0);
    // Room for the one being created: BULKS_KEPT in all once it finishes.
    if (kept + 1 < BULKS_KEPT && results + size <= BULK_RESULTS_KEPT) {
      kept++;
      results += size;
    } else retired.push(b.bulkId);
  }
  return retired;
}
