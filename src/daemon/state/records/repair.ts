/**
 * Records of an operator's recovery of a failed execution: the execution put back to Running
 * (read back from history when it had been archived), and a node that failed because its child
 * did put back to waiting for that child, which is retried in its place. The nodes that run
 * again are new node instances (records/nodes.ts); what a replay starts is an `instance.started`
 * with `replayOf` (records/execution.ts).
 */
import { ExecutionTable } from '../execution-table.js';
import { execution } from '../executions.js';
import { ConcurrencySlots } from '../concurrency-slots.js';
import { LiveCounts } from '../live-counts.js';
import { appendLog } from '../log-line.js';
import { noteTriggeredStart } from '../trigger-fires.js';
import { countLiveNode, setVariables } from '../sizes.js';
import { STATE, STATUS, type Execution, type ExecutionError } from '../state.js';
import type { Handlers } from './handlers.js';
import { indexTaskExecution, indexTaskNode } from '../task-index.js';

/** The records of recovery (WfxRecord). */
export type RepairRecord =
  /**
   * A failed execution runs again: Running, its error cleared and kept in `retries`, `set`
   * merged into its variables. `instance`: the execution as history holds it, when it had
   * left the live state (it comes back under its own id).
   */
  | {
      readonly type: 'instance.revived';
      readonly instanceId: string;
      readonly at: string;
      readonly by: string;
      readonly error: ExecutionError;
      readonly set?: Record<string, unknown>;
      readonly instance?: Execution;
    }
  /** A node that failed because its child execution failed waits for that child again (revived with it). */
  | {
      readonly type: 'node.revived';
      readonly instanceId: string;
      readonly nodeInstanceId: string;
      readonly at: string;
    };

/** The reducer's part for recovery (records.ts). */
export const repairHandlers: Handlers<RepairRecord> = {
  'instance.revived': (state, r) => {
    if (r.instance !== undefined && execution(state, r.instanceId) === undefined)
      ExecutionTable.of(state).put(r.instance);
    const inst = execution(state, r.instanceId);
    if (!inst || inst.stateCd !== STATE.FAILED) return;
    inst.stateCd = STATE.RUNNING;
    inst.endTime = null;
    inst.error = null;
    const set = r.set === undefined ? undefined : Object.keys(r.set);
    (inst.retries ??= []).push({ at: r.at, by: r.by, error: r.error, ...(set && { set }) });
    if (r.set !== undefined) setVariables(inst, r.set);
    LiveCounts.held(state)?.started(inst);
    if (inst.concurrency !== undefined) ConcurrencySlots.held(state)?.hold(inst);
    indexTaskExecution(state, inst);
    if (inst.triggeredBy !== undefined) noteTriggeredStart(state, inst);
    const where = r.error.nodeId === null ? '' : ` at ${r.error.nodeId}`;
    const setText = set === undefined || set.length === 0 ? '' : ` with ${set.join(', ')} set`;
    appendLog(
      inst,
      null,
      'INFO',
      `execution retried by ${r.by}${setText} (attempt ${inst.retries.length + 1}, after ${r.error.code}${where})`,
      r.at,
      true,
    );
  },
  'node.revived': (state, r) => {
    const inst = execution(state, r.instanceId);
    const node = inst?.nodes[r.nodeInstanceId];
    if (!inst || !node || node.statusCd !== STATUS.FAILED) return;
    countLiveNode(inst, 1);
    node.statusCd = STATUS.WAITING;
    node.endTime = null;
    node.wait = { kind: 'child', dueAt: null };
    indexTaskNode(state, inst, node);
    LiveCounts.held(state)?.node(inst, STATUS.FAILED, STATUS.WAITING);
    appendLog(inst, node, 'INFO', 'retried: waiting for its child execution', r.at);
  },
};
