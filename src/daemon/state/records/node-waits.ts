/**
 * Records of a node that waits (on input, an event, a timer, a child, its loop, its tool calls
 * or its job): it starts waiting, its loop progresses, its agent takes a turn, its job is locked
 * or given back, it is answered, it goes back to work. The records of a node's run (entered,
 * ran, completed, left) are nodes.ts's.
 */
import { applyAgentUpdate, type AgentUpdate } from '../agent.js';
import { execution } from '../executions.js';
import { applyJobLock, indexJobWait, jobWaitingLine, type JobLockReason } from '../job-queues.js';
import { LiveCounts } from '../live-counts.js';
import { ConcurrencySlots } from '../concurrency-slots.js';
import { appendLog } from '../log-line.js';
import { progressedWait, type LoopProgress } from '../loop-progress.js';
import { setVariables } from '../sizes.js';
import { STATUS, type JobLock, type Wait } from '../state.js';
import type { Handlers } from './handlers.js';
import { subscribe } from './subscription-index.js';
import { leaveWait } from './nodes.js';
import { indexTaskNode } from '../task-index.js';

/** The records of a waiting node (WfxRecord). */
export type NodeWaitRecord =
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
  /** A waiting input node or user task is claimed by `by` (api/caller.ts, actorOf), or given back (`by` null). */
  | {
      readonly type: 'node.claimed';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly by: string | null;
      readonly at: string;
    }
  /** A waiting node goes back to work outside the step (a callAgent's next model turn): Active again. */
  | {
      readonly type: 'node.working';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
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
    case 'queue':
      return "queued: waiting for a slot of the flow's concurrency limit";
  }
}

/** The reducer's part for a waiting node (records.ts). */
export const nodeWaitHandlers: Handlers<NodeWaitRecord> = {
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
    if (r.wait.kind === 'queue') ConcurrencySlots.held(state)?.enqueue(inst);
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
  'node.claimed': (state, r) => {
    const node = execution(state, r.instanceId)?.nodes[r.nodeInstanceId];
    if (!node) return;
    if (r.by === null) {
      delete node.claimedBy;
      delete node.claimedAt;
    } else {
      node.claimedBy = r.by;
      node.claimedAt = r.at;
    }
  },
  'node.working': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const from = leaveWait(state, inst, node);
    node.statusCd = STATUS.ACTIVE;
    node.wait = null;
    indexTaskNode(state, inst, node);
    LiveCounts.held(state)?.node(inst, from, STATUS.ACTIVE);
  },
  'job.locked': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node) return;
    const line = applyJobLock(state, inst, node, r.lock, r.reason);
    if (line !== null) appendLog(inst, node, 'INFO', line, r.at);
  },
};
