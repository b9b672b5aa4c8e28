/**
 * The step's inputs of bulk operations (state/bulk.ts): one created with the executions it
 * selects, a chunk of it applied, one cancelled. A chunk's changes to its executions and the
 * lane's progress are one step, so one journal entry: after a crash either both are there or
 * neither, and no execution is ever given the operation twice.
 */
import { WfxError, type ErrorCode } from '../../../shared/errors.js';
import { bulkApplied, type BulkOperation } from '../../state/bulk.js';
import type { WfxRecord } from '../../state/records.js';
import { ExecutionFilter } from '../execution-filter.js';
import { BULK_OPERATIONS } from '../bulk/operations.js';
import { bulkSelection, isVisible, retiredBulks } from '../bulk/selection.js';
import type { Step } from './step.js';
import { execution } from '../../state/executions.js';

/** The inputs of this file (index.ts, StepInput). */
export type BulkInput =
  /**
   * Creates `bulk` (no lane yet) with the executions selected in each partition this daemon
   * serves (`lanes`), and forgets the oldest finished operations past what is kept. Throws,
   * before anything changes, BULK_LIMIT_EXCEEDED when as many run as the limits allow.
   */
  | {
      readonly kind: 'bulk.create';
      readonly bulk: BulkOperation;
      readonly lanes: ReadonlyMap<number, readonly string[]>;
    }
  /**
   * Selects the lanes of a running operation that have none yet (partitions this daemon serves
   * that another daemon, which created the operation, did not), each with its executions.
   */
  | { readonly kind: 'bulk.select'; readonly bulkId: string; readonly lanes: ReadonlyMap<number, readonly string[]> }
  /**
   * Applies the operation to up to `count` executions of lane `lane` from `from`, and writes the
   * lane's progress. Does nothing (answers 0) unless the operation runs and the lane is at `from`
   * (a chunk decided on an older state). `pre`: what the operation's prepare read.
   */
  | {
      readonly kind: 'bulk.chunk';
      readonly bulkId: string;
      readonly lane: number;
      readonly from: number;
      readonly count: number;
      readonly pre: ReadonlyMap<string, unknown> | null;
    }
  /** Ends a running operation every lane of which is applied (its last chunks applied by other daemons). */
  | { readonly kind: 'bulk.complete'; readonly bulkId: string }
  /** Ends a running operation as FAILED with `error`: its chunks kept failing (the runner's judgement). */
  | {
      readonly kind: 'bulk.fail';
      readonly bulkId: string;
      readonly error: { readonly code: ErrorCode; readonly message: string };
    }
  /**
   * Cancels a running operation (the chunk under way, if any, ends it already or stays its
   * last). Throws BULK_NOT_FOUND for one `organization` may not see, BULK_NOT_RUNNING.
   */
  | {
      readonly kind: 'bulk.cancel';
      readonly bulkId: string;
      readonly organization: string | null;
      readonly by: string;
    };

/** What each input of this file answers. */
export interface BulkAnswers {
  'bulk.create': BulkOperation;
  'bulk.select': void;
  'bulk.chunk': number;
  'bulk.complete': void;
  'bulk.fail': void;
  'bulk.cancel': BulkOperation;
}

/** Creates an operation (see BulkInput). */
export function createBulk(s: Step, input: Extract<BulkInput, { kind: 'bulk.create' }>): BulkOperation {
  const { bulk } = input;
  admitBulk(s, bulk.organization);
  const retired = retiredBulks(s.state.bulks);
  s.emit({ type: 'bulk.created', bulk });
  for (const [lane, ids] of input.lanes)
    s.emit({ type: 'bulk.selected', bulkId: bulk.bulkId, lane, ids: [...ids], at: s.at });
  endIfApplied(s, bulk.bulkId);
  for (const bulkId of retired) s.emit({ type: 'bulk.removed', bulkId });
  return s.state.bulks[bulk.bulkId]!;
}

/**
 * Throws BULK_LIMIT_EXCEEDED when `organization` (null: a system key's over every organization,
 * counted as one) or the daemon runs as many operations as allowed. In the step: two creations
 * cannot pass it together.
 */
function admitBulk(s: Step, organization: string | null): void {
  const { bulkOperations, bulkOperationsTotal } = s.ctx.limits;
  let mine = 0;
  let all = 0;
  for (const b of Object.values(s.state.bulks)) {
    if (b.state !== 'RUNNING') continue;
    all++;
    if (b.organization === organization) mine++;
  }
  if (mine < bulkOperations && all < bulkOperationsTotal) return;
  const [limit, whose] = mine >= bulkOperations ? [bulkOperations, 'organization'] : [bulkOperationsTotal, 'daemon'];
  throw new WfxError('BULK_LIMIT_EXCEEDED', `the ${whose} runs ${limit} bulk operations already (the most allowed)`, {
    details: { organization, limit },
  });
}

