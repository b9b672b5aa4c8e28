/**
 * The table of bulk operations: what each does to one execution, in the step of the chunk it is
 * part of (step/bulk.ts). An operation is a function of the step, its target and its params; it
 * throws a WfxError, before it writes any record, for an execution it passes over (the code is
 * that execution's result: INSTANCE_NOT_RUNNING, ...). Work an operation must do before its step
 * (reading an archived execution from history) is its `prepare`, run once per chunk.
 */
import type { BulkOperationName, BulkParamsOf } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { ownEntry } from '../../../shared/json-object.js';
import type { Execution } from '../../state/state.js';
import { readFailureChain } from '../failure-point.js';
import { moveExecution } from '../step/move.js';
import { ReadAgain, replay, retry } from '../step/repair.js';
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
  readonly live: Execution | undefined;
  /** What the operation's `prepare` read for it before the step; undefined without one (or nothing read). */
  readonly pre: R | undefined;
}

/** What a `prepare` may read before a chunk's step. */
export interface BulkReads {
  /** An execution in the live state, whatever its state. */
  readonly live: (id: string) => Execution | undefined;
  /** An execution from history (finished and archived), or null. */
  readonly archived: (id: string) => Promise<Execution | null>;
  /** Keeps executions in the live state until the chunk's step has run (ExecutionArchive.hold). */
  readonly hold: (ids: readonly string[]) => void;
  /**
   * Whether an execution read from history answers the operation's query (its state and failure
   * code aside: those are the operation's own to judge) and its organization: an operation acts
   * on a read one only if so.
   */
  readonly selects: (inst: Execution) => boolean;
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

/** Who an execution's history names for an operation of `actor`. */
function actorName(actor: BulkActor): string {
  return `${actor.by} (bulk operation ${actor.bulkId})`;
}

/** The executions of `ids` that are not live, read from history where the operation's query selects them. */
async function readArchived(reads: BulkReads, ids: readonly string[]): Promise<Map<string, Execution>> {
  const read = new Map<string, Execution>();
  for (const id of ids) {
    if (reads.live(id)) continue;
    const inst = await reads.archived(id);
    if (inst && reads.selects(inst)) read.set(id, inst);
  }
  return read;
}

/** The execution a target names, live or read before the step; INSTANCE_NOT_FOUND when neither. */
function targetInstance(target: BulkTarget<unknown>, pre: Execution | undefined): Execution {
  const inst = target.live ?? pre;
  if (!inst) throw new WfxError('INSTANCE_NOT_FOUND', `execution ${target.id} is not where the operation looked`);
  return inst;
}

/** The operations. */
export const BULK_OPERATIONS: BulkOperationTable = {
  cancel: {
    // INSTANCE_NOT_RUNNING for one that ended (or was archived) since it was selected.
    apply: (s, target, _params, actor) => cancel(s, target.id, bulkReason('cancelled', actor)),
  },
  retry: {
    // Each execution and the failed children it retries with it, held live until the step ran.
    prepare: async (reads, ids) => {
      const chains = new Map<string, Map<string, Execution>>();
      for (const id of ids) {
        const root = reads.live(id) ?? (await reads.archived(id));
        if (!root || (!reads.live(id) && !reads.selects(root))) continue;
        chains.set(id, await readFailureChain(root, reads, (child) => reads.hold([child])));
      }
      return chains;
    },
    apply: (s, target, params: { data?: Record<string, unknown> } | undefined, actor) => {
      const archived = (target.pre as Map<string, Execution> | undefined) ?? new Map<string, Execution>();
      targetInstance(target, archived.get(target.id));
      try {
        retry(s, {
          kind: 'retry',
          instanceId: target.id,
          ...(params?.data !== undefined && { data: params.data }),
          by: actorName(actor),
          archived,
        });
      } catch (err) {
        // Left the live state between the read and the step (held, so never in practice).
        if (err instanceof ReadAgain)
          throw new WfxError('INSTANCE_NOT_FOUND', `execution ${target.id} moved to history`);
        throw err;
      }
    },
  },
  replay: {
    prepare: (reads, ids) => readArchived(reads, ids),
    apply: (s, target, params: { data?: Record<string, unknown> } | undefined, actor) => {
      const original = targetInstance(target, target.pre as Execution | undefined);
      const nodes = ownEntry(s.state.flows, original.processId)?.versions[original.processVersion]?.definition.nodes;
      const startId = nodes && Object.keys(nodes).find((id) => nodes[id]!.type === 'startEvent');
      if (startId === undefined)
        throw new WfxError('VERSION_NOT_FOUND', `flow ${original.processId} has no version ${original.processVersion}`);
      replay(s, {
        kind: 'replay',
        original,
        nodeId: startId,
        ...(params?.data !== undefined && { data: params.data }),
        by: actorName(actor),
      });
    },
  },
  move: {
    // INSTANCE_NOT_RUNNING for one that ended since it was selected (moveExecution's own checks).
    apply: (s, target, params: { version: string }, actor) => {
      if (!target.live) throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${target.id} is not running`);
      moveExecution(s, target.id, params.version, actorName(actor));
    },
  },
};
