/**
 * An operator's recovery, as step inputs: a retry puts a failed execution back to Running where
 * it failed (same id, variables and history; optionally with variables set first), and a
 * replay starts a new execution of the same version at a chosen node with the variables of
 * the moment the original entered it. Both decide from the live state and, for executions that
 * left it, from what the engine read from history before the step (engine/repair.ts).
 */
import { WfxError } from '../../../shared/errors.js';
import { cloneData, extensibleCopy, ownEntry } from '../../../shared/json-object.js';
import { jsonSize } from '../../../shared/json-size.js';
import { measureVariables } from '../../state/sizes.js';
import { STATE, type Execution } from '../../state/state.js';
import { failurePoint, variablesAtEntry } from '../failure-point.js';
import { checkDataDepth, checkVariablesBytes } from './request-data.js';
import { admit, admitStarts } from './admit.js';
import type { Step } from './step.js';
import { execution } from '../../state/executions.js';

/** The inputs of this file (index.ts, StepInput). */
export type RepairInput =
  /**
   * Retries failed execution `instanceId` (see retry). `archived`: executions of its failure
   * (it, and the child whose failure failed it) read from history, by id, for those not live.
   */
  | {
      readonly kind: 'retry';
      readonly instanceId: string;
      readonly data?: Record<string, unknown>;
      readonly by: string;
      readonly archived: ReadonlyMap<string, Execution>;
    }
  /** Starts a replay of `original` (read before the step) at `nodeId` (see replay). */
  | {
      readonly kind: 'replay';
      readonly original: Execution;
      readonly nodeId: string;
      readonly data?: Record<string, unknown>;
      readonly by: string;
    };

/** What each input of this file answers. */
export interface RepairAnswers {
  retry: void;
  replay: Execution;
}

/**
 * An execution of a failure is neither live nor among those read from history: it left the
 * live state between the read and the step. The engine reads again and runs the step again.
 */
export class ReadAgain extends Error {}

/**
 * Retries a failed top-level execution: it runs again from the node(s) that failed, as new
 * node instances; a subProcess whose child failed waits again for that child, retried in its
 * place (and so on down). Throws, before any record, INSTANCE_NOT_FAILED, INSTANCE_IS_CHILD,
 * VERSION_NOT_FOUND, VALIDATION_ERROR, PAYLOAD_TOO_LARGE, EXECUTION_LIMIT_EXCEEDED.
 */
export function retry(s: Step, input: Extract<RepairInput, { kind: 'retry' }>): void {
  const find = (id: string): Execution => {
    const inst = execution(s.state, id) ?? input.archived.get(id);
    if (!inst) throw new ReadAgain(id);
    return inst;
  };
  const root = find(input.instanceId);
  if (root.stateCd !== STATE.FAILED)
    throw new WfxError('INSTANCE_NOT_FAILED', `execution ${root.processInstanceId} is not failed`, {
      details: { stateCd: root.stateCd },
    });
  if (root.parentInstanceId !== null && root.parentNodeInstanceId !== undefined)
    throw new WfxError(
      'INSTANCE_IS_CHILD',
      `execution ${root.processInstanceId} is a child of ${root.parentInstanceId}: retry that one, which retries this`,
      { details: { parentInstanceId: root.parentInstanceId } },
    );
  if (!ownEntry(s.state.flows, root.processId)?.versions[root.processVersion])
    throw new WfxError('VERSION_NOT_FOUND', `flow ${root.processId} has no version ${root.processVersion} any more`);
  // The chain of failures: the execution, then each child whose failure failed its parent's node.
  const chain: Execution[] = [root];
  for (let at = failurePoint(root); at.child !== null;) {
    // Held live while read (repair.ts): one neither live nor read is gone (retention).
    const child = execution(s.state, at.child) ?? input.archived.get(at.child);
    if (child?.stateCd !== STATE.FAILED) break;
    chain.push(child);
    at = failurePoint(child);
  }
  if (input.data !== undefined) for (const inst of chain) checkData(s, inst, input.data);
  admit(s, root.organization, chain.length);
  const points = chain.map(failurePoint);
  chain.forEach((inst, i) => {
    const id = inst.processInstanceId;
    const live = execution(s.state, id) !== undefined;
    s.emit({
      type: 'instance.revived',
      instanceId: id,
      at: s.at,
      by: input.by,
      error: inst.error!,
      // In each execution retried: the node that runs again is the deepest child's.
      ...(input.data !== undefined && { set: cloneData(input.data) }),
      ...(!live && { instance: inst }),
    });
    s.touched.add(id);
    const point = points[i]!;
    const revived = execution(s.state, id)!;
    if (point.child !== null && i + 1 < chain.length)
      s.emit({ type: 'node.revived', instanceId: id, nodeInstanceId: point.failed!.id, at: s.at });
    // A child that is not retried with it (gone, or no longer failed): the node runs again whole.
    else if (point.child !== null) s.createNode(revived, point.failed!.nodeId);
    for (const nodeId of point.tokens) s.createNode(revived, nodeId);
  });
  s.drain();
}

