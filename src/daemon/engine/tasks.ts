import type { WaitingTask } from '../../shared/api/index.js';
import { InstanceTable } from '../state/instance-table.js';
import { STATE, STATUS, type Instance, type NodeInstance, type WfxState } from '../state/state.js';

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

/** Where a task sorts (oldest waiting first) and what a cursor names: ISO times compare as text. */
const sortKey = (t: WaitingTask) => `${t.waitingSince}|${t.processInstanceId}|${t.nodeInstanceId}`;

/**
 * The waiting input nodes and user tasks, oldest waiting first, a page at a time. Pure: reads
 * the live state only. Cost: one pass over the live executions and their node instances (the
 * state keeps no index of input waits; history holds finished executions only, so it is never
 * read). The live state is what the daemon holds in memory anyway, so this is O(live node
 * instances), with no I/O, plus a sort of the waiting ones.
 */
export function waitingTasks(state: WfxState, filter: TaskFilter): { items: WaitingTask[]; nextCursor: string | null } {
  const found: WaitingTask[] = [];
  for (const inst of InstanceTable.of(state).live()) {
    if (inst.stateCd !== STATE.RUNNING) continue;
    if (filter.organization !== null && inst.organization !== filter.organization) continue;
    if (filter.processId !== undefined && inst.processId !== filter.processId) continue;
    for (const node of Object.values(inst.nodes)) {
      const task = taskOf(inst, node);
      if (task && (filter.cursor === undefined || sortKey(task) > filter.cursor)) found.push(task);
    }
  }
  found.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
  const items = found.slice(0, filter.limit);
  return { items, nextCursor: found.length > items.length ? sortKey(items.at(-1)!) : null };
}

function taskOf(inst: Instance, node: NodeInstance): WaitingTask | null {
  const w = node.wait;
  if (node.statusCd !== STATUS.WAITING || w?.kind !== 'input') return null;
  return {
    processInstanceId: inst.processInstanceId,
    processId: inst.processId,
    processName: inst.processName,
    processVersion: inst.processVersion,
    organization: inst.organization,
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
    dueAt: w.dueAt,
    waitingSince: node.startTime,
  };
}
