/**
 * The table of bulk operations: what each does to one execution, in the step of the chunk it is
 * part of (step/bulk.ts). An operation is a function of the step, its target and its params; it
 * throws a WfxError, before it writes any record, for an execution it passes over (the code is
 * that execution's result: INSTANCE_NOT_RUNNING, ...). Work an operation must do before its step
 * (reading an archived execution from history) is its `prepare`, run once per chunk.
 */
import type { BulkOperationName, BulkParamsOf } from '../../../shared/api/index.js';
import type { Instance } from '../../state/state.js';
import { cancel } from '../step/start.js';
import type { Step } from '../step/step.js';

/** Who an operation acts for, as it records it in each execution's history and log. */
export interface BulkActor {
  readonly bulkId: string;
  /** The operation's creator (api/caller.ts, actorOf). */
  readonly by: string;
}

/** One execution of a chunk, as an operation gets it. */
export interface BulkTarget<R> {
  readonly id: string;
  /** The execution in the live state, checked against the query; undefined once archived (or never here). */
  readonly live: Instance | undefined;
  /** What the operation's `prepare` read for it before the step; undefined without one (or nothing read). */
  readonly pre: R | undefined;
}

/** What a `prepare` may read before a chunk's step. */
export interface BulkReads {
  /** An execution from history (finished and archived), or null. */
  readonly archived: (id: string) => Promise<Instance | null>;
  /**
   * Whether an execution read from history answers the operation's query (its state and failure
   * code aside: those are the operation's own to judge) and its organization: an operation acts
   * on a read one only if so.
   */
  readonly selects: (inst: Instance) => boolean;
}

/** One operation (see the top of this file); `R`: what its `prepare` reads per execution. */
export interface BulkOperationSpec<P, R = never> {
  /**
   * Reads, before a chunk's step, what `apply` needs that the step cannot read (an archived
   * execution, from history): by id, for some of `ids`. Default: nothing.
   */
  readonly prepare?: (reads: BulkReads, ids: readonly string[]) => Promise<ReadonlyMap<string, R>>;
  /**
   * Applies the operation to one execution in the chunk's step, as `actor`. Throws a WfxError,
   * before it writes any record, to pass the execution over (its code is the result). Never
   * awaits; throws nothing else.
   */
  readonly apply: (s: Step, target: BulkTarget<R>, params: P, actor: BulkActor) => void;
}

/** Every operation: the compiler requires one per name of BULK_OPERATION_PARAMS (shared/api/bulk.ts). */
export type BulkOperationTable = {
  readonly [K in BulkOperationName]: BulkOperationSpec<BulkParamsOf<K>, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- each operation reads its own kind
};

/** The reason an execution's log gives for an operation of `actor`. */
export function bulkReason(verb: string, actor: BulkActor): string {
  return `${verb} by bulk operation ${actor.bulkId} (${actor.by})`;
}

/** The operations. */
export const BULK_OPERATIONS: BulkOperationTable = {
  cancel: {
    // INSTANCE_NOT_RUNNING for one that ended (or was archived) since it was selected.
    apply: (s, target, _params, actor) => cancel(s, target.id, bulkReason('cancelled', actor)),
  },
};