/**
 * Starts a new execution of `original`'s flow version at `nodeId`, with the variables it had
 * when it last entered that node (and `data` over them), linked to it by `replayOf`. Throws,
 * before any record, INSTANCE_IS_CHILD, VERSION_NOT_FOUND, NODE_NOT_FOUND, NODE_NOT_REACHED,
 * REPLAY_VARIABLES_UNKNOWN, VALIDATION_ERROR, PAYLOAD_TOO_LARGE, EXECUTION_LIMIT_EXCEEDED.
 */
export function replay(s: Step, input: Extract<RepairInput, { kind: 'replay' }>): Execution {
  const { original, nodeId } = input;
  const id = original.processInstanceId;
  if (original.parentInstanceId !== null && original.parentNodeInstanceId !== undefined)
    throw new WfxError(
      'INSTANCE_IS_CHILD',
      `execution ${id} runs a body of ${original.parentInstanceId}'s flow: replay that one`,
      { details: { parentInstanceId: original.parentInstanceId } },
    );
  const version = ownEntry(s.state.flows, original.processId)?.versions[original.processVersion];
  if (!version)
    throw new WfxError(
      'VERSION_NOT_FOUND',
      `flow ${original.processId} has no version ${original.processVersion} any more`,
    );
  if (!Object.hasOwn(version.definition.nodes, nodeId))
    throw new WfxError(
      'NODE_NOT_FOUND',
      `flow ${original.processId} version ${original.processVersion} has no node ${nodeId}`,
      {
        details: { nodeId },
      },
    );
  const entry = variablesAtEntry(original, nodeId);
  if (entry.kind === 'not-reached')
    throw new WfxError('NODE_NOT_REACHED', `execution ${id} never reached node ${nodeId}`, { details: { nodeId } });
  if (entry.kind === 'unlogged')
    throw new WfxError(
      'REPLAY_VARIABLES_UNKNOWN',
      `execution ${id}'s log had stopped keeping copies of its variables before it reached ${nodeId}`,
      { details: { nodeId } },
    );
  const variables = extensibleCopy(cloneData(entry.variables), input.data === undefined ? {} : cloneData(input.data));
  if (input.data !== undefined) checkData(s, null, input.data, variables);
  admit(s, original.organization, 1);
  admitStarts(s, original.organization, 1);
  const inst = s.launchAt(
    {
      processId: original.processId,
      processName: original.processName,
      processVersion: original.processVersion,
      organization: original.organization,
      environment: original.environment,
      correlationKey: original.correlationKey,
      parentInstanceId: null,
      variables,
      replayOf: { processInstanceId: id, nodeId, by: input.by },
      // Found by what the execution it replays is about; its nodes may update them.
      ...(original.search !== undefined && { search: original.search }),
    },
    nodeId,
  );
  s.drain();
  return inst;
}

/** Throws when `data` is nested too deep, or would make the variables larger than the limit. */
function checkData(
  s: Step,
  inst: Execution | null,
  data: Record<string, unknown>,
  merged?: Record<string, unknown>,
): void {
  checkDataDepth(data, s.ctx.maxJsonDepth, 'data');
  const limit = s.ctx.limits.variablesBytes;
  const total = inst !== null ? measureVariables(inst, data, limit).total : jsonSize(merged ?? data, limit);
  checkVariablesBytes(total, limit, 'the variables would be');
}
