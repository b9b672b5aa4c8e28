/**
 * Records of an execution's lifecycle: started, a line logged, finished, archived out of the
 * live state. What its nodes do is in nodes.ts.
 */
import { extensibleCopy } from '../../../shared/json-object.js';
import { execution } from '../executions.js';
import { jsonSize } from '../../../shared/json-size.js';
import { linkToolChild } from '../agent.js';
import { ExecutionTable } from '../execution-table.js';
import { LiveCounts } from '../live-counts.js';
import { ConcurrencySlots } from '../concurrency-slots.js';
import { appendLog } from '../log-line.js';
import { pushLog } from '../sizes.js';
import { indexTaskExecution } from '../task-index.js';
import { noteTriggeredStart } from '../trigger-fires.js';
import { STATE, type Execution, type ExecutionError, type LogEntry, type Writable } from '../state.js';
import type { Handlers } from './handlers.js';

/** A new execution as its `instance.started` record carries it: everything but what it accumulates. */
export type ExecutionStart = Omit<
  Execution,
  'nodes' | 'nodeCount' | 'joins' | 'logs' | 'logSize' | 'liveNodes' | 'retries' | 'varsUnlogged'
>;

/** The records of an execution's lifecycle (WfxRecord). */
export type ExecutionRecord =
  | { readonly type: 'instance.started'; readonly instance: ExecutionStart }
  | {
      readonly type: 'instance.logged';
      readonly instanceId: string;
      readonly entry: LogEntry;
    }
  | {
      readonly type: 'instance.finished';
      readonly instanceId: string;
      readonly stateCd: 1 | 2 | 3;
      readonly at: string;
      readonly error?: ExecutionError;
    }
  | { readonly type: 'instance.archived'; readonly instanceId: string }
  /** Its search attributes are now `search` (a node's `search:` changed them). */
  | {
      readonly type: 'instance.searched';
      readonly instanceId: string;
      readonly search: Readonly<Record<string, string>>;
    }
  /**
   * Nothing of the tree rooted at `root` runs any more, as of `instanceId`'s end (whose record
   * it follows, in its partition): its tally (WfxState.treeCreated) is forgotten.
   */
  | { readonly type: 'tree.ended'; readonly instanceId: string; readonly root: string };

/**
 * The record of a new execution, its fields listed one by one: `{ ...params, processInstanceId,
 * ... }` (an object spread followed by keys the source lacks) is V8's slow path, far slower than
 * this literal (docs/decisions/011-no-object-spread-for-growing-objects.md).
 */
export function startedInstance(
  p: Omit<ExecutionStart, 'processInstanceId' | 'stateCd' | 'startTime' | 'endTime' | 'output' | 'error'>,
  id: string,
  at: string,
): ExecutionStart {
  return withChildFields(
    {
      processId: p.processId,
      processName: p.processName,
      processVersion: p.processVersion,
      organization: p.organization,
      environment: p.environment,
      correlationKey: p.correlationKey,
      parentInstanceId: p.parentInstanceId,
      variables: p.variables,
      processInstanceId: id,
      stateCd: STATE.RUNNING,
      startTime: at,
      endTime: null,
      output: null,
      error: null,
    },
    p,
  );
}

/** Copies the optional fields (a child's, a replay's, a trace), where `from` has them (absent, not undefined, otherwise). */
function withChildFields<T extends ExecutionStart>(
  to: T,
  from: Pick<
    ExecutionStart,
    | 'parentNodeInstanceId'
    | 'scope'
    | 'iteration'
    | 'toolCallId'
    | 'callDepth'
    | 'root'
    | 'replayOf'
    | 'trace'
    | 'triggeredBy'
    | 'concurrency'
    | 'priority'
    | 'search'
  >,
): T {
  const w = to as Writable<T>;
  if (from.trace !== undefined) w.trace = from.trace;
  if (from.replayOf !== undefined) w.replayOf = from.replayOf;
  if (from.root !== undefined) w.root = from.root;
  if (from.parentNodeInstanceId !== undefined) w.parentNodeInstanceId = from.parentNodeInstanceId;
  if (from.scope !== undefined) w.scope = from.scope;
  if (from.iteration !== undefined) w.iteration = from.iteration;
  if (from.toolCallId !== undefined) w.toolCallId = from.toolCallId;
  if (from.callDepth !== undefined) w.callDepth = from.callDepth;
  if (from.triggeredBy !== undefined) w.triggeredBy = from.triggeredBy;
  if (from.concurrency !== undefined) w.concurrency = from.concurrency;
  if (from.priority !== undefined) w.priority = from.priority;
  if (from.search !== undefined) w.search = from.search;
  return to;
}

