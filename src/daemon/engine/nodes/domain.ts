/**
 * domainTask: a job for an external worker. Reaching the node resolves its input, checks it
 * against the action's input schema and waits with a job wait (`JobWait`): the jobs API locks,
 * completes and fails it (engine/jobs.ts), each a step that resumes the node here. A worker's
 * failure, or output that does not match the action's output schema, counts as a failed
 * attempt: the next one waits out the retry interval, and the last one fails the node with the
 * worker's error code (JOB_FAILED when it gave none; JOB_OUTPUT_INVALID). The node's `timeout`
 * bounds the whole job (JOB_TIMEOUT), however many attempts and locks it went through.
 */
import { parseDuration } from '../../../shared/duration.js';
import { passOn } from '../../../shared/flow/failure-codes.js';
import type { DomainTaskNode } from '../../../shared/flow/types.js';
import type { JobWait } from '../../state/state.js';
import { retryDelayMs } from '../../outbound/retry.js';
import type { JobResult, NodeHandler, NodeScope, Outcome } from './handler.js';
import { retryPolicy } from './work.js';
import { SecretRefs } from '../work/secret-refs.js';

export const domainTask: NodeHandler<DomainTaskNode> = {
  run: (node, scope) => {
    const action = scope.domainAction(node.domain, node.action);
    if (!action)
      return {
        kind: 'fail',
        code: 'DOMAIN_NOT_FOUND',
        message: `organization ${scope.instance.organization} has no domain ${node.domain} with action ${node.action}`,
      };
    // `{secret.NAME}` resolves to stand-ins the jobs API fills in as a worker activates the job.
    const secrets = new SecretRefs();
    const input = inputOf(node, scope, secrets.token);
    if (typeof input === 'string') return { kind: 'fail', code: 'JOB_INPUT_INVALID', message: input };
    const problem = scope.schemaProblem(action.input, input, 'the input');
    if (problem !== null) return { kind: 'fail', code: 'JOB_INPUT_INVALID', message: problem };
    const wait: JobWait = {
      kind: 'job',
      dueAt:
        node.timeout === undefined ? null : new Date(scope.now.getTime() + parseDuration(node.timeout)).toISOString(),
      domain: node.domain,
      action: node.action,
      input,
      ...(secrets.used && { secrets: secrets.byToken }),
      attempt: 1,
      maxAttempts: retryPolicy(node.retry).maxAttempts,
      activations: 0,
      notBefore: null,
      lock: null,
      lastError: null,
    };
    return { kind: 'wait', wait };
  },
  resume: (node, scope, input) => {
    const wait = scope.wait;
    if (wait?.kind !== 'job')
      return { kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: a domainTask without a job wait` };
    if (input.kind === 'timer') return { kind: 'fail', code: 'JOB_TIMEOUT', message: timedOut(node, wait) };
    if (input.kind !== 'job')
      return { kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: a domainTask resumed by ${input.kind}` };
    return finished(node, scope, wait, input.result);
  },
};

/** The input resolved: an object, or why it is none (a text to fail with). */
function inputOf(
  node: DomainTaskNode,
  scope: NodeScope,
  secret: (name: string) => string,
): Record<string, unknown> | string {
  if (node.input === undefined) return {};
  const value = scope.resolve(node.input, undefined, secret);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return `the input resolves to ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}, not an object`;
}

/** An attempt ended: the node completes, waits for the next attempt, or fails. */
function finished(node: DomainTaskNode, scope: NodeScope, wait: JobWait, result: JobResult): Outcome {
  if (result.ok) return { kind: 'next', variables: { [node.resultVariable ?? scope.nodeId]: result.output } };
  const code = result.code === null ? 'JOB_FAILED' : result.code;
  const message = result.message === '' ? `worker ${result.worker} failed the job` : result.message;
  if (!result.retry || wait.attempt >= wait.maxAttempts) {
    const why = result.retry ? `attempt ${wait.attempt} of ${wait.maxAttempts} failed` : 'not to be retried';
    return {
      kind: 'fail',
      code: code === 'JOB_FAILED' || code === 'JOB_OUTPUT_INVALID' ? code : passOn(code),
      message: `${message} (${why})`,
      attempts: wait.attempt,
    };
  }
  const delay = result.backoffMs ?? retryDelayMs(retryPolicy(node.retry), wait.attempt);
  const next: JobWait = {
    kind: 'job',
    dueAt: wait.dueAt,
    domain: wait.domain,
    action: wait.action,
    input: wait.input,
    ...(wait.secrets !== undefined && { secrets: wait.secrets }),
    attempt: wait.attempt + 1,
    maxAttempts: wait.maxAttempts,
    activations: wait.activations,
    notBefore: delay > 0 ? new Date(scope.now.getTime() + delay).toISOString() : null,
    lock: null,
    lastError: { code, message },
  };
  return { kind: 'wait', wait: next };
}

function timedOut(node: DomainTaskNode, wait: JobWait): string {
  const held = wait.lock === null ? 'waiting for a worker' : `last locked by ${wait.lock.worker}`;
  return `no worker completed the job within ${node.timeout} (attempt ${wait.attempt} of ${wait.maxAttempts}, ${held})`;
}
