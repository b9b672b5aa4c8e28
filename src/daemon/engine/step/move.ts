/**
 * The step's move input: a running execution moves to another published version of its flow,
 * with the children that run a body of it, and goes on from the same nodes there. What may
 * move is decided in version-move.ts (planMove), before any record.
 */
import type { InputNodeDef, UserTaskNode } from '../../../shared/flow/types.js';
import type { WfxRecord } from '../../state/records.js';
import { STATUS, type Execution, type Wait } from '../../state/state.js';
import { handlerOf } from '../nodes/index.js';
import { planMove, type MovePlan } from '../version-move.js';
import { parseDuration } from '../../../shared/duration.js';
import { nodesAt } from '../../../shared/flow/types.js';
import { Scope } from './scope.js';
import type { Step } from './step.js';

/** The input of this file (index.ts, StepInput): move execution `instanceId` to version `toVersion`, asked by `by`. */
export interface MoveInput {
  readonly kind: 'move';
  readonly instanceId: string;
  readonly toVersion: string;
  /** Who asked (api/caller.ts, actorOf), for its log and its record. */
  readonly by: string;
}

/** What a move did. */
export interface MoveResult {
  readonly processInstanceId: string;
  readonly fromVersion: string;
  readonly toVersion: string;
  /** Whether it moved: false when it ran `toVersion` already (nothing written), and for a dry run. */
  readonly moved: boolean;
  /** The child executions running a body of the flow that moved with it. */
  readonly children: readonly string[];
}

/** What each input of this file answers. */
export interface MoveAnswers {
  move: MoveResult;
}

/**
 * Moves running execution `id`, and the children that run a body of its flow, to version
 * `toVersion`: one `instance.moved` record each. Throws what planMove throws
 * (INSTANCE_NOT_RUNNING, INSTANCE_MOVES_WITH_PARENT, VERSION_NOT_FOUND, INSTANCE_NOT_MOVABLE)
 * before it writes anything, so a caller moving several executions in one step (a bulk
 * operation) may catch it and go on with the next. Runs no node: each node instance goes on
 * where it is, as the target's node, when it next completes or resumes.
 */
export function moveExecution(s: Step, id: string, toVersion: string, by: string): MoveResult {
  const plan = planMove(s.state, id, toVersion);
  const result: MoveResult = {
    processInstanceId: id,
    fromVersion: plan.fromVersion,
    toVersion,
    moved: plan.executions.length > 0,
    children: plan.executions.slice(1).map((i) => i.processInstanceId),
  };
  // Everything decided before the first record: nothing may throw once one is applied.
  const moves = plan.executions.map((inst) => ({ inst, ...taskWaits(s, plan, inst) }));
  for (const { inst, waits, warnings } of moves) {
    const record: Extract<WfxRecord, { type: 'instance.moved' }> = {
      type: 'instance.moved',
      instanceId: inst.processInstanceId,
      fromVersion: plan.fromVersion,
      toVersion,
      at: s.at,
      by,
      ...(waits && { waits }),
    };
    s.touched.add(inst.processInstanceId);
    s.emit(record);
    for (const w of warnings) s.emit(w);
  }
  return result;
}

/**
 * The waits of the waiting input nodes and user tasks of `inst`, made again by the target's
 * node (its form, options and assignee resolved against the variables as they are now) with
 * the due time of the target's `timeout` counted from when the node was reached, as a timer
 * boundary event's is; and the missing-reference warnings that resolving wrote.
 */
function taskWaits(
  s: Step,
  plan: MovePlan,
  inst: Execution,
): { waits: Record<string, Wait> | undefined; warnings: WfxRecord[] } {
  const nodes = nodesAt(plan.target, inst.scope) ?? {};
  const warnings: WfxRecord[] = [];
  let waits: Record<string, Wait> | undefined;
  for (const ni of Object.values(inst.nodes)) {
    if (ni.statusCd !== STATUS.WAITING || ni.wait?.kind !== 'input') continue;
    const node = nodes[ni.nodeId] as InputNodeDef | UserTaskNode;
    const scope = new Scope(
      inst,
      ni.nodeId,
      s.now,
      s.at,
      ni.wait,
      null,
      s.ctx.envOf(inst),
      node,
      warnings,
      s.state,
      s.ctx.schemas,
      s.ctx.limits.loopIterations,
    );
    const outcome = handlerOf(node.type).run(node, scope);
    if (outcome.kind !== 'wait' || outcome.wait.kind !== 'input') continue;
    const dueAt =
      node.timeout === undefined
        ? null
        : new Date(Date.parse(ni.startTime) + parseDuration(node.timeout)).toISOString();
    (waits ??= {})[ni.id] = { ...outcome.wait, dueAt };
  }
  return { waits, warnings };
}
