/**
 * Execution triggers (`{ type: execution, processId?, states }`): when a top-level execution
 * ends, the flows whose active version watches it start in the same step, so the end and the
 * starts it makes are one journal entry (a crash keeps both or neither). Guarded against
 * loops: a flow in the ended execution's trigger chain is not started again, and a chain stops
 * at the `trigger-depth` limit; each start skipped is a WARN line on the ended execution.
 */
import { errorMessage, WfxError } from '../../../shared/errors.js';
import type { ExecutionEndState } from '../../../shared/flow/types.js';
import type { LogEntry } from '../../../shared/api/index.js';
import { activeTriggers } from '../../state/active-triggers.js';
import type { WfxRecord } from '../../state/records.js';
import { STATE, type Execution, type TriggeredBy, type WfxState } from '../../state/state.js';
import { admit, admitStarts } from './admit.js';
import type { LaunchParams, StepContext } from './context.js';
import { resolveStart } from './start-params.js';
import { cancelOldest, placeStart, type Placement } from './concurrency.js';
import type { TriggerStartKey } from '../../../shared/flow/trigger-data.js';

/** What firing needs of the step (tokens.ts; a structural type, so that neither module imports the other). */
interface StepWriter {
  readonly state: WfxState;
  readonly ctx: StepContext;
  readonly now: Date;
  readonly at: string;
  readonly touched: Set<string>;
  emit(record: WfxRecord): void;
  launch(params: LaunchParams, later: boolean, near: string): Execution;
  launchQueued(params: LaunchParams, near: string): Execution;
  reach(instanceId: string): void;
  finish(inst: Execution, stateCd: 1 | 2 | 3, reason: string): void;
}

/** The end state of `stateCd` as execution triggers name it. */
const END_STATES: Readonly<Record<number, ExecutionEndState>> = {
  [STATE.COMPLETED]: 'COMPLETED',
  [STATE.FAILED]: 'FAILED',
  [STATE.CANCELLED]: 'CANCELLED',
};

/**
 * The variables a triggered execution starts with: `{triggerType}` = `execution` and
 * `{endedExecution}`, what is known of the ended execution. Pure.
 */
export function endedExecutionVariables(
  inst: Execution,
  state: ExecutionEndState,
  reason: string,
): Record<string, unknown> {
  const failedNode = state === 'FAILED' ? (inst.error?.nodeId ?? null) : null;
  return {
    triggerType: 'execution',
    endedExecution: {
      id: inst.processInstanceId,
      processId: inst.processId,
      flowName: inst.processName,
      version: inst.processVersion,
      environment: inst.environment,
      state,
      startTime: inst.startTime,
      endTime: inst.endTime,
      failureCode: state === 'FAILED' ? (inst.error?.code ?? null) : null,
      failedNode,
      failedNodeName: failedNode === null ? null : (inst.nodes[failedNodeNi(inst, failedNode)]?.nodeName ?? failedNode),
      // A cancel has no error: its reason is the message.
      error: inst.error?.message ?? (state === 'COMPLETED' ? null : reason),
      output: inst.output,
    },
  } satisfies Record<TriggerStartKey<'execution'>, unknown>;
}

/** The id of the last node instance of node `nodeId` (its name is on it). */
function failedNodeNi(inst: Execution, nodeId: string): string {
  const all = Object.values(inst.nodes);
  for (let i = all.length - 1; i >= 0; i--) if (all[i]!.nodeId === nodeId) return all[i]!.id;
  return '';
}

/**
 * Starts each flow whose execution trigger watches `inst`, which has just ended (its
 * `instance.finished` written) for `reason`. Only top-level executions fire: children and executions
 * started by callProcess belong to their root's run. Never throws (records are written).
 */
export function fireExecutionTriggers(s: StepWriter, inst: Execution, reason: string): void {
  if (inst.parentInstanceId !== null || inst.root !== undefined) return;
  const ended = END_STATES[inst.stateCd];
  if (ended === undefined) return;
  const chain = [...(inst.triggeredBy?.chain ?? []), inst.processId];
  const depth = (inst.triggeredBy?.depth ?? 0) + 1;
  let data: Record<string, unknown> | undefined;
  for (const a of activeTriggers(s.state, 'execution')) {
    const { flow, environment, trigger } = a;
    if (flow.organization !== inst.organization || environment !== inst.environment) continue;
    if (!trigger.states.includes(ended)) continue;
    // No processId: every flow of the organization but the flow itself.
    if (trigger.processId === undefined ? flow.processId === inst.processId : trigger.processId !== inst.processId)
      continue;
    const name = `${a.definition.name} (${flow.processId})`;
    if (chain.includes(flow.processId)) {
      warn(
        s,
        inst,
        `execution trigger of ${name} not started: TRIGGER_LOOP: the flow is in this execution's trigger chain`,
      );
      continue;
    }
    if (depth > s.ctx.limits.triggerDepth) {
      warn(
        s,
        inst,
        `execution trigger of ${name} not started: TRIGGER_DEPTH_EXCEEDED: the chain of triggered executions is ${s.ctx.limits.triggerDepth} long (the trigger-depth limit)`,
      );
      continue;
    }
    data ??= endedExecutionVariables(inst, ended, reason);
    let params: LaunchParams;
    let placement: Placement;
    try {
      params = resolveStart(s.state, s.ctx, {
        organization: flow.organization,
        processId: flow.processId,
        environment,
        data,
      });
      admit(s, flow.organization, 1);
      placement = placeStart(s, params);
      admitStarts(s, flow.organization, 1);
    } catch (err) {
      const code = err instanceof WfxError ? err.code : 'INTERNAL_ERROR';
      warn(s, inst, `execution trigger of ${name} not started: ${code}: ${errorMessage(err)}`);
      continue;
    }
    const triggeredBy: TriggeredBy = {
      processInstanceId: inst.processInstanceId,
      processId: inst.processId,
      processName: inst.processName,
      state: ended,
      depth,
      chain,
    };
    // In the ended execution's partition, so that the step changes one partition; run by a step of its own.
    if (placement !== 'run' && placement !== 'queue') cancelOldest(s, placement.cancel);
    const started =
      placement === 'queue'
        ? s.launchQueued({ ...params, triggeredBy }, inst.processInstanceId)
        : s.launch({ ...params, triggeredBy }, true, inst.processInstanceId);
    log(s, inst, 'INFO', `execution trigger started ${name}: ${started.processInstanceId}`);
  }
}

function warn(s: StepWriter, inst: Execution, message: string): void {
  log(s, inst, 'WARN', message);
}

function log(s: StepWriter, inst: Execution, level: LogEntry['level'], message: string): void {
  s.emit({
    type: 'instance.logged',
    instanceId: inst.processInstanceId,
    entry: { nodeId: '', nodeName: inst.processName, nodeType: 'process', level, message, timestamp: s.at },
  });
}
