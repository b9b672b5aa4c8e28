/**
 * What a durable step calls for, as data: computed from its records and the effects it listed
 * (step/context.ts, StepEffect), in the order they are carried out, before effects.ts carries
 * any of it out. Pure: it reads the state as the step left it and changes nothing.
 */
import { parseDuration } from '../../shared/duration.js';
import { nodesAt, type BoundaryEventNode } from '../../shared/flow/types.js';
import type { WfxRecord } from '../state/records.js';
import type { BoundaryDue } from '../state/execution-summary.js';
import { STATUS, type Execution, type NodeInstance, type WfxState } from '../state/state.js';
import type { JobsWaiting } from './engine-events.js';
import { boundaryKey, nodeKey, type NodeKey, type TimerKey } from './keys.js';
import { lifecycleOf, type LifecycleEvent } from './lifecycle.js';
import type { StepContext, StepEffect } from './step/index.js';
import { execution } from '../state/executions.js';

/** One thing a durable step calls for (carried out by Effects.carryOut, in the plan's order). */
export type PlannedEffect =
  /** The step's spans to end and export (tracing on). */
  | { readonly kind: 'spans'; readonly records: readonly WfxRecord[] }
  /** An execution's log lines up to `upTo` to stream (those not streamed yet). */
  | { readonly kind: 'logs'; readonly instanceId: string; readonly upTo: number }
  /** The step's records to count (metrics on). */
  | { readonly kind: 'metrics'; readonly records: readonly WfxRecord[] }
  /** A lifecycle event to publish. */
  | { readonly kind: 'lifecycle'; readonly event: LifecycleEvent }
  /** A job waits for a worker: the jobs API's long polls wake. */
  | { readonly kind: 'jobs'; readonly waiting: JobsWaiting }
  /** A timer to arm (or re-arm) at `at`, ms since the epoch. */
  | { readonly kind: 'timer.set'; readonly key: TimerKey; readonly at: number }
  | { readonly kind: 'timer.delete'; readonly key: TimerKey }
  /** The node stopped: its work under way, if any, is aborted. */
  | { readonly kind: 'work.stop'; readonly key: NodeKey }
  /** An execution finished: to history. */
  | { readonly kind: 'finished'; readonly instanceId: string }
  /**
   * The step's own (step/context.ts, StepEffect): work to start, an execution to continue later,
   * a kept message to claim, a thrown event to pass on or to deliver by a step of its own.
   */
  | StepEffect;

const NO_LOGS: ReadonlyArray<string | number> = [];

/** The step's own effects planned after its work, in this order (each kind in the step's order). */
const LATER = ['claim', 'pass', 'deliver'] as const;

/** Which of the engine's events have listeners, and what is watched: what no one hears is not planned. */
export interface Listening {
  readonly lifecycle: boolean;
  readonly jobs: boolean;
  /** Tracing is on. */
  readonly spans: boolean;
  /** Metrics are kept. */
  readonly metrics: boolean;
}

/**
 * The one plan of a durable step, everything it calls for in the order it is carried out: its
 * spans; the log lines of the executions it touched (`logsUpTo`: pairs of id and log length,
 * flat, as they stood when the step ended); its metrics; per record, in order, its lifecycle
 * events, the job it leaves waiting, the timers it arms and disarms and the work it stops; then
 * the executions it finished; then what the step itself listed, work and deferred executions
 * first (in its order), then kept messages to claim, then thrown events to pass on and to deliver.
 */
export function planEffects(
  state: WfxState,
  flows: Pick<StepContext, 'flowOf'>,
  records: readonly WfxRecord[],
  effects: readonly StepEffect[],
  listening: Listening,
  logsUpTo: ReadonlyArray<string | number> = NO_LOGS,
): PlannedEffect[] {
  const plan: PlannedEffect[] = [];
  if (listening.spans) plan.push({ kind: 'spans', records });
  for (let p = 0; p < logsUpTo.length; p += 2)
    plan.push({ kind: 'logs', instanceId: logsUpTo[p] as string, upTo: logsUpTo[p + 1] as number });
  if (listening.metrics) plan.push({ kind: 'metrics', records });
  for (const r of records) {
    if (listening.lifecycle) for (const event of lifecycleOf(state, r)) plan.push({ kind: 'lifecycle', event });
    if (listening.jobs) {
      const waiting = jobsWaiting(state, r);
      if (waiting) plan.push({ kind: 'jobs', waiting });
    }
    if (r.type === 'node.waiting' && r.wait.dueAt)
      plan.push({ kind: 'timer.set', key: nodeKey(r.instanceId, r.nodeInstanceId), at: Date.parse(r.wait.dueAt) });
    else if (r.type === 'node.completed' || r.type === 'node.left') {
      const key = nodeKey(r.instanceId, r.nodeInstanceId);
      plan.push({ kind: 'timer.delete', key });
      disarmBoundaries(state, flows, r.instanceId, r.nodeInstanceId, plan);
      plan.push({ kind: 'work.stop', key });
    } else if (r.type === 'boundary.fired')
      plan.push({ kind: 'timer.delete', key: boundaryKey(r.instanceId, r.nodeInstanceId, r.boundaryId) });
    else if (r.type === 'instance.moved') planMoved(state, flows, r, plan);
    if (
      r.type === 'node.entered' ||
      (r.type === 'node.waiting' &&
        execution(state, r.instanceId)?.nodes[r.nodeInstanceId]?.statusCd === STATUS.WAITING)
    ) {
      const inst = execution(state, r.instanceId);
      if (inst) armBoundaries(flows, inst, r.nodeInstanceId, plan);
    }
  }
  for (const r of records)
    if (r.type === 'instance.finished') plan.push({ kind: 'finished', instanceId: r.instanceId });
  for (const e of effects) if (e.kind === 'work' || e.kind === 'defer') plan.push(e);
  for (const kind of LATER) for (const e of effects) if (e.kind === kind) plan.push(e);
  return plan;
}

