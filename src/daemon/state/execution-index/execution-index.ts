/**
 * The execution index (decision 068, step 4; decision 071's resident directory): what the
 * daemon keeps in memory of every live execution, its document in memory or not, in columns by
 * slot. It answers, with no scan of the executions: an id's slot, location and summary; a tree's
 * ids; the nodes an event resumes; the due timers; a flow's waiting input tasks and an action's
 * jobs; running and waiting-only counts per flow; and the ids newest first, paged by cursor.
 * Loaded at start from the execution segments' indexes; kept up by `put` and `remove`.
 */
import { STATE } from '../../../shared/api/index.js';
import { FLAG_CHILD, withSlot, FLAG_SLOT, FLAG_TRIGGERED } from '../execution-summary.js';
import type { ExecutionSummary, WaitSummary } from '../execution-summary.js';
import type { ImageIn } from './image.js';
import { IndexRows } from './index-rows.js';
import type { ExecutionIndexEntry, FlowCounts, ListQuery, WalkRow } from './row.js';
import type { Subscriber, WaitingJob, WaitingTask } from './wait-kinds.js';
import type { WaitTable } from './waits.js';

export { ELSEWHERE, type ExecutionIndexEntry, type FlowCounts, type ListQuery, type Location } from './row.js';

/** The execution index: its rows (IndexRows), and what it answers of them. */
export class ExecutionIndex extends IndexRows {
  /** The execution index an image of one saved (`save`); throws RangeError when the image does not fit. */
  static fromImage(inp: ImageIn): ExecutionIndex {
    const d = new ExecutionIndex(16);
    for (const part of [d.ids, d.strings, d.pairs, d.shapes, d.waits, d.heap, d.order]) part.restore(inp);
    d.restoreColumns(inp);
    d.correlation = inp.texts();
    const lineage = inp.value((v): v is Array<[number, string | null, string | null]> => Array.isArray(v));
    for (const [slot, root, parent] of lineage) {
      d.lineage.set(slot, [root, parent]);
      if (root === null) continue;
      let members = d.trees.get(root);
      if (members === undefined) d.trees.set(root, (members = new Set()));
      members.add(slot);
    }
    d.search.restore(inp);
    if (!inp.done) throw new RangeError('the image holds more than an execution index');
    return d;
  }

  /**
   * What the execution index has of `id`, or null. Its `dueMs` is the timer still set: null once
   * `takeDue` took it, until the execution is put again.
   */
  get(id: string): ExecutionIndexEntry | null {
    const slot = this.ids.slotOf(id);
    if (slot < 0) return null;
    const [root, parent] = this.lineage.get(slot) ?? [null, null];
    const summary: ExecutionSummary = {
      id,
      organization: this.strings.text(this.shapes.org(this.shape[slot]!)),
      processId: this.strings.text(this.shapes.proc(this.shape[slot]!)),
      processVersion: this.strings.text(this.shapes.ver(this.shape[slot]!)),
      environment: this.strings.text(this.shapes.env(this.shape[slot]!)),
      stateCd: this.state[slot]!,
      root,
      parent,
      startMs: this.startMs[slot]!,
      triggered: (this.flags[slot]! & FLAG_TRIGGERED) !== 0,
      child: (this.flags[slot]! & FLAG_CHILD) !== 0,
      correlationKey: this.correlation[slot] ?? null,
      dueMs: this.heap.dueOf(slot),
      active: this.active[slot]!,
      waits: this.waits.summaries(this.firstWait[slot]!),
    };
    const search = this.search.of(slot);
    if (search !== undefined) (summary as { search?: typeof search }).search = search;
    return { summary: withSlot(summary, (this.flags[slot]! & FLAG_SLOT) !== 0), location: this.locationOf(id)! };
  }

  /** The ids of the executions that have every search attribute of `where` (name, value). */
  withSearch(where: ReadonlyArray<readonly [string, string]>): string[] {
    return this.search.slots(where).map((slot) => this.ids.idOf(slot));
  }

  /** The ids of tree `root`: the root if the execution index has it, then every execution whose root it is. */
  tree(root: string): string[] {
    const out = this.has(root) ? [root] : [];
    for (const slot of this.trees.get(root) ?? []) out.push(this.ids.idOf(slot));
    return out;
  }

  /** The (id, node) pairs an event resumes (state/subscriptions.ts subscriptionsFor's answer). */
  subscribers(organization: string, eventType: string, correlationKey: string | null): Subscriber[] {
    return this.waits.subscribers(organization, eventType, correlationKey);
  }

  /** Input tasks waiting in a flow, oldest `since` first, `limit` of them from position `from`. */
  tasks(organization: string, processId: string, from = 0, limit = Infinity): WaitingTask[] {
    return this.waits.tasks(organization, processId, from, limit);
  }

  /** How many input tasks wait. */
  get taskCount(): number {
    return this.waits.taskCount;
  }

  /** The earliest `since` (ms) of any input task, or null. */
  oldestTaskSince(): number | null {
    return this.waits.oldestTaskSince();
  }

  /**
   * Input tasks of an organization (null: all) and flow (undefined: all), oldest first, after
   * `cursor` (a task key, state/task-index.ts taskKey), at most `limit`.
   */
  taskPage(...page: Parameters<WaitTable['taskPage']>): WaitingTask[] {
    return this.waits.taskPage(...page);
  }

