/**
 * The waiting input nodes and user tasks of running executions, indexed (what GET /process/tasks
 * and the task gauges read): per flow, in the order a page of tasks is listed (oldest waiting
 * first), so a page reads the tasks it returns and not the executions that wait for nothing
 * else. Kept by the reducer from node waits and execution states; derived (DERIVED in
 * state.ts), so a start builds it again from the live executions (the recovery walk, or on
 * first use after a store replaced executions).
 */
import { STATE, STATUS } from '../../shared/api/index.js';
import { SortedChunks } from '../../shared/sorted-chunks.js';
import { execution } from './executions.js';
import type { Execution, NodeInstance } from './execution-document.js';
import { ExecutionTable } from './execution-table.js';
import { ownIndex, StateIndex } from './state-index.js';

/**
 * What the task index belongs to: the state's executions and the index kept beside them. Named
 * here so that this module needs nothing of state.ts.
 */
export interface TaskIndexHolder {
  instances: Record<string, Execution | undefined>;
  instanceTable?: ExecutionTable<Execution> | undefined;
  taskIndex?: TaskIndex | undefined;
  coldTasks?: ColdTasks | undefined;
}

/**
 * The tasks of the executions not in memory (at-rest/execution-cache.ts: its directory holds
 * their waits; the index holds only the resident ones'), as the index's reads add them in:
 * WfxState.coldTasks.
 */
export interface ColdTasks {
  /** How many tasks of cold executions wait. */
  readonly size: number;
  /** The oldest `since` of a cold execution's task, or null. */
  oldestSince(): string | null;
  /** As TaskIndex.page, over the cold executions' tasks. */
  page(
    organization: string | null,
    processId: string | undefined,
    cursor: string | undefined,
    limit: number,
  ): TaskRef[];
}

/**
 * One waiting task: its node's strings, shared with the node (no copy). Sorts by `taskKey`.
 */
export interface TaskRef {
  readonly since: string;
  readonly instanceId: string;
  readonly nodeInstanceId: string;
}

/** Where a task sorts (oldest waiting first) and what a page's cursor names: ISO times compare as text. */
export const taskKey = (t: TaskRef): string => `${t.since}|${t.instanceId}|${t.nodeInstanceId}`;

/**
 * The order of `taskKey`, without making the keys where it can: times and ids of one length
 * each (ISO times, UUIDs) compare part by part as their joined keys do.
 */
