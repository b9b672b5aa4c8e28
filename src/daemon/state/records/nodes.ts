/**
 * Records of what an execution's nodes do: a token enters a node, which runs, completes or is
 * left; a non-interrupting boundary event fires; a join counts its arrivals. A node that waits
 * meanwhile has the records of node-waits.ts. The execution's log lines and the subscription
 * index follow from them, so they need no records of their own.
 */
import type { AiUsage } from '../agent.js';
import { execution } from '../executions.js';
import { nodesAt } from '../../../shared/flow/types.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import { unindexJob } from '../job-queues.js';
import { ConcurrencySlots } from '../concurrency-slots.js';
import { LiveCounts } from '../live-counts.js';
import { appendLog } from '../log-line.js';
import { countLiveNode, setVariables } from '../sizes.js';
import { STATUS, type Execution, type NodeInstance, type StatusCd, type WfxState, type Writable } from '../state.js';
import type { Handlers } from './handlers.js';
import { unsubscribe } from './subscription-index.js';
import { indexTaskNode } from '../task-index.js';

/** The records of an execution's nodes (WfxRecord). */
export type NodeRecord =
  /** A token reached a node: a node instance is created, Active. Name and type come from the flow version. */
  | {
      readonly type: 'node.entered';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly nodeId: string;
      readonly at: string;
    }
  /**
   * A node entered and completed within one step (most nodes): node.entered and node.completed
   * in one record.
   */
  | {
      readonly type: 'node.ran';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly nodeId: string;
      readonly at: string;
      readonly variables?: Record<string, unknown>;
      readonly output?: Record<string, unknown>;
      /** What its log's `completed` line adds: the branch a gateway took. */
      readonly note?: string;
    }
  /**
   * Several nodes of one execution, each as `node.ran`, in order and at one time: how the
   * journal holds a run of them (coalesceNodeRuns), so a step through many nodes is one
   * record, not one per node.
   */
  | {
      readonly type: 'nodes.ran';
      readonly instanceId: string;
      readonly at: string;
      readonly nodes: ReadonlyArray<NodeRun>;
    }
  /** A non-interrupting boundary event of the node fired (it fires once). */
  | {
      readonly type: 'boundary.fired';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly boundaryId: string;
      readonly at: string;
    }
  | {
      readonly type: 'node.completed';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
      /** Variables the node set (merged into the instance's variables). */
      readonly variables?: Record<string, unknown>;
      /** Values the node recorded as the execution's output (outputNode). */
      readonly output?: Record<string, unknown>;
      /** Model tokens the node's call used (aiTask): added to the execution's usage. */
      readonly usage?: AiUsage;
      /** What its log's `completed` line adds (node.ran's). */
      readonly note?: string;
    }
  | {
      readonly type: 'node.left';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly statusCd: typeof STATUS.FAILED | typeof STATUS.CANCELLED | typeof STATUS.TIMED_OUT;
      readonly at: string;
      readonly reason: string;
      readonly variables?: Record<string, unknown>;
      /** The tries a failed node made (its work's retries), when more than one. */
      readonly attempts?: number;
    }
  | {
      readonly type: 'join.updated';
      readonly instanceId: string;
      readonly nodeId: string;
      readonly arrivals: Record<string, number>;
    };

/** One node of a `nodes.ran` record: a `node.ran` without what the run shares. */
export interface NodeRun {
  readonly nodeInstanceId: string;
  readonly nodeId: string;
  readonly variables?: Record<string, unknown>;
  readonly output?: Record<string, unknown>;
  readonly note?: string;
}

type NodeRan = Extract<NodeRecord, { type: 'node.ran' }>;

/**
 * A `node.ran` record, its optional fields set only when given. Written out rather than with
 * conditional spreads (`...(x && { x })`): V8 copies a spread through a slow generic path, and
 * this runs for most nodes of every execution.
 */
export function nodeRan(
  instanceId: string,
  nodeInstanceId: string,
  nodeId: string,
  at: string,
  variables?: Record<string, unknown>,
  output?: Record<string, unknown>,
  note?: string,
): NodeRan {
  const r: Writable<NodeRan> = { type: 'node.ran', instanceId, nodeInstanceId, nodeId, at };
  if (variables) r.variables = variables;
  if (output) r.output = output;
  if (note !== undefined) r.note = note;
  return r;
}

/** A `node.ran` without what a run of them shares (rather than a rest destructuring, for the same reason). */
export function nodeRunOf(r: NodeRan): NodeRun {
  const run: Writable<NodeRun> = { nodeInstanceId: r.nodeInstanceId, nodeId: r.nodeId };
  if (r.variables !== undefined) run.variables = r.variables;
  if (r.output !== undefined) run.output = r.output;
  if (r.note !== undefined) run.note = r.note;
  return run;
}

const STATUS_WORD: Record<StatusCd, string> = {
  0: 'started',
  1: 'waiting',
  2: 'completed',
  3: 'failed',
  4: 'cancelled',
  5: 'timed out',
};

