/**
 * The lifecycle events (SPEC.md section 4) that applied records stand for: the mapping from
 * the journal's records to what `/process/events` streams.
 */
import type { WfxRecord } from '../state/records.js';
import { STATUS, type WfxState } from '../state/state.js';
import { execution } from '../state/executions.js';

/** A lifecycle event (SPEC.md section 4), published once the transition is durable. */
export interface LifecycleEvent {
  readonly type:
    | 'PROCESS_STARTED'
    | 'PROCESS_COMPLETED'
    | 'PROCESS_FAILED'
    | 'PROCESS_CANCELLED'
    | 'PROCESS_RETRIED'
    | 'NODE_STARTED'
    | 'NODE_WAITING'
    | 'NODE_COMPLETED'
    | 'NODE_FAILED'
    | 'NODE_CANCELLED'
    | 'NODE_TIMEDOUT';
  readonly processInstanceId: string;
  readonly processId: string;
  readonly organization: string;
  readonly timestamp: string;
  readonly nodeId?: string;
  readonly nodeInstanceId?: string;
  readonly nodeType?: string;
  readonly statusCd?: number;
  readonly stateCd?: number;
}

const NODE_EVENT: Partial<Record<number, LifecycleEvent['type']>> = {
  [STATUS.FAILED]: 'NODE_FAILED',
  [STATUS.CANCELLED]: 'NODE_CANCELLED',
  [STATUS.TIMED_OUT]: 'NODE_TIMEDOUT',
};
const PROCESS_EVENT = { 1: 'PROCESS_COMPLETED', 2: 'PROCESS_FAILED', 3: 'PROCESS_CANCELLED' } as const;

/**
 * The lifecycle events record `r` stands for, read against `state` once `r` is applied (the
 * execution and node instance it names, as they are now). Pure read; none for records that
 * change no execution or name one no longer live.
 */
export function lifecycleOf(state: WfxState, r: WfxRecord): LifecycleEvent[] {
  if (r.type === 'instance.started') {
    const i = r.instance;
    return [
      {
        type: 'PROCESS_STARTED',
        processInstanceId: i.processInstanceId,
        processId: i.processId,
        organization: i.organization,
        timestamp: i.startTime,
        stateCd: 0,
      },
    ];
  }
  if (!('instanceId' in r)) return [];
  const inst = execution(state, r.instanceId);
  if (!inst) return [];
  const base = {
    processInstanceId: inst.processInstanceId,
    processId: inst.processId,
    organization: inst.organization,
  };
  if (r.type === 'instance.finished')
    return [{ type: PROCESS_EVENT[r.stateCd], ...base, timestamp: r.at, stateCd: r.stateCd }];
  if (r.type === 'instance.revived') return [{ type: 'PROCESS_RETRIED', ...base, timestamp: r.at, stateCd: 0 }];
  if (r.type === 'nodes.ran')
    return r.nodes.flatMap((n) => lifecycleOf(state, { type: 'node.ran', instanceId: r.instanceId, at: r.at, ...n }));
  if (!('nodeInstanceId' in r)) return [];
  const ni = inst.nodes[r.nodeInstanceId];
  if (!ni) return [];
  // A literal, not `{ ...base, nodeId, ... }`: one that starts with a spread is slow (extensibleCopy).
  const node = {
    processInstanceId: base.processInstanceId,
    processId: base.processId,
    organization: base.organization,
    nodeId: ni.nodeId,
    nodeInstanceId: ni.id,
    nodeType: ni.nodeType,
  };
  switch (r.type) {
    case 'node.entered':
      return [{ type: 'NODE_STARTED', ...node, timestamp: r.at, statusCd: STATUS.ACTIVE }];
    case 'node.ran':
      return [
        { type: 'NODE_STARTED', ...node, timestamp: r.at, statusCd: STATUS.ACTIVE },
        { type: 'NODE_COMPLETED', ...node, timestamp: r.at, statusCd: STATUS.COMPLETED },
      ];
    case 'node.waiting':
    case 'node.revived':
    case 'loop.progressed':
      return [{ type: 'NODE_WAITING', ...node, timestamp: r.at, statusCd: STATUS.WAITING }];
    case 'node.completed':
      return [{ type: 'NODE_COMPLETED', ...node, timestamp: r.at, statusCd: STATUS.COMPLETED }];
    case 'node.left':
      return [{ type: NODE_EVENT[r.statusCd]!, ...node, timestamp: r.at, statusCd: r.statusCd }];
    default:
      return [];
  }
}