  /** Job waits of an action, by execution id. */
  jobs(organization: string, domain: string, action: string): WaitingJob[] {
    return this.waits.jobs(organization, domain, action);
  }

  /** Running executions of a flow, and those only waiting (compare state/live-counts.ts perFlow). */
  counts(organization: string, processId: string): FlowCounts {
    const code = this.pairs.find(this.strings.find(organization), this.strings.find(processId));
    if (code < 0 || code >= this.running.length) return { running: 0, waitingOnly: 0 };
    return { running: this.running[code]!, waitingOnly: this.waitingOnly[code]! };
  }

  /** How many executions have a due time set. */
  get dueCount(): number {
    return this.heap.size;
  }

  /** Executions whose timer `takeDue` took that are still here (not read back yet, or their read failed). */
  get untimed(): number {
    return this.taken.size;
  }

  /** The earliest due time (ms) of any execution, or null. */
  nextDue(): number | null {
    return this.heap.next();
  }

  /** Takes the timers due at `nowMs`, at most `max`, and returns their executions' ids in due order. */
  takeDue(nowMs: number, max = Infinity): string[] {
    const out: string[] = [];
    while (out.length < max) {
      const slot = this.heap.popDue(nowMs);
      if (slot < 0) break;
      this.taken.add(slot);
      out.push(this.ids.idOf(slot));
    }
    return out;
  }

  /** Sets again, due at `atMs`, the timer `takeDue` took of `id` if nothing put or removed it since. */
  untake(id: string, atMs: number): void {
    const slot = this.ids.slotOf(id);
    if (slot >= 0 && this.taken.delete(slot)) this.heap.set(slot, atMs);
  }

  /**
   * Calls `visit` with every execution a recovery must see one by one, oldest id first, one row
   * refilled each time (engine/recovery.ts): all but those running that only wait, with no job,
   * no tree and no trigger, which `flowTotals` counts.
   */
  walk(visit: (row: Readonly<WalkRow>) => void): void {
    const r = this.walked;
    const trees = this.lineage.size > 0;
    for (let i = 0; i < this.order.size; i++) {
      const slot = this.order.at(i);
      const first = this.firstWait[slot]!;
      const plain =
        this.state[slot] === STATE.RUNNING && this.active[slot] === 0 && first >= 0 && this.flags[slot] === 0;
      if (plain && (!trees || !this.lineage.has(slot)) && this.waits.jobCount(first) === 0) continue;
      const lineage = this.lineage.get(slot);
      r.slot = slot;
      const shape = this.shape[slot]!;
      r.organization = this.strings.text(this.shapes.org(shape));
      r.processId = this.strings.text(this.shapes.proc(shape));
      r.environment = this.strings.text(this.shapes.env(shape));
      r.stateCd = this.state[slot]!;
      r.flags = this.flags[slot]!;
      r.startMs = this.startMs[slot]!;
      r.active = this.active[slot]!;
      r.root = lineage?.[0] ?? null;
      r.parent = lineage?.[1] ?? null;
      r.waits = this.waits.count(this.firstWait[slot]!);
      r.jobs = this.waits.jobCount(this.firstWait[slot]!);
      visit(r);
    }
  }

  /** Calls `visit` with each flow's running executions and those of them only waiting (`walk` skips most). */
  flowTotals(visit: (organization: string, processId: string, running: number, waitingOnly: number) => void): void {
    for (let flow = 0; flow < this.running.length; flow++) {
      const running = this.running[flow]!;
      if (running === 0) continue;
      const org = this.strings.text(this.pairs.first(flow));
      visit(org, this.strings.text(this.pairs.second(flow)), running, this.waitingOnly[flow]!);
    }
  }

  /** The id of the execution in `slot` (a walk's row). */
  idAt(slot: number): string {
    return this.ids.idOf(slot);
  }

  /** The waits of the execution in `slot` (a walk's row). */
  waitsAt(slot: number): WaitSummary[] {
    return this.waits.summaries(this.firstWait[slot]!);
  }

  /** Live ids newest first, older than `after` when it is given, filtered as asked. */
  list(query: ListQuery): string[] {
    const out: string[] = [];
    const after = query.after;
    // The first position at or past `after`: the walk goes down from the one before it.
    let i = after == null ? this.order.size : this.order.lowerBound((e) => (this.ids.compareTo(e, after) < 0 ? -1 : 1));
    const org = query.organization === undefined ? -1 : this.strings.find(query.organization);
    const proc = query.processId === undefined ? -1 : this.strings.find(query.processId);
    if ((query.organization !== undefined && org < 0) || (query.processId !== undefined && proc < 0)) return out;
    while (--i >= 0 && out.length < query.limit) {
      const slot = this.order.at(i);
      if (org >= 0 && this.shapes.org(this.shape[slot]!) !== org) continue;
      if (proc >= 0 && this.shapes.proc(this.shape[slot]!) !== proc) continue;
      if (query.stateCd !== undefined && this.state[slot] !== query.stateCd) continue;
      out.push(this.ids.idOf(slot));
    }
    return out;
  }
}