export function compareTasks(a: TaskRef, b: TaskRef): number {
  if (a.since.length !== b.since.length || a.instanceId.length !== b.instanceId.length) {
    const ka = taskKey(a);
    const kb = taskKey(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  }
  if (a.since !== b.since) return a.since < b.since ? -1 : 1;
  if (a.instanceId !== b.instanceId) return a.instanceId < b.instanceId ? -1 : 1;
  return a.nodeInstanceId < b.nodeInstanceId ? -1 : a.nodeInstanceId > b.nodeInstanceId ? 1 : 0;
}

/** Whether `node` of `inst` is a task: an input wait of a running execution. */
const isTask = (inst: Execution, node: NodeInstance): boolean =>
  inst.stateCd === STATE.RUNNING && node.statusCd === STATUS.WAITING && node.wait?.kind === 'input';

/**
 * The index. Invariant: a node is in its flow's list exactly while it waits for input in a
 * running execution; each list is sorted by `taskKey`, keys unique.
 */
export class TaskIndex extends StateIndex<TaskIndexHolder> {
  /** Tasks by organization, then processId: what the filters of a page name. */
  private readonly byOrg = new Map<string, Map<string, SortedChunks<TaskRef>>>();
  private total = 0;
  /** While a walk fills a fresh index: tasks appended as met, sorted once by `built`. */
  private building = false;
  /**
   * A step's draft's index (state/draft/: `fork`): the changes asked of it, made on the live
   * index by `commitFork`. No step reads the task index, so the draft's needs no view.
   */
  private deferred: Array<
    readonly [change: 'add' | 'remove' | 'node', inst: Execution, node: NodeInstance | null]
  > | null = null;

  /** This index for a step's draft: its changes are kept to be made here by `commitFork`. */
  fork(holder: TaskIndexHolder): TaskIndex {
    const f = new TaskIndex(holder);
    f.deferred = [];
    return f;
  }

  /** Makes the changes asked of `f` (this one's fork) on this index, in order. */
  commitFork(f: TaskIndex): void {
    for (const [change, inst, node] of f.deferred!) {
      if (change === 'add') this.addExecution(inst);
      else if (change === 'remove') this.removeExecution(inst);
      // On the node as it is at the commit (the reducer may have replaced its object since).
      else this.nodeChanged(inst, inst.nodes[node!.id] ?? node!);
    }
    f.deferred = [];
  }

  /** The index of `state`: its own, or a new one built from its live executions. */
  static of(state: TaskIndexHolder): TaskIndex {
    const held = TaskIndex.held(state);
    if (held !== null) return held;
    const made = TaskIndex.fresh(state);
    for (const inst of ExecutionTable.of(state).live()) made.addExecution(inst);
    made.built();
    return made;
  }

  /** The index of `state` if it is made, else null (the reducer keeps up only an index that exists). */
  static held(state: TaskIndexHolder): TaskIndex | null {
    return ownIndex(state.taskIndex, state);
  }

  /**
   * A new empty index set on `state`, for one synchronous walk over its executions to fill
   * (`addExecution`, each node once), then `built()` before anything else reads or changes it.
   */
  static fresh(state: TaskIndexHolder): TaskIndex {
    const made = new TaskIndex(state);
    made.building = true;
    state.taskIndex = made;
    return made;
  }

  /** Ends the walk that fills a fresh index: its lists sorted once, not kept sorted task by task. */
  built(): void {
    if (!this.building) return;
    this.building = false;
    for (const flows of this.byOrg.values()) for (const list of flows.values()) list.sort();
  }

  /** How many tasks wait, of resident and cold executions. */
  get size(): number {
    return this.total + (this.state.coldTasks?.size ?? 0);
  }

  /** When the longest waiting task started waiting (its node's start), or null when none waits. */
  oldestSince(): string | null {
    let oldest = this.state.coldTasks?.oldestSince() ?? null;
    for (const flows of this.byOrg.values())
      for (const list of flows.values()) {
        const first = list.first()!;
        if (oldest === null || first.since < oldest) oldest = first.since;
      }
    return oldest;
  }

  /** Adds the tasks of `inst` (its waiting input nodes, if it runs). */
  addExecution(inst: Execution): void {
    if (this.deferred !== null) return void this.deferred.push(['add', inst, null]);
    if (inst.stateCd !== STATE.RUNNING) return;
    for (const id in inst.nodes) this.addNode(inst, inst.nodes[id]!);
  }

  /** Adds `node` of `inst` if it is a task (the walk that fills the index meets each once). */
  addNode(inst: Execution, node: NodeInstance): void {
    if (isTask(inst, node)) this.add(inst, node);
  }

  /** Removes every task of `inst` (it leaves Running or the state). */
  removeExecution(inst: Execution): void {
    if (this.deferred !== null) return void this.deferred.push(['remove', inst, null]);
    for (const id in inst.nodes) this.remove(inst, inst.nodes[id]!);
  }

  /** Puts `node` in or out of the index as it is now. */
  nodeChanged(inst: Execution, node: NodeInstance): void {
    if (this.deferred !== null) return void this.deferred.push(['node', inst, node]);
    if (isTask(inst, node)) this.add(inst, node);
    else this.remove(inst, node);
  }

  /**
   * Up to `limit` tasks after `cursor` (a `taskKey`), in key order, of one flow, one
   * organization's flows, or all (null). Pure read.
   */
  page(
    organization: string | null,
    processId: string | undefined,
    cursor: string | undefined,
    limit: number,
  ): TaskRef[] {
    const lists: Array<SortedChunks<TaskRef>> = [];
    const orgs = organization === null ? this.byOrg.values() : [this.byOrg.get(organization)];
    for (const flows of orgs) {
      if (flows === undefined) continue;
      if (processId === undefined) lists.push(...flows.values());
      else if (flows.has(processId)) lists.push(flows.get(processId)!);
    }
    // A merge of the lists, each read from its first key after the cursor.
    const heads: Array<{ rest: Iterator<TaskRef>; ref: TaskRef; key: string }> = [];
    const head = (rest: Iterator<TaskRef>) => {
      const next = rest.next();
      if (!next.done) heads.push({ rest, ref: next.value, key: taskKey(next.value) });
    };
    for (const list of lists) head(list.after((t) => cursor !== undefined && taskKey(t) <= cursor));
    // The cold executions' first `limit` after the cursor: one more sorted list to merge.
    head((this.state.coldTasks?.page(organization, processId, cursor, limit) ?? []).values());
    const out: TaskRef[] = [];
    while (out.length < limit && heads.length > 0) {
      let min = 0;
      for (let i = 1; i < heads.length; i++) if (heads[i]!.key < heads[min]!.key) min = i;
      const h = heads[min]!;
      out.push(h.ref);
      const next = h.rest.next();
      if (next.done) heads.splice(min, 1);
      else {
        h.ref = next.value;
        h.key = taskKey(next.value);
      }
    }
    return out;
  }

  private add(inst: Execution, node: NodeInstance): void {
    const ref: TaskRef = { since: node.startTime, instanceId: inst.processInstanceId, nodeInstanceId: node.id };
    this.insert(inst.organization, inst.processId, ref);
  }

  private insert(organization: string, processId: string, ref: TaskRef): void {
    let flows = this.byOrg.get(organization);
    if (flows === undefined) this.byOrg.set(organization, (flows = new Map()));
    let list = flows.get(processId);
    if (list === undefined) flows.set(processId, (list = new SortedChunks(compareTasks)));
    // While building, appended as met (each once) and sorted by `built`.
    if (list.insert(ref, this.building)) this.total++;
  }

  private remove(inst: Execution, node: NodeInstance): void {
    const flows = this.byOrg.get(inst.organization);
    const list = flows?.get(inst.processId);
    if (list === undefined) return;
    const ref: TaskRef = { since: node.startTime, instanceId: inst.processInstanceId, nodeInstanceId: node.id };
    if (!list.remove(ref)) return;
    this.total--;
    if (list.length > 0) return;
    flows!.delete(inst.processId);
    if (flows!.size === 0) this.byOrg.delete(inst.organization);
  }
}

/** Keeps the index (if made) as `node` of `inst` changes its wait or status. */
export function indexTaskNode(state: TaskIndexHolder, inst: Execution, node: NodeInstance): void {
  TaskIndex.held(state)?.nodeChanged(inst, node);
}

/** Keeps the index (if made) as `inst` enters or leaves Running, or the state. */
export function indexTaskExecution(state: TaskIndexHolder, inst: Execution): void {
  const index = TaskIndex.held(state);
  if (index === null) return;
  if (inst.stateCd === STATE.RUNNING && execution(state, inst.processInstanceId) === inst) index.addExecution(inst);
  else index.removeExecution(inst);
}