/**
 * Plans the timers of the timer boundary events of a live node that have not fired: each is
 * due its duration after the node started, so a restart arms them again at the same instant
 * (overdue ones fire at once).
 */
export function armBoundaries(
  flows: Pick<StepContext, 'flowOf'>,
  inst: Execution,
  nodeInstanceId: string,
  plan: PlannedEffect[],
): void {
  const ni = inst.nodes[nodeInstanceId];
  if (!ni || (ni.statusCd !== STATUS.ACTIVE && ni.statusCd !== STATUS.WAITING)) return;
  for (const [id, at] of boundaryTimers(flows, inst, ni))
    plan.push({ kind: 'timer.set', key: boundaryKey(inst.processInstanceId, ni.id, id), at });
}

/** The unfired timer boundary events of node `ni` and when each is due (ms): its duration after the node started. */
function boundaryTimers(flows: Pick<StepContext, 'flowOf'>, inst: Execution, ni: NodeInstance): [string, number][] {
  const { nodes, graph } = flows.flowOf(inst);
  const out: [string, number][] = [];
  for (const id of graph.boundaries(ni.nodeId)) {
    const b = nodes[id] as BoundaryEventNode;
    if (b.event !== 'timer' || b.duration === undefined || ni.fired?.includes(id)) continue;
    out.push([id, Date.parse(ni.startTime) + parseDuration(b.duration)]);
  }
  return out;
}

/** The due times of the unfired timer boundary events of a live node, for an execution's summary (state/execution-summary.ts). */
export function boundaryDue(flows: Pick<StepContext, 'flowOf'>): BoundaryDue {
  return (inst, ni) => boundaryTimers(flows, inst, ni).map(([, at]) => at);
}

/** Plans the removal of the timers of every boundary event of a node. */
export function disarmBoundaries(
  state: WfxState,
  flows: Pick<StepContext, 'flowOf'>,
  instanceId: string,
  nodeInstanceId: string,
  plan: PlannedEffect[],
): void {
  const inst = execution(state, instanceId);
  const ni = inst?.nodes[nodeInstanceId];
  if (!inst || !ni) return;
  for (const id of flows.flowOf(inst).graph.boundaries(ni.nodeId))
    plan.push({ kind: 'timer.delete', key: boundaryKey(instanceId, nodeInstanceId, id) });
}

/**
 * Plans the timers of an execution moved to another version: its live nodes' timer boundary
 * events of the version it left forgotten and the target's armed (due their duration after
 * the node started, as ever), and the due times of the waits the move made again set.
 */
function planMoved(
  state: WfxState,
  flows: Pick<StepContext, 'flowOf'>,
  r: Extract<WfxRecord, { type: 'instance.moved' }>,
  plan: PlannedEffect[],
): void {
  const inst = execution(state, r.instanceId);
  if (!inst) return;
  const left = state.flows[inst.processId]?.versions[r.fromVersion]?.definition;
  const before = (left && nodesAt(left, inst.scope)) ?? {};
  for (const id in inst.nodes) {
    const ni = inst.nodes[id]!;
    if (ni.statusCd !== STATUS.ACTIVE && ni.statusCd !== STATUS.WAITING) continue;
    for (const [bid, b] of Object.entries(before))
      if (b.type === 'boundaryEvent' && b.attachedTo === ni.nodeId)
        plan.push({ kind: 'timer.delete', key: boundaryKey(r.instanceId, ni.id, bid) });
    armBoundaries(flows, inst, ni.id, plan);
    const wait = r.waits?.[id];
    if (wait === undefined) continue;
    const key = nodeKey(r.instanceId, ni.id);
    plan.push(wait.dueAt ? { kind: 'timer.set', key, at: Date.parse(wait.dueAt) } : { kind: 'timer.delete', key });
  }
}

/** The job a record leaves waiting for a worker, if it does (the jobs API's long polls wake). */
function jobsWaiting(state: WfxState, r: WfxRecord): JobsWaiting | null {
  if (!(r.type === 'node.waiting' && r.wait.kind === 'job') && !(r.type === 'job.locked' && r.lock === null))
    return null;
  const inst = execution(state, r.instanceId);
  const wait = inst?.nodes[r.nodeInstanceId]?.wait;
  return inst && wait?.kind === 'job'
    ? { organization: inst.organization, domain: wait.domain, action: wait.action }
    : null;
}