/** Creates the node instance a token entered (Active); name and type come from the flow version. */
function enter(
  state: WfxState,
  r: { instanceId: string; nodeInstanceId: string; nodeId: string; at: string },
): NodeInstance | null {
  const inst = execution(state, r.instanceId);
  if (!inst) return null;
  const definition = state.flows[inst.processId]?.versions[inst.processVersion]?.definition;
  const def = definition && (inst.scope ? nodesAt(definition, inst.scope)?.[r.nodeId] : definition.nodes[r.nodeId]);
  const node: NodeInstance = {
    id: r.nodeInstanceId,
    nodeId: r.nodeId,
    nodeName: def?.name ?? r.nodeId,
    nodeType: def?.type ?? 'unknown',
    statusCd: STATUS.ACTIVE,
    startTime: r.at,
    endTime: null,
    wait: null,
  };
  countLiveNode(inst, 1); // before it is in: a first count walks the nodes
  inst.nodes[r.nodeInstanceId] = node;
  inst.nodeCount++;
  appendLog(inst, node, 'INFO', 'started', r.at);
  return node;
}

/** Completes a node instance: its variables and output merged into the execution's. */
function complete(
  inst: Execution,
  node: NodeInstance,
  r: { at: string; variables?: Record<string, unknown>; output?: Record<string, unknown>; note?: string },
): void {
  if (node.statusCd === STATUS.ACTIVE || node.statusCd === STATUS.WAITING) countLiveNode(inst, -1);
  node.statusCd = STATUS.COMPLETED;
  node.endTime = r.at;
  node.wait = null;
  if (r.variables) setVariables(inst, r.variables);
  if (r.output) inst.output = extensibleCopy(inst.output ?? {}, r.output);
  const message = r.note === undefined ? 'completed' : `completed: ${r.note}`;
  appendLog(inst, node, 'INFO', message, r.at, r.variables !== undefined);
}

/**
 * Takes a node that stops waiting out of what its wait indexed it in (the subscriptions, the job
 * queues), and returns the status it had.
 */
export function leaveWait(state: WfxState, inst: Execution, node: NodeInstance): StatusCd {
  unsubscribe(state, inst, node);
  unindexJob(state, inst, node);
  // A queued start given its slot (or left as its execution ends, which then frees it).
  if (node.wait?.kind === 'queue' && node.statusCd === STATUS.WAITING) ConcurrencySlots.held(state)?.hold(inst);
  return node.statusCd;
}

/** The reducer's part for an execution's nodes (records.ts). */
export const nodeHandlers: Handlers<NodeRecord> = {
  'node.entered': (state, r) => {
    const node = enter(state, r);
    // A node.ran enters and completes at once: the counts see no change, so it has no call.
    if (node) LiveCounts.held(state)?.node(execution(state, r.instanceId)!, null, STATUS.ACTIVE);
  },
  'node.ran': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = enter(state, r);
    if (inst && node) complete(inst, node, r);
  },
  'nodes.ran': (state, r) => {
    for (const n of r.nodes)
      nodeHandlers['node.ran'](
        state,
        nodeRan(r.instanceId, n.nodeInstanceId, n.nodeId, r.at, n.variables, n.output, n.note),
      );
  },
  'node.completed': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const from = leaveWait(state, inst, node);
    complete(inst, node, r);
    indexTaskNode(state, inst, node);
    LiveCounts.held(state)?.node(inst, from, STATUS.COMPLETED);
    if (r.usage) {
      const u = inst.usage;
      inst.usage = {
        inputTokens: (u?.inputTokens ?? 0) + r.usage.inputTokens,
        outputTokens: (u?.outputTokens ?? 0) + r.usage.outputTokens,
        calls: (u?.calls ?? 0) + 1,
      };
    }
  },
  'node.left': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const from = leaveWait(state, inst, node);
    if (from === STATUS.ACTIVE || from === STATUS.WAITING) countLiveNode(inst, -1);
    node.statusCd = r.statusCd;
    LiveCounts.held(state)?.node(inst, from, r.statusCd);
    node.endTime = r.at;
    node.wait = null;
    if (r.attempts !== undefined) node.attempts = r.attempts;
    indexTaskNode(state, inst, node);
    if (r.variables) setVariables(inst, r.variables);
    const level = r.statusCd === STATUS.FAILED ? 'ERROR' : 'WARN';
    appendLog(inst, node, level, `${STATUS_WORD[r.statusCd]}: ${r.reason}`, r.at, r.variables !== undefined);
  },
  'boundary.fired': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    (node.fired ??= []).push(r.boundaryId);
    appendLog(inst, node, 'INFO', `boundary event ${r.boundaryId} fired`, r.at);
  },
  'join.updated': (state, r) => {
    const inst = execution(state, r.instanceId);
    if (!inst) return;
    if (Object.keys(r.arrivals).length === 0) delete inst.joins[r.nodeId];
    else inst.joins[r.nodeId] = { ...r.arrivals };
  },
};
