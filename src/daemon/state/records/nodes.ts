/**
 * Records of what an execution's nodes do: a token enters a node, which runs, waits (on input,
 * an event, a timer, a child, its loop, its tool calls or its job), completes or is left; a
 * join counts its arrivals. The execution's log lines and the subscription index follow from
 * them, so they need no records of their own.
 */
import type { AiUsage } from '../agent.js';
import { execution } from '../executions.js';
import { nodesAt } from '../../../shared/flow/types.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import { applyAgentUpdate, type AgentUpdate } from '../agent.js';
import { applyJobLock, indexJobWait, jobWaitingLine, unindexJob, type JobLockReason } from '../job-queues.js';
import { LiveCounts } from '../live-counts.js';
import { appendLog } from '../log-line.js';
import { progressedWait, type LoopProgress } from '../loop-progress.js';
import { countLiveNode, setVariables } from '../sizes.js';
import {
  STATUS,
  type Instance,
  type JobLock,
  type NodeInstance,
  type StatusCd,
  type Wait,
  type WfxState,
  type Writable,
} from '../state.js';
import type { Handlers } from './handlers.js';
import { subscribe, unsubscribe } from './subscription-index.js';
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
  /** A node waits (again: a loop writes its progress this way), with variables it set meanwhile. */
  | {
      readonly type: 'node.waiting';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly wait: Wait;
      readonly at: string;
      readonly variables?: Record<string, unknown>;
    }
  /** A waiting loopNode's progress (loop-progress.ts): its counts, the values collected since, variables handed on. */
  | ({
      readonly type: 'loop.progressed';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
    } & LoopProgress)
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
  /**
   * A callAgent's turn: the messages and tool calls appended to its state, a model answer
   * counted, tool calls ended (state/agent.ts). Emitted before the record that moves the node
   * on (node.waiting, node.working, node.completed or node.left) in the same step.
   */
  | ({
      readonly type: 'agent.updated';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
    } & AgentUpdate)
  /**
   * Who answered a waiting input node or user task (POST /process/task): emitted right before
   * the resume it causes, in the same step, so the answer and its author are one journal entry.
   */
  | {
      readonly type: 'node.answered';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly by: string;
      readonly at: string;
    }
  /** A waiting node goes back to work outside the step (a callAgent's next model turn): Active again. */
  | {
      readonly type: 'node.working';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
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
    }
  /**
   * A domainTask's job was locked to a worker (`activated`, `extended` by a heartbeat) or given
   * back (`released`, lock null): its node's wait gets the lock. A failed attempt is a new
   * `node.waiting` instead (the next attempt's wait).
   */
  | {
      readonly type: 'job.locked';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
      readonly lock: JobLock | null;
      readonly reason: JobLockReason;
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

function waitingFor(wait: Wait): string {
  switch (wait.kind) {
    case 'input':
      return 'waiting for input';
    case 'event':
      return `waiting for ${wait.eventType} "${wait.messageRef}"`;
    case 'timer':
      return `waiting for timer until ${wait.dueAt}`;
    case 'child':
      return 'waiting for its child execution';
    case 'loop': {
      const s = wait.state;
      const total = s.items === null ? '' : ` of ${s.items.length}`;
      return `iterations: ${s.done}${total} done, ${s.running} running`;
    }
    case 'tools':
      return 'waiting for its tool calls';
    case 'job':
      return jobWaitingLine(wait);
  }
}

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
  inst: Instance,
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
  'node.waiting': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const before = node.wait;
    const from = node.statusCd;
    node.statusCd = STATUS.WAITING;
    node.wait = r.wait;
    if (r.variables) setVariables(inst, r.variables);
    if (r.wait.kind === 'event') subscribe(state, inst, node, r.wait);
    if (r.wait.kind === 'job' || before?.kind === 'job') indexJobWait(state, inst, node, before);
    indexTaskNode(state, inst, node);
    LiveCounts.held(state)?.node(inst, from, STATUS.WAITING);
    appendLog(inst, node, 'INFO', waitingFor(r.wait), r.at, r.variables !== undefined);
  },
  'loop.progressed': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    const wait = node && progressedWait(node, r);
    if (!inst || !node || !wait) return;
    node.wait = wait;
    if (r.variables) setVariables(inst, r.variables);
    appendLog(inst, node, 'INFO', waitingFor(wait), r.at, r.variables !== undefined);
  },
  'node.completed': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    unsubscribe(state, inst, node);
    unindexJob(state, inst, node);
    const from = node.statusCd;
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
    unsubscribe(state, inst, node);
    unindexJob(state, inst, node);
    const from = node.statusCd;
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
  'agent.updated': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    for (const line of applyAgentUpdate(inst, node, r)) appendLog(inst, node, 'INFO', line, r.at);
  },
  'node.answered': (state, r) => {
    const node = execution(state, r.instanceId)?.nodes[r.nodeInstanceId];
    if (!node) return;
    node.answeredBy = r.by;
    node.answeredAt = r.at;
  },
  'node.working': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    unsubscribe(state, inst, node);
    unindexJob(state, inst, node);
    const from = node.statusCd;
    node.statusCd = STATUS.ACTIVE;
    node.wait = null;
    indexTaskNode(state, inst, node);
    LiveCounts.held(state)?.node(inst, from, STATUS.ACTIVE);
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
  'job.locked': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const line = applyJobLock(state, inst, node, r.lock, r.reason);
    if (line !== null) appendLog(inst, node, 'INFO', line, r.at);
  },
};
