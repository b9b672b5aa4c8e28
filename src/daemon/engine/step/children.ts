/**
 * What a child execution (subProcess, a loop's body, a callAgent's tool) or a called one
 * (callProcess) starts with: the link to its parent, its depth checked, its flow resolved.
 */
import { WfxError } from '../../../shared/errors.js';
import type { NodeFailureCode } from '../../../shared/flow/failure-codes.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import type { Execution, NodeInstance, WfxState } from '../../state/state.js';
import type { ChildStart } from '../nodes/handler.js';
import type { LaunchParams, StepContext } from './context.js';
import { resolveStart } from './start-params.js';
import { execution } from '../../state/executions.js';

/** How deep subProcess children may nest (a flow that starts itself as a subprocess fails instead of growing for ever). */
export const MAX_CHILD_DEPTH = 32;

/** A node fails with `code` (not an API error: documented with the node failure codes in docs/flows.md). */
export class NodeFailure extends Error {
  constructor(
    readonly code: NodeFailureCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What a child (`parent` given: the node that waits for it) or called (`parent` null) execution
 * of `inst` starts with. Throws NodeFailure (CHILD_DEPTH_EXCEEDED, INPUT_INVALID) or WfxError
 * when a named flow cannot start.
 */
export function childParams(
  state: WfxState,
  ctx: Pick<StepContext, 'maxJsonDepth' | 'limits' | 'tracing'>,
  inst: Execution,
  nodeId: string,
  start: ChildStart,
  parent: NodeInstance | null,
): LaunchParams {
  if (parent) {
    let depth = 1;
    for (let p = inst; p.parentInstanceId !== null && p.parentNodeInstanceId !== undefined; depth++) {
      const up = execution(state, p.parentInstanceId);
      if (!up) break;
      p = up;
    }
    if (depth > MAX_CHILD_DEPTH)
      throw new NodeFailure(
        'CHILD_DEPTH_EXCEEDED',
        `child executions nest more than ${MAX_CHILD_DEPTH} deep; does the flow start itself?`,
      );
  }
  // Executions started by callProcess carry how deep such calls chain (children inherit it).
  const callDepth = parent ? inst.callDepth : (inst.callDepth ?? 0) + 1;
  if (callDepth !== undefined && callDepth > MAX_CHILD_DEPTH) {
    throw new NodeFailure(
      'CHILD_DEPTH_EXCEEDED',
      `callProcess chains more than ${MAX_CHILD_DEPTH} executions deep; does the flow call itself?`,
    );
  }
  const link = {
    ...(parent
      ? { parentInstanceId: inst.processInstanceId, parentNodeInstanceId: parent.id }
      : { parentInstanceId: null }),
    ...(callDepth !== undefined && { callDepth }),
    root: inst.root ?? inst.processInstanceId,
    // The tree's priority orders its jobs and sandbox work wherever they wait.
    ...(inst.priority !== undefined && { priority: inst.priority }),
  };
  const iteration = start.iteration === undefined ? {} : { iteration: start.iteration };
  const correlationKey = start.correlationKey === undefined ? inst.correlationKey : start.correlationKey;
  if (start.processId === undefined) {
    // The node's own body: same flow and version, one level deeper.
    return {
      processId: inst.processId,
      processName: inst.processName,
      processVersion: inst.processVersion,
      organization: inst.organization,
      environment: inst.environment,
      correlationKey,
      ...link,
      scope: [...(inst.scope ?? []), nodeId],
      ...iteration,
      variables: start.variables,
    };
  }
  let params: LaunchParams;
  try {
    params = resolveStart(state, ctx, {
      organization: inst.organization,
      processId: start.processId,
      environment: inst.environment,
      ...(start.versionNumber !== undefined && { versionNumber: start.versionNumber }),
      correlationKey,
      data: start.variables,
    });
  } catch (err) {
    // Start data that does not match the flow's inputs: the node's failure, in the catalogue's words.
    if (err instanceof WfxError && err.code === 'VALIDATION_ERROR') throw new NodeFailure('INPUT_INVALID', err.message);
    throw err;
  }
  // A flow called is not held to its concurrency limit, nor holds a slot of it (flows.md#concurrency).
  const { concurrency: _slot, ...called } = params;
  return extensibleCopy(
    called,
    link,
    iteration,
    start.toolCallId === undefined ? {} : { toolCallId: start.toolCallId },
  );
}
