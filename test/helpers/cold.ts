/**
 * A cold side in memory for engine tests (state/executions.ts, ColdExecutions): trees at rest
 * are taken off the resident state as JSON and read back when a step or a read names them, so
 * the engine suite runs with nothing resident between steps (`WFX_TEST_COLD=1`).
 */
import { ExecutionTable } from '../../src/daemon/state/execution-table.js';
import { execution, treeOf, type ColdExecutions } from '../../src/daemon/state/executions.js';
import { ExecutionIndex } from '../../src/daemon/state/execution-index/execution-index.js';
import { summarize, type ExecutionSummary } from '../../src/daemon/state/execution-summary.js';
import { STATE, STATUS, type Execution, type WfxState } from '../../src/daemon/state/state.js';

/**
 * A flow that waits every way a tree can at rest: an answer and a message in parallel, then a
 * one-hour timer, then a sub-process waiting for an answer (the cold and cache tests' flow).
 */
export const WAITS_FLOW = `processId: AUTO
name: Waits
nodes:
  start: { type: startEvent, next: split }
  split: { type: parallelGateway, next: [ask, pay] }
  ask: { type: inputNode, inputType: textbox, next: join }
  pay: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: join }
  join: { type: parallelGateway, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 1h, next: sub }
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: wait }
      wait: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

/** Whether engine harnesses evict every tree at rest before each read (`WFX_TEST_COLD=1`). */
export const COLD_BY_ENV = process.env.WFX_TEST_COLD === '1';

/** No location on disk: the documents are the JSON strings `docs` holds. */
const NOWHERE = { segment: 0, offset: 0, length: 0 };

export class MemoryCold implements ColdExecutions {
  private readonly docs = new Map<string, string>();
  /** The cold executions' summaries (the directory the store's cold side keeps too). */
  private readonly directory = new ExecutionIndex();
  evictions = 0;
  loads = 0;

  get size(): number {
    return this.docs.size;
  }

  coldTree(id: string): readonly string[] {
    const entry = this.directory.get(id);
    return entry === null ? [] : this.directory.tree(entry.summary.root ?? id);
  }

  summary(id: string): ExecutionSummary | undefined {
    return this.directory.get(id)?.summary;
  }

  ids(): Iterable<string> {
    return this.docs.keys();
  }

  load(ids: readonly string[]): Promise<Execution[]> {
    const out: Execution[] = [];
    for (const id of ids) {
      const doc = this.docs.get(id);
      if (doc === undefined) continue;
      this.docs.delete(id);
      this.directory.remove(id);
      out.push(JSON.parse(doc) as Execution);
    }
    this.loads += out.length;
    // Read back on a later turn, as a disk read would be.
    return new Promise((resolve) => setImmediate(() => resolve(out)));
  }

  /** Copies of the cold executions, read from their JSON (they stay cold): what a test's oracle scans. */
  peek(): Execution[] {
    return [...this.docs.values()].map((doc) => JSON.parse(doc) as Execution);
  }

  /** Puts every cold execution back (before the store closes: its snapshot must hold them). */
  restoreAll(state: WfxState): void {
    const table = ExecutionTable.of(state);
    for (const doc of this.docs.values()) table.put(JSON.parse(doc) as Execution);
    for (const id of this.docs.keys()) this.directory.remove(id);
    this.docs.clear();
  }

  /**
   * Takes every tree at rest off the state: running executions none of whose nodes is active
   * (finished ones are on their way to history and stay).
   */
  evictAtRest(state: WfxState): void {
    const table = ExecutionTable.of(state);
    const byTree = new Map<string, Execution[]>();
    for (const id of table.ids()) {
      const inst = execution(state, id);
      if (inst === undefined) continue;
      const tree = treeOf(inst);
      const members = byTree.get(tree) ?? [];
      members.push(inst);
      byTree.set(tree, members);
    }
    for (const members of byTree.values()) {
      const atRest = members.every(
        // As the engine's cache (at-rest/execution-cache.ts): never one that holds a concurrency slot.
        (m) =>
          m.stateCd === STATE.RUNNING &&
          m.concurrency === undefined &&
          Object.values(m.nodes).every((n) => n.statusCd !== STATUS.ACTIVE),
      );
      if (!atRest) continue;
      for (const m of members) {
        const id = m.processInstanceId;
        this.docs.set(id, JSON.stringify(m));
        // No timer boundary events: the engine's own summaries know the flows; listings need none.
        this.directory.put(
          summarize(m, () => []),
          NOWHERE,
        );
        table.archive(id);
        this.evictions++;
      }
    }
  }
}

/**
 * A copy of `state` whose executions are its resident ones and copies of `cold`'s (none: `state`
 * itself), its derived indexes but the subscriptions left to be made again: what an oracle scans, so that it sees every
 * live execution while the daemon's own state keeps them cold.
 */
export function withCold(state: WfxState, cold: MemoryCold | null): WfxState {
  if (cold === null || cold.size === 0) return state;
  const instances: Record<string, Execution> = {};
  for (const inst of ExecutionTable.of(state).live()) instances[inst.processInstanceId] = inst;
  for (const inst of cold.peek()) instances[inst.processInstanceId] = inst;
  // The subscription index is the state's own (the scans do not read it); the others start again.
  return {
    ...state,
    instances,
    instanceTable: undefined,
    jobQueues: undefined,
    liveCounts: undefined,
    taskIndex: undefined,
  };
}
