/**
 * Bulk operations as the live state keeps them (state.bulks): what each applies to which
 * executions, and how far it has come. They are part of the commons (commons.ts): on a database
 * cut into partitions they live in the shared partition, so a chunk's progress is journaled in
 * the same INSERT as the records it made in its executions' partition.
 */
import type { BulkOperationName, BulkQuery, BulkState } from '../../shared/api/index.js';
import type { ErrorCode } from '../../shared/errors.js';

/**
 * One lane of a bulk operation: the executions it selected in one partition (0 on a store that
 * is not cut into partitions), newest first, and how far it has come. `ids[0..next)` have a
 * result: done, unless `skipped` names a code. A lane is written only by its partition's holder.
 */
export interface BulkLane {
  readonly ids: readonly string[];
  /** `ids[0..next)` have been applied or skipped. */
  readonly next: number;
  /** Executions passed over, with the code of why (INSTANCE_NOT_RUNNING, ...). */
  readonly skipped: Readonly<Record<string, ErrorCode>>;
  /** When the lane was selected or last advanced (ETA). */
  readonly at: string;
}

/** A bulk operation: its definition, fixed at creation, its state, and its lanes by partition. */
export interface BulkOperation {
  readonly bulkId: string;
  /** Whose executions it may touch; null: every organization's (a system key's). */
  readonly organization: string | null;
  readonly operation: BulkOperationName;
  /** The operation's params as given (validated by its schema), or null. */
  readonly params: Record<string, unknown> | null;
  /** The query as given; the selection is fixed by it and `startedBefore`. */
  readonly query: BulkQuery;
  /** Only executions started before this instant (ISO): its creation, or the query's bound if earlier. */
  readonly startedBefore: string;
  /** Who created it (api/caller.ts, actorOf). */
  readonly by: string;
  readonly createdAt: string;
  /** The partitions whose executions it selects, each a lane (`[0]` on a store not cut into partitions). */
  readonly partitions: readonly number[];
  readonly state: BulkState;
  readonly finishedAt: string | null;
  readonly cancelledBy: string | null;
  readonly error: { readonly code: ErrorCode; readonly message: string } | null;
  /** Lanes by partition; a partition without one is not selected yet. */
  readonly lanes: Readonly<Record<string, BulkLane>>;
}

/** A bulk operation's counts, summed over its lanes. Pure. */
export function bulkCounts(b: BulkOperation): { total: number; done: number; skipped: number; selected: boolean } {
  let total = 0;
  let applied = 0;
  let skipped = 0;
  for (const lane of Object.values(b.lanes)) {
    total += lane.ids.length;
    applied += lane.next;
    skipped += Object.keys(lane.skipped).length;
  }
  const selected = b.partitions.every((p) => Object.hasOwn(b.lanes, String(p)));
  return { total, done: applied - skipped, skipped, selected };
}

/** Whether every lane of `b` is selected and applied to its end. Pure. */
export function bulkApplied(b: BulkOperation): boolean {
  return b.partitions.every((p) => {
    const lane = b.lanes[String(p)];
    return lane !== undefined && lane.next >= lane.ids.length;
  });
}

/**
 * The cancel operation over the tree rooted at `root` (its query's `rootId`) that is not itself
 * cancelled, or null: once one is created, an execution of that tree that would start another is
 * cancelled instead (step/checks.ts), so that the tree cannot outpace the operation, nor grow
 * again from what it did not select (started as it was created) once it ends. Kept while the
 * operation is (BULKS_KEPT). Pure.
 */
export function treeCancellation(bulks: Readonly<Record<string, BulkOperation>>, root: string): BulkOperation | null {
  for (const id in bulks) {
    const b = bulks[id]!;
    if (b.operation === 'cancel' && b.query.rootId === root && b.state !== 'CANCELLED') return b;
  }
  return null;
}
