/* A flow with every shape the diagram draws, and executions of it, for the console's tests. */
import type { InstanceView, NodeView, StatusCd } from '../../src/shared/api/process.js';
import type { FlowDefinition } from '../../src/shared/flow/types.js';

/** A gateway, a loop, an embedded subprocess, an input with a timer boundary event, an errorFlow, an ifElse. */
export const FLOW: FlowDefinition = {
  processId: '7d3f1c2a-5b6e-4c8d-9a0b-1c2d3e4f5a6b',
  name: 'Demo',
  nodes: {
    start: { type: 'startEvent', next: 'route' },
    route: {
      type: 'exclusiveGateway',
      name: 'Big order?',
      branches: [{ condition: '${total > 100}', next: 'lines' }],
      default: 'small',
    },
    small: { type: 'setVariable', name: 'Mark small', variables: { size: 'small' }, next: 'done' },
    lines: {
      type: 'loopNode',
      name: 'Price each line',
      collection: '{items}',
      nodes: {
        s: { type: 'startEvent', next: 'calc' },
        calc: { type: 'scriptTask', name: 'Compute price', script: 'return {};', next: 'e' },
        e: { type: 'endEvent' },
      },
      next: 'check',
    },
    check: {
      type: 'subProcess',
      name: 'Check stock',
      nodes: {
        s2: { type: 'startEvent', next: 'look' },
        look: { type: 'setVariable', variables: { inStock: true }, next: 'e2' },
        e2: { type: 'endEvent' },
      },
      next: 'approve',
      errorFlow: 'failed',
    },
    approve: { type: 'inputNode', name: 'Approve', inputType: 'checkbox', options: ['yes'], next: 'decide' },
    wait: {
      type: 'boundaryEvent',
      name: 'Too slow',
      attachedTo: 'approve',
      event: 'timer',
      duration: '8s',
      next: 'escalate',
    },
    decide: { type: 'ifElse', condition: '${approved}', then: 'done', else: 'failed' },
    escalate: { type: 'setVariable', name: 'Escalate', variables: { escalated: true }, next: 'late' },
    late: { type: 'endEvent', name: 'Escalated' },
    failed: { type: 'endEvent', name: 'Failed' },
    done: { type: 'endEvent', name: 'Done' },
  },
};

/** An ISO time `s` seconds after a fixed start. */
export const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, s)).toISOString();

let made = 0;
/** A node instance of `nodeId` from second `from` to `to` (null: still there). */
export function ni(
  nodeId: string,
  statusCd: StatusCd,
  from: number,
  to: number | null,
  extra: Partial<NodeView> = {},
): NodeView {
  made++;
  return {
    nodeInstanceId: `n${made}`,
    nodeId,
    nodeName: nodeId,
    nodeType: (FLOW.nodes as Record<string, { type: string }>)[nodeId]?.type ?? 'task',
    statusCd,
    startTime: at(from),
    endTime: to === null ? null : at(to),
    ...extra,
  };
}

/** An execution with `nodes`. */
export function run(nodes: NodeView[], extra: Partial<InstanceView> = {}): InstanceView {
  return {
    processInstanceId: 'exec-1',
    processId: FLOW.processId,
    processName: 'Demo',
    processVersion: '1',
    stateCd: 0,
    state: 'RUNNING',
    startTime: at(0),
    endTime: null,
    correlationKey: null,
    organization: 'default',
    data: {},
    output: null,
    parentInstanceId: null,
    environment: 'PRODUCTION',
    nodes,
    ...extra,
  };
}

/**
 * The big-order path: the gateway took its branch, the loop ran three iterations, the
 * subprocess completed, the input timed out through its boundary event, escalated, ended.
 */
export const BIG_ORDER = run([
  ni('start', 2, 0, 0),
  ni('route', 2, 0, 0),
  ni('lines', 2, 0, 3, { childInstanceIds: ['it-1', 'it-2', 'it-3'] }),
  ni('check', 2, 3, 4, { childInstanceIds: ['sub-1'] }),
  ni('approve', 4, 4, 12),
  ni('wait', 2, 12, 12),
  ni('escalate', 2, 12, 12),
  ni('late', 2, 12, 12),
]);

/** An iteration of the loop: its body's nodes, the last still running. */
export const ITERATION = run([ni('s', 2, 1, 1), ni('calc', 0, 1, null)], {
  processInstanceId: 'it-3',
  parentInstanceId: 'exec-1',
  iteration: 2,
});