/** Selects the lanes of a running operation that have none (see BulkInput). */
export function selectLanes(s: Step, input: Extract<BulkInput, { kind: 'bulk.select' }>): void {
  const bulk = s.state.bulks[input.bulkId];
  if (bulk?.state !== 'RUNNING') return;
  for (const [lane, ids] of input.lanes)
    if (!Object.hasOwn(bulk.lanes, String(lane)))
      s.emit({ type: 'bulk.selected', bulkId: input.bulkId, lane, ids: [...ids], at: s.at });
  endIfApplied(s, input.bulkId);
}

/** Applies a chunk (see BulkInput); answers how many executions it took. */
export function applyChunk(s: Step, input: Extract<BulkInput, { kind: 'bulk.chunk' }>): number {
  const bulk = s.state.bulks[input.bulkId];
  const lane = bulk?.lanes[String(input.lane)];
  if (bulk?.state !== 'RUNNING' || lane?.next !== input.from) return 0;
  const ids = lane.ids.slice(input.from, input.from + input.count);
  const op = BULK_OPERATIONS[bulk.operation];
  const actor = { bulkId: bulk.bulkId, by: bulk.by };
  // The query again, its state and failure code aside (those are the operation's own to check):
  // whatever changed since the selection, nothing outside the query is touched.
  const still = new ExecutionFilter(
    { ...bulkSelection(bulk), stateCd: undefined, errorCode: undefined, failedNode: undefined, limit: 0 },
    () => undefined,
  );
  const skipped: Record<string, ErrorCode> = {};
  for (const id of ids) {
    const live = execution(s.state, id);
    const written = s.records.length;
    try {
      if (live && !isVisible(live, bulk.organization))
        throw new WfxError('INSTANCE_NOT_FOUND', `no execution ${id} in the operation's organization`);
      if (live && !still.matches(live))
        throw new WfxError('BULK_NO_LONGER_MATCHES', `execution ${id} no longer answers the query`);
      op.apply(s, { id, live, pre: input.pre?.get(id) }, bulk.params as never, actor);
    } catch (err) {
      // Passed over only when it changed nothing: an operation that wrote records and then threw
      // broke its contract, and the store fails rather than journal half of it.
      if (s.records.length !== written) throw err;
      skipped[id] = err instanceof WfxError ? err.code : 'INTERNAL_ERROR';
    }
  }
  const progressed: WfxRecord = {
    type: 'bulk.progressed',
    bulkId: bulk.bulkId,
    lane: input.lane,
    next: input.from + ids.length,
    skipped,
    at: s.at,
  };
  s.emit(progressed);
  endIfApplied(s, bulk.bulkId);
  return ids.length;
}

/** Ends an operation every lane of which is applied (see BulkInput). */
export function completeBulk(s: Step, bulkId: string): void {
  endIfApplied(s, bulkId);
}

/** Ends a running operation as FAILED (see BulkInput). */
export function failBulk(s: Step, input: Extract<BulkInput, { kind: 'bulk.fail' }>): void {
  if (s.state.bulks[input.bulkId]?.state !== 'RUNNING') return;
  s.emit({ type: 'bulk.ended', bulkId: input.bulkId, state: 'FAILED', at: s.at, error: input.error });
}

/** Writes a running operation COMPLETED once every lane is selected and applied. */
function endIfApplied(s: Step, bulkId: string): void {
  const bulk = s.state.bulks[bulkId];
  if (bulk?.state === 'RUNNING' && bulkApplied(bulk))
    s.emit({ type: 'bulk.ended', bulkId, state: 'COMPLETED', at: s.at });
}

/** Cancels a running operation (see BulkInput). */
export function cancelBulk(s: Step, input: Extract<BulkInput, { kind: 'bulk.cancel' }>): BulkOperation {
  const bulk = s.state.bulks[input.bulkId];
  if (!bulk || (input.organization !== null && bulk.organization !== input.organization))
    throw new WfxError('BULK_NOT_FOUND', `no bulk operation ${input.bulkId}`);
  if (bulk.state !== 'RUNNING')
    throw new WfxError('BULK_NOT_RUNNING', `bulk operation ${input.bulkId} is ${bulk.state.toLowerCase()} already`);
  s.emit({ type: 'bulk.ended', bulkId: bulk.bulkId, state: 'CANCELLED', at: s.at, by: input.by });
  return s.state.bulks[input.bulkId]!;
}
