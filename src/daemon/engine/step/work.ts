/**
 * The step's work inputs: what the work runner (work-runner.ts) hands back about a node's work
 * (an HTTP call, a script, a model call, a voice task): its result, a failure to handle that
 * result, a line for the execution log while the work goes on.
 */
import type { NodeFailureCode } from '../../../shared/flow/failure-codes.js';
import { STATE, STATUS, type Execution, type LogEntry, type NodeInstance, type WfxState } from '../../state/state.js';
import type { WorkRequest } from '../nodes/handler.js';
import type { WorkResult } from '../../outbound/result.js';
import type { Step } from './step.js';
import { execution } from '../../state/executions.js';

/** The inputs of this file (index.ts, StepInput). */
export type WorkInput =
  /** The node's work is done: resumes the node if it still waits for it (it may have been cancelled meanwhile). */
  | {
      readonly kind: 'work.done';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly result: WorkResult;
      readonly request?: WorkRequest;
    }
  /** The node's work result cannot be handled (its step threw): the node fails with `code`, if it is still Active. */
  | {
      readonly kind: 'work.failed';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly code: NodeFailureCode;
      readonly message: string;
    }
  /** A line in the execution log while the work goes on (a retry, a model attempt). */
  | {
      readonly kind: 'work.log';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly level: LogEntry['level'];
      readonly message: string;
    };

/** The live node an input names, or null when its execution or node is gone. */
function nodeOf(state: WfxState, input: WorkInput): { inst: Execution; ni: NodeInstance } | null {
  const inst = execution(state, input.instanceId);
  const ni = inst?.nodes[input.nodeInstanceId];
  return inst && ni ? { inst, ni } : null;
}

/** Resumes the node with its work's result, its log lines first (see WorkInput). */
export function workDone(s: Step, input: Extract<WorkInput, { kind: 'work.done' }>): void {
  const found = nodeOf(s.state, input);
  if (!found) return;
  const { inst, ni } = found;
  if (inst.stateCd !== STATE.RUNNING || ni.statusCd !== STATUS.ACTIVE) return;
  const { result, request } = input;
  for (const line of result.logs ?? []) logWork(s, inst, ni, result.ok ? 'INFO' : 'WARN', line, s.at);
  s.resume(inst, ni, request ? { kind: 'work', result, request } : { kind: 'work', result });
}

/** Fails the node whose result could not be handled (see WorkInput). */
export function workFailed(s: Step, input: Extract<WorkInput, { kind: 'work.failed' }>): void {
  const found = nodeOf(s.state, input);
  if (!found) return;
  const { inst, ni } = found;
  if (inst.stateCd !== STATE.RUNNING || ni.statusCd !== STATUS.ACTIVE) return;
  s.touched.add(inst.processInstanceId);
  s.failNode(inst, ni, input.code, input.message);
  s.drain();
}

/** Writes a log line of the node's work (see WorkInput). */
export function workLog(s: Step, input: Extract<WorkInput, { kind: 'work.log' }>): void {
  const found = nodeOf(s.state, input);
  if (!found) return;
  const { inst, ni } = found;
  s.touched.add(inst.processInstanceId); // so log streams see the line
  logWork(s, inst, ni, input.level, input.message, s.now.toISOString());
}

/** Writes one log line of node `ni`'s work. */
function logWork(
  s: Step,
  inst: Execution,
  ni: NodeInstance,
  level: LogEntry['level'],
  message: string,
  timestamp: string,
): void {
  s.emit({
    type: 'instance.logged',
    instanceId: inst.processInstanceId,
    entry: { nodeId: ni.nodeId, nodeName: ni.nodeName, nodeType: ni.nodeType, level, message, timestamp },
  });
}
