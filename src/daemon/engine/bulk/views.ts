/**
 * Bulk operations as the API answers them: one with its progress, a page of them, a page of one's
 * results. Pure reads of the state.
 */
import type {
  BulkOutcome,
  BulkPage,
  BulkResult,
  BulkResultPage,
  BulkState,
  BulkView,
} from '../../../shared/api/index.js';
import { bulkCounts, type BulkLane, type BulkOperation } from '../../state/bulk.js';

/** `b` with its progress at `now`: counts summed over its lanes, and an ETA at the rate seen so far. Pure. */
export function bulkView(b: BulkOperation, now: Date): BulkView {
  const { total, done, skipped, selected } = bulkCounts(b);
  const pending = total - done - skipped;
  const elapsed = (now.getTime() - Date.parse(b.createdAt)) / 1000;
  const applied = done + skipped;
  const etaSeconds =
    b.state === 'RUNNING' && selected && applied > 0 && elapsed > 0 ? Math.ceil(pending / (applied / elapsed)) : null;
  return {
    bulkId: b.bulkId,
    operation: b.operation,
    params: b.params,
    query: b.query,
    organization: b.organization,
    state: b.state,
    total,
    selected,
    done,
    skipped,
    pending,
    createdAt: b.createdAt,
    startedBefore: b.startedBefore,
    finishedAt: b.finishedAt,
    by: b.by,
    cancelledBy: b.cancelledBy,
    error: b.error,
    etaSeconds,
  };
}

/**
 * The operations of `bulks` that `organization` may see (null: all), in `state` if given, newest
 * first, the page of `limit` after `cursor` (the last id of the previous page). Pure.
 */
export function bulkPage(
  bulks: Readonly<Record<string, BulkOperation>>,
  q: { organization: string | null; state?: BulkState; limit: number; cursor?: string },
  now: Date,
): BulkPage {
  const all = Object.values(bulks)
    .filter(
      (b) =>
        (q.organization === null || b.organization === q.organization) &&
        (q.state === undefined || b.state === q.state) &&
        (q.cursor === undefined || b.bulkId < q.cursor),
    )
    .sort((a, b) => (a.bulkId < b.bulkId ? 1 : -1));
  const page = all.slice(0, q.limit);
  return {
    items: page.map((b) => bulkView(b, now)),
    nextCursor: all.length > q.limit ? page.at(-1)!.bulkId : null,
  };
}

/**
 * The results of `b` so far (executions done or skipped; those not reached yet have none),
 * newest execution first, with `outcome` if given, the page of `limit` after `cursor` (the
 * last execution id of the previous page). Each lane lists its executions newest first: the
 * page merges them. Pure.
 */
export function bulkResults(
  b: BulkOperation,
  q: { outcome?: BulkOutcome; limit: number; cursor?: string },
): BulkResultPage {
  const heads = Object.values(b.lanes).map((lane) => ({ lane, at: firstBelow(lane, q.cursor) }));
  const outcomeOf = (lane: BulkLane, id: string): BulkOutcome => (Object.hasOwn(lane.skipped, id) ? 'SKIPPED' : 'DONE');
  const items: BulkResult[] = [];
  let more = false;
  for (;;) {
    let best: (typeof heads)[number] | null = null;
    for (const h of heads) {
      while (h.at < h.lane.next && q.outcome !== undefined && outcomeOf(h.lane, h.lane.ids[h.at]!) !== q.outcome)
        h.at++;
      if (h.at < h.lane.next && (best === null || h.lane.ids[h.at]! > best.lane.ids[best.at]!)) best = h;
    }
    if (best === null) break;
    if (items.length === q.limit) {
      more = true;
      break;
    }
    const id = best.lane.ids[best.at++]!;
    const outcome = outcomeOf(best.lane, id);
    items.push({ processInstanceId: id, outcome, code: outcome === 'SKIPPED' ? best.lane.skipped[id]! : null });
  }
  return { items, nextCursor: more ? items.at(-1)!.processInstanceId : null };
}

/** The first index of `lane.ids` (newest first) below `cursor`: a binary search. Pure. */
function firstBelow(lane: BulkLane, cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  let lo = 0;
  let hi = lane.ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (lane.ids[mid]! >= cursor) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
