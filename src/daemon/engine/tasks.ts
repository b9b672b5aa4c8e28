import type { WaitingTask } from '../../shared/api/index.js';
import { execution, type Executions } from '../state/executions.js';
import { parseDuration } from '../../shared/duration.js';
import { nodesAt, type FlowNode } from '../../shared/flow/types.js';
import { STATUS, type Execution, type NodeInstance, type WfxState } from '../state/state.js';
import { TaskIndex, taskKey, type TaskRef } from '../state/task-index.js';
import { MAX_CHILD_DEPTH } from './step/children.js';
import { ownEntry } from '../../shared/json-object.js';

/** One input node or user task waiting for POST /process/task: the wire's type (shared/api). */
export type { WaitingTask };

export interface TaskFilter {
  /** Only this organization's; null: every organization (system callers). */
  readonly organization: string | null;
  readonly processId?: string;
  readonly limit: number;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
}

/**
 * The waiting input nodes and user tasks, oldest waiting first, a page at a time. Reads the live
 * state only. Cost: the page's tasks read from the task index (state/task-index.ts, made by the
 * walk of a start, and keeping the tasks of executions that are not resident), then the page's
 * trees made resident (`Executions.ensure`: those trees, never all) and each task rendered from
 * its execution and node; executions that wait for nothing else are not visited. History holds
 * finished executions only, so it is never read.
 */
export async function waitingTasks(
  state: WfxState,
  executions: Executions,
  filter: TaskFilter,
): Promise<{ items: WaitingTask[]; nextCursor: string | null }> {
  const timers: BoundaryTimers = new Map();
  const found: WaitingTask[] = [];
  let cursor = filter.cursor;
  // One round, unless a task of the page stopped waiting while its tree was read: then the
  // page is filled from after the last one read. Each round moves the cursor on: bounded.
  for (;;) {
    const want = filter.limit + 1 - found.length;
    const refs = TaskIndex.of(state).page(filter.organization, filter.processId, cursor, want);
    if (refs.length === 0) break;
    const loading = executions.ensure([...new Set(refs.map((r) => r.instanceId))]);
    if (loading !== null) await loading;
    for (const ref of refs) {
      const inst = executions.get(ref.instanceId);
      const node = inst?.nodes[ref.nodeInstanceId];
      const task = inst && node && taskOf(state, inst, node, timers);
      if (task) found.push(task);
    }
    if (found.length > filter.limit || refs.length < want) break;
    cursor = taskKey(refs.at(-1)!);
  }
  const items = found.slice(0, filter.limit);
  return { items, nextCursor: found.length > items.length ? taskKey(toRef(items.at(-1)!)) : null };
}

/** Where task `t` sorts in the index (its cursor). */
const toRef = (t: WaitingTask): TaskRef => ({
  since: t.waitingSince,
  instanceId: t.processInstanceId,
  nodeInstanceId: t.nodeInstanceId,
});

/** The task of node `node` of `inst`, or null when it waits for no input (exported for tests). */
export function taskOf(
  state: WfxState,
  inst: Execution,
  node: NodeInstance,
  timers: BoundaryTimers = new Map(),
): WaitingTask | null {
  const w = node.wait;
  if (node.statusCd !== STATUS.WAITING || w?.kind !== 'input') return null;
  const agent = agentOf(state, inst);
  return {
    processInstanceId: inst.processInstanceId,
    processId: inst.processId,
    processName: inst.processName,
    processVersion: inst.processVersion,
    organization: inst.organization,
    environment: inst.environment,
    correlationKey: inst.correlationKey,
    nodeInstanceId: node.id,
    nodeId: node.nodeId,
    nodeName: node.nodeName,
    nodeType: node.nodeType,
    inputType: w.inputType,
    formTitle: w.formTitle,
    options: w.options,
    fields: w.fields,
    assignee: w.assignee,
    claim:
      node.claimedBy === undefined
        ? null
        : { by: node.claimedBy, name: callerName(state, node.claimedBy), at: node.claimedAt! },
    dueAt: dueAt(state, inst, node, timers),
    waitingSince: node.startTime,
    ...(agent && { agent }),
    ...(w.approval && { approval: w.approval }),
  };
}

/**
 * A caller named as actorOf names it (`key:<id>`, `oidc:<subject>`) as a person reads it: the
 * API key's name (a console session's is its key's), else the token's subject. Pure.
 */
export function callerName(state: WfxState, actor: string): string {
  if (actor.startsWith('key:')) return ownEntry(state.apiKeys, actor.slice(4))?.name ?? actor;
  if (actor.startsWith('oidc:')) return actor.slice(5);
  return actor;
}

/**
 * When the task stops waiting by itself: the earliest of its own timeout and the timer boundary
 * events attached to its node that have not fired (each due its duration after the node
 * started, as effect-plan.ts arms them). Null when neither will fire.
 */
function dueAt(state: WfxState, inst: Execution, node: NodeInstance, timers: BoundaryTimers): string | null {
  let due = node.wait?.dueAt ? Date.parse(node.wait.dueAt) : Infinity;
  const definition = state.flows[inst.processId]?.versions[inst.processVersion]?.definition;
  const nodes = definition ? nodesAt(definition, inst.scope) : undefined;
  if (nodes) {
    let byNode = timers.get(nodes);
    if (!byNode) timers.set(nodes, (byNode = boundaryTimers(nodes)));
    for (const b of byNode.get(node.nodeId) ?? [])
      if (!node.fired?.includes(b.id)) due = Math.min(due, Date.parse(node.startTime) + b.ms);
  }
  return Number.isFinite(due) ? new Date(due).toISOString() : null;
}

/** The timer boundary events of one node map, by the node each is attached to (read once per listing and map). */
export type BoundaryTimers = Map<object, Map<string, Array<{ id: string; ms: number }>>>;

function boundaryTimers(nodes: Readonly<Record<string, FlowNode>>): Map<string, Array<{ id: string; ms: number }>> {
  const byNode = new Map<string, Array<{ id: string; ms: number }>>();
  for (const [id, b] of Object.entries(nodes)) {
    if (b.type !== 'boundaryEvent' || b.event !== 'timer' || b.duration === undefined) continue;
    const list = byNode.get(b.attachedTo) ?? [];
    list.push({ id, ms: parseDuration(b.duration) });
    byNode.set(b.attachedTo, list);
  }
  return byNode;
}

/**
 * The callAgent whose tool call `inst` runs, itself or through the executions above it (a tool
 * flow's subprocess): the agent that waits for this task. Null when no agent is above it.
 */
function agentOf(state: WfxState, inst: Execution): WaitingTask['agent'] | null {
  let at: Execution | undefined = inst;
  for (let depth = 0; at && depth <= MAX_CHILD_DEPTH; depth++) {
    if (at.toolCallId !== undefined && at.parentInstanceId !== null && at.parentNodeInstanceId !== undefined) {
      const parent = execution(state, at.parentInstanceId);
      const node = parent?.nodes[at.parentNodeInstanceId];
      const call = node?.agent?.calls.find((c) => c.id === at!.toolCallId);
      if (!parent || !node || !call) return null;
      return {
        processInstanceId: parent.processInstanceId,
        nodeId: node.nodeId,
        nodeName: node.nodeName,
        tool: call.name,
      };
    }
    at = at.parentInstanceId === null ? undefined : execution(state, at.parentInstanceId);
  }
  return null;
}