/** The reducer's part for an execution's lifecycle (records.ts). */
export const executionHandlers: Handlers<ExecutionRecord> = {
  'instance.started': (state, r) => {
    // The record was serialized before it is applied (Store), so its objects can be kept. Its
    // fields are listed, not spread: see startedInstance.
    const s = r.instance;
    const inst: Execution = withChildFields(
      {
        processId: s.processId,
        processName: s.processName,
        processVersion: s.processVersion,
        organization: s.organization,
        environment: s.environment,
        correlationKey: s.correlationKey,
        parentInstanceId: s.parentInstanceId,
        processInstanceId: s.processInstanceId,
        stateCd: s.stateCd,
        startTime: s.startTime,
        endTime: s.endTime,
        output: s.output,
        error: s.error,
        // Nodes add to them: copied so that adding is not the slow path a spread's copy takes.
        variables: extensibleCopy(s.variables),
        nodes: {},
        nodeCount: 0,
        joins: {},
        logs: [],
        // In the literal, as every field: one added later would change the object's shape.
        varSize: s.varSize ?? jsonSize(s.variables),
        logSize: 0,
        liveNodes: 0,
      },
      s,
    );
    ExecutionTable.of(state).put(inst);
    LiveCounts.held(state)?.started(inst);
    if (inst.concurrency !== undefined) ConcurrencySlots.held(state)?.hold(inst);
    if (inst.root !== undefined) state.treeCreated[inst.root] = (state.treeCreated[inst.root] ?? 0) + 1;
    if (inst.triggeredBy !== undefined) noteTriggeredStart(state, inst);
    if (inst.parentInstanceId !== null && inst.parentNodeInstanceId !== undefined) {
      const parentInst = execution(state, inst.parentInstanceId);
      const parent = parentInst?.nodes[inst.parentNodeInstanceId];
      if (parent) (parent.children ??= []).push(inst.processInstanceId);
      if (parentInst && parent && inst.toolCallId !== undefined) {
        const line = linkToolChild(parent, inst.toolCallId, inst.processInstanceId);
        if (line) appendLog(parentInst, parent, 'INFO', line, inst.startTime);
      }
    }
    const replay = inst.replayOf;
    const started =
      replay === undefined
        ? `execution started (version ${inst.processVersion})`
        : `execution started (version ${inst.processVersion}): a replay of ${replay.processInstanceId} from ${replay.nodeId}, by ${replay.by}`;
    appendLog(inst, null, 'INFO', started, inst.startTime, true);
  },
  'instance.logged': (state, r) => {
    const inst = execution(state, r.instanceId);
    if (inst) pushLog(inst, r.entry, false);
  },
  'instance.finished': (state, r) => {
    const inst = execution(state, r.instanceId);
    if (!inst) return;
    if (inst.stateCd === STATE.RUNNING) LiveCounts.held(state)?.finished(inst);
    if (inst.concurrency !== undefined) ConcurrencySlots.held(state)?.release(inst);
    inst.stateCd = r.stateCd;
    inst.endTime = r.at;
    indexTaskExecution(state, inst);
    // A failed execution keeps the tokens its joins hold: a retry goes on with them.
    if (r.stateCd !== STATE.FAILED) inst.joins = {};
    if (r.error) inst.error = r.error;
    const word =
      r.stateCd === 1 ? 'completed' : r.stateCd === 2 ? `failed: ${r.error?.code}: ${r.error?.message}` : 'cancelled';
    // Kept whole: it names the failing node by its id. The final variables, however long the log.
    pushLog(
      inst,
      {
        nodeId: r.error?.nodeId ?? '',
        nodeName: inst.processName,
        nodeType: 'process',
        message: `execution ${word}`,
        level: r.stateCd === 2 ? 'ERROR' : 'INFO',
        timestamp: r.at,
        variables: { ...inst.variables },
      },
      true,
    );
  },
  'tree.ended': (state, r) => {
    delete state.treeCreated[r.root];
  },
  'instance.archived': (state, r) => {
    const inst = execution(state, r.instanceId);
    ExecutionTable.of(state).archive(r.instanceId);
    if (inst) indexTaskExecution(state, inst);
  },
  'instance.searched': (state, r) => {
    const inst = execution(state, r.instanceId);
    // The record was serialized before it is applied (Store): its object can be kept.
    if (inst) inst.search = r.search;
  },
};
