import { parseDuration } from '../../../shared/duration.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import type { FormField, InputNodeDef, UserTaskNode } from '../../../shared/flow/types.js';
import { asText, type NodeHandler, type NodeScope, type Outcome, type ResumeInput } from './handler.js';

function dueAt(timeout: string | undefined, now: Date): string | null {
  return timeout === undefined ? null : new Date(now.getTime() + parseDuration(timeout)).toISOString();
}

/**
 * COMPLETE: `{inputValue}` (simple types) or `{formData}` (form), every key of the data as a
 * variable, and `{inputNodeAction}`. CANCEL: cancelled, along errorFlow if there is one.
 * A timeout with no input: timed out, along timeoutFlow if there is one.
 */
function resume(form: boolean, timeout: string | undefined, input: ResumeInput): Outcome {
  if (input.kind === 'timer') return { kind: 'timeout', reason: `no input within ${timeout}` };
  if (input.kind !== 'task')
    return {
      kind: 'fail',
      code: 'INTERNAL_ERROR',
      message: `UNEXPECTED_EVENT: an input node resumed by ${input.kind}`,
    };
  if (input.action === 'CANCEL') {
    return {
      kind: 'cancel',
      reason: 'the task was cancelled',
      variables: extensibleCopy(input.data, { inputNodeAction: 'CANCEL' }),
    };
  }
  const value = form ? { formData: input.data } : { inputValue: input.data.inputValue };
  return { kind: 'next', variables: extensibleCopy(input.data, value, { inputNodeAction: 'COMPLETE' }) };
}

function fields(list: readonly FormField[] | undefined, scope: NodeScope): FormField[] | null {
  return list === undefined ? null : (scope.resolve(list) as FormField[]);
}

/** inputNode: waits (statusCd 1) for POST /process/task. */
export const inputNode: NodeHandler<InputNodeDef> = {
  run: (node, scope) => ({
    kind: 'wait',
    wait: {
      kind: 'input',
      inputType: node.inputType,
      formTitle: node.formTitle === undefined ? null : asText(scope.resolve(node.formTitle)),
      options: node.options === undefined ? null : (scope.resolve(node.options) as unknown[]),
      fields: fields(node.fields, scope),
      assignee: null,
      dueAt: dueAt(node.timeout, scope.now),
    },
  }),
  resume: (node, _scope, input) => resume(node.inputType === 'form', node.timeout, input),
};

/** userTask: an input node of type form, for a person (`assignee`). */
export const userTask: NodeHandler<UserTaskNode> = {
  run: (node, scope) => ({
    kind: 'wait',
    wait: {
      kind: 'input',
      inputType: 'form',
      formTitle: asText(scope.resolve(node.formTitle ?? node.name ?? scope.nodeId)),
      options: null,
      fields: fields(node.fields, scope) ?? [],
      assignee: node.assignee === undefined ? null : asText(scope.resolve(node.assignee)),
      dueAt: dueAt(node.timeout, scope.now),
    },
  }),
  resume: (node, _scope, input) => resume(true, node.timeout, input),
};
