/**
 * The step's answer input: input submitted to a waiting input node or user task. Checked in the
 * step, on the execution as it is now (another call may have resumed or ended it since the
 * caller looked, and a committed step replaces the execution's object: state/draft/).
 */
import type { TaskAction } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import { fileIdOf } from '../../../shared/file-ref.js';
import { validateTaskData } from '../../../shared/input-data.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import { STATUS } from '../../state/state.js';
import { runningNow } from '../queries.js';
import type { StepContext } from './context.js';
import type { Step } from './step.js';

/** The input of this file (index.ts, StepInput). */
export interface AnswerInput {
  readonly kind: 'answer';
  readonly instanceId: string;
  readonly nodeId: string;
  /** COMPLETE or CANCEL answer it; CLAIM and UNCLAIM say who answers it (`by`). */
  readonly action: TaskAction;
  readonly data: Record<string, unknown>;
  /** Who answers (api/caller.ts, actorOf), kept on the node (`node.answered`); absent: not recorded. */
  readonly by?: string;
  /** Acts on a task another person claimed (the caller may publish flows: the route checks it). */
  readonly takeOver?: boolean;
}

/**
 * Resumes the input node or user task `nodeId` waiting in the execution with the answer, or
 * claims it for `by` or gives it back. Throws INSTANCE_NOT_RUNNING, NODE_NOT_WAITING,
 * TASK_CLAIMED (another person claimed it), VALIDATION_ERROR (422, the node keeps waiting).
 */
export function answer(s: Step, input: AnswerInput): void {
  const id = input.instanceId;
  const inst = runningNow(s.state, id);
  const ni = Object.values(inst.nodes).find(
    (n) => n.nodeId === input.nodeId && n.statusCd === STATUS.WAITING && n.wait?.kind === 'input',
  );
  if (!ni || ni.wait?.kind !== 'input')
    throw new WfxError('NODE_NOT_WAITING', `node ${input.nodeId} of ${id} is not waiting for input`);
  const claimedBy = ni.claimedBy;
  if (claimedBy !== undefined && claimedBy !== input.by && input.takeOver !== true)
    throw new WfxError(
      'TASK_CLAIMED',
      `task ${input.nodeId} of ${id} is claimed by ${claimedBy} (since ${ni.claimedAt ?? '?'}): only they answer it`,
      { details: { claimedBy, claimedAt: ni.claimedAt ?? null } },
    );
  if (input.action === 'CLAIM' || input.action === 'UNCLAIM') {
    const by = input.action === 'CLAIM' ? (input.by ?? null) : null;
    if (by !== (claimedBy ?? null))
      s.emit({ type: 'node.claimed', instanceId: id, nodeInstanceId: ni.id, by, at: s.at });
    return;
  }
  const { data } = input;
  if (input.action === 'COMPLETE') validateTaskData(ni.wait, data);
  if (input.action === 'COMPLETE' && ni.wait.approval !== undefined) checkEditedArguments(data);
  const given =
    input.action === 'COMPLETE' && ni.wait.inputType === 'file' ? withFile(s.ctx, inst.organization, data) : data;
  if (input.by !== undefined)
    s.emit({ type: 'node.answered', instanceId: id, nodeInstanceId: ni.id, by: input.by, at: s.at });
  s.resume(inst, ni, { kind: 'task', action: input.action, data: given });
}

/**
 * A file input's answer with its reference replaced by the file's metadata (`{fileId, name,
 * mimeType, bytes, sha256}`), so the flow reads what it got. Throws 422 VALIDATION_ERROR for
 * a file that is not in the execution's organization.
 */
function withFile(ctx: StepContext, organization: string, data: Record<string, unknown>): Record<string, unknown> {
  const fileId = fileIdOf(data.inputValue);
  const file = fileId === null ? undefined : ctx.file(organization, fileId);
  if (!file) {
    const problem = `no file ${String(fileId)} in this organization`;
    throw new WfxError('VALIDATION_ERROR', `inputValue: ${problem}`, {
      status: 422,
      details: { field: 'inputValue', problems: [`inputValue: ${problem}`], fields: { inputValue: problem } },
    });
  }
  const { fileId: id, name, mimeType, bytes, sha256 } = file;
  return extensibleCopy(data, { inputValue: { fileId: id, name, mimeType, bytes, sha256 } });
}

/**
 * An approval's `arguments`, when given, must be the JSON text of an object: the call's new
 * arguments. Throws 422 VALIDATION_ERROR, and the call keeps waiting.
 */
function checkEditedArguments(data: Record<string, unknown>): void {
  const given = data.arguments;
  if (given === undefined) return;
  let parsed: unknown;
  try {
    parsed = typeof given === 'string' ? JSON.parse(given) : undefined;
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return;
  const problem = "must be the JSON text of an object (the tool call's arguments)";
  throw new WfxError('VALIDATION_ERROR', `arguments: ${problem}`, {
    status: 422,
    details: { field: 'arguments', problems: [`arguments: ${problem}`], fields: { arguments: problem } },
  });
}
