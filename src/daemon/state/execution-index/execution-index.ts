/**
 * The execution index (decision 068, step 4; decision 071's resident directory): what the
 * daemon keeps in memory of every live execution, its document in memory or not, in columns by
 * slot. It answers, with no scan of the executions: an id's slot, location and summary; a tree's
 * ids; the nodes an event resumes; the due timers; a flow's waiting input tasks and an action's
 * jobs; running and waiting-only counts per flow; and the ids newest first, paged by cursor.
 * Loaded at start from the execution segments' indexes; kept up by `put` and `remove`.
 */
import { STATE } from '../../../shared/api/index.js';
import { FLAG_CHILD, FLAG_TRIGGERED, summaryFlags } from '../execution-summary.js';
import type { ExecutionSummary, WaitSummary } from '../execution-summary.js';
import { SegmentCodes, type SummaryColumns } from './bulk.js';
import { grown, Interner, Pairs, Shapes } from './columns.js';
import { DueHeap } from './due-heap.js';
import { IdTable } from './id-table.js';
import type { ImageIn, ImageOut } from './image.js';
import {
  checkLocation,
  emptyRow,
  emptyWalkRow,
  type CodedRow,
  type DirectoryEntry,
  type FlowCounts,
  type ListQuery,
  type Location,
  type WalkRow,
} from './row.js';

export { ELSEWHERE, type DirectoryEntry, type FlowCounts, type ListQuery, type Location } from './row.js';
import { SlotColumns } from './slot-columns.js';
import { SortedList } from './sorted.js';
import type { Subscriber, WaitingJob, WaitingTask } from './wait-kinds.js';
import { WaitTable } from './waits.js';

/** The execution index. */
export class ExecutionIndex extends SlotColumns {
  private readonly ids: IdTable;
  private readonly strings = new Interner();
  private readonly pairs = new Pairs();
  private readonly shapes = new Shapes(this.pairs);
  private readonly waits: WaitTable;
  private readonly heap: DueHeap;
  /** Live slots, oldest id first (new ids come last: an insert is an append). */
  private readonly order: SortedList;
  private correlation: Array<string | null>;
  /** Root and parent of the executions that have one (children: rare). */
  private readonly lineage = new Map<number, readonly [string | null, string | null]>();
  /** The slots of each tree's executions but its root, by the root's id. */
  private readonly trees = new Map<string, Set<number>>();
  private readonly row: CodedRow = emptyRow();
  private readonly walked: WalkRow = emptyWalkRow();
  /** Slots whose timer `takeDue` took, not put again nor removed since (their due time is nowhere else). */
  private readonly taken = new Set<number>();

  /** A directory with room for `capacity` executions before its columns grow. */
  constructor(capacity = 1024) {
    super();
    this.ids = new IdTable(capacity);
    this.correlation = new Array<string | null>(Math.max(16, capacity)).fill(null);
    const owners = {
      idOf: (s: number) => this.ids.idOf(s),
      compareIds: (a: number, b: number) => this.ids.compare(a, b),
      correlationOf: (s: number) => this.correlation[s] ?? null,
    };
    this.waits = new WaitTable(owners, this.strings, this.pairs, capacity);
    this.heap = new DueHeap((a, b) => this.ids.compare(a, b), capacity);
    this.order = new SortedList((a, b) => this.ids.compare(a, b), capacity);
    this.grow(Math.max(16, capacity));
  }

  /** Saves the directory as it is (image.ts: restore with `fromImage`). */
  save(out: ImageOut): void {
    for (const part of [this.ids, this.strings, this.pairs, this.shapes, this.waits, this.heap, this.order])
      part.save(out);
    this.saveColumns(out);
    out.texts(this.correlation.slice(0, this.slots));
    out.value([...this.lineage].map(([slot, [root, parent]]) => [slot, root, parent]));
  }

  /** The directory an image of one saved (`save`); throws RangeError when the image does not fit. */
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
    if (!inp.done) throw new RangeError('the image holds more than a directory');
    return d;
  }

  /** Executions in the directory. */
  get size(): number {
    return this.slots - this.freeCount;
  }

  /** Makes room for `count` executions in all before the columns grow (a load knows about how many come). */
  reserve(count: number): void {
    if (count <= this.capacity) return;
    this.grow(count);
    this.ids.reserve(count);
  }

  /** Adds execution `summary` at `location`, or replaces what the directory had of it. */
  put(summary: ExecutionSummary, location: Location): void {
    const r = this.row;
    r.segment = location.segment;
    r.offset = location.offset;
    r.length = location.length;
    checkLocation(r);
    const slot = this.claim(summary.id);
    r.org = this.strings.code(summary.organization);
    r.proc = this.strings.code(summary.processId);
    r.ver = this.strings.code(summary.processVersion);
    r.env = this.strings.code(summary.environment);
    r.flow = this.pairs.code(r.org, r.proc);
    r.state = summary.stateCd;
    r.flags = summaryFlags(summary);
    r.startMs = summary.startMs;
    r.active = summary.active;
    r.correlation = summary.correlationKey;
    r.root = summary.root;
    r.parent = summary.parent;
    r.dueMs = summary.dueMs;
    // Before the waits: a wait under the execution's own key keeps none of its own.
    this.correlation[slot] = r.correlation;
    this.attach(slot, summary.id, this.waits.add(slot, r.org, r.flow, summary.waits));
  }

  /**
   * Loads the entries and removals of a segment's index (`columns`, of segment `segment`), as
   * `put` of each entry in order then `remove` of each removed id would, with no summary made
   * per entry: each of the index's strings is interned once, and the due timers are ordered
   * once, when next read. `superseded` is told the location an entry or a removal replaced.
   */
  loadColumns(columns: SummaryColumns, segment: number, superseded?: (location: Location) => void): void {
    const c = columns;
    const r = this.row;
    const codes = new SegmentCodes(c.strings, this.strings);
    const base = c.timeBase;
    this.heap.defer();
    for (let i = 0, w = 0; i < c.ids.length; i++) {
      r.segment = segment;
      r.offset = c.offset[i]!;
      r.length = c.length[i]!;
      checkLocation(r);
      const id = c.ids[i]!;
      const slot = this.claim(id, superseded);
      r.org = codes.code(c.organization[i]!);
      r.proc = codes.code(c.processId[i]!);
      r.ver = codes.code(c.processVersion[i]!);
      r.env = codes.code(c.environment[i]!);
      r.flow = this.pairs.code(r.org, r.proc);
      r.state = c.stateCd[i]!;
      r.flags = c.flags?.[i] ?? (c.parent[i] !== null ? FLAG_CHILD : 0);
      r.startMs = base + c.startMs[i]!;
      r.active = c.active[i]!;
      r.correlation = c.correlationKey[i]!;
      r.root = c.root[i]!;
      r.parent = c.parent[i]!;
      const due = c.dueMs[i]!;
      r.dueMs = due === null ? null : base + due;
      this.correlation[slot] = r.correlation;
      const count = c.waits[i]!;
      let first = -1;
      for (let k = w + count - 1; k >= w; k--) {
        first = this.waits.link(slot, first);
        const action = c.waitAction[k]!;
        const time = c.waitTime[k]!;
        const lock = c.waitLock[k]!;
        const key = c.waitKey[k]!;
        this.waits.fillCoded(
          first,
          r.org,
          r.flow,
          codes.kind(c.waitKind[k]!, action),
          codes.code(c.waitNode[k]!),
          codes.codeOrNone(c.waitName[k]!),
          codes.codeOrNone(action),
          time === null ? NaN : base + time,
          lock === null ? null : base + lock,
          key === true ? r.correlation : key,
          codes.codeOrNone(c.waitFlowNode?.[k] ?? null),
        );
      }
      w += count;
      this.attach(slot, id, first);
    }
    for (const id of c.removed) {
      const slot = this.ids.slotOf(id);
      if (slot < 0) continue;
      superseded?.(this.locationAt(slot));
      this.removeSlot(slot);
    }
  }

  /** Removes execution `id`; false when the directory has no such execution. */
  remove(id: string): boolean {
    const slot = this.ids.slotOf(id);
    if (slot < 0) return false;
    this.removeSlot(slot);
    return true;
  }

  /** Moves where the document of `id` is (a compaction copied it): false when the directory has no such execution. */
  relocate(id: string, location: Location): boolean {
    const slot = this.ids.slotOf(id);
    if (slot < 0) return false;
    const r = this.row;
    r.segment = location.segment;
    r.offset = location.offset;
    r.length = location.length;
    checkLocation(r);
    this.segment[slot] = location.segment;
    this.offset[slot] = location.offset;
    this.length[slot] = location.length;
    return true;
  }

  /** Whether execution `id` is in the directory. */
  has(id: string): boolean {
    return this.ids.slotOf(id) >= 0;
  }

  /** The slot of `id`, or -1 (slots are reused once an execution is removed). */
  slotOf(id: string): number {
    return this.ids.slotOf(id);
  }

  /** Where the document of `id` is, or null. */
  locationOf(id: string): Location | null {
    const slot = this.ids.slotOf(id);
    return slot < 0 ? null : this.locationAt(slot);
  }

  /**
   * What the directory has of `id`, or null. Its `dueMs` is the timer still set: null once
   * `takeDue` took it, until the execution is put again.
   */
  get(id: string): DirectoryEntry | null {
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
    return { summary, location: this.locationOf(id)! };
  }

  /** The ids of tree `root`: the root if the directory has it, then every execution whose root it is. */
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
  taskPage(
    organization: string | null,
    processId: string | undefined,
    cursor: string | undefined,
    limit: number,
  ): WaitingTask[] {
    return this.waits.taskPage(organization, processId, cursor, limit);
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

  /** The slot of `id`, taken out of every index (`replaced` told its location) or new. */
  private claim(id: string, replaced?: (location: Location) => void): number {
    let slot = this.ids.slotOf(id);
    if (slot >= 0) {
      replaced?.(this.locationAt(slot));
      this.detach(slot);
      return slot;
    }
    slot = this.newSlot();
    this.ids.insert(id, slot);
    this.order.insert(slot);
    return slot;
  }

  private removeSlot(slot: number): void {
    this.detach(slot);
    this.order.remove(slot);
    this.ids.remove(slot);
    this.correlation[slot] = null;
    this.freeSlot(slot);
  }

  /** Writes the scratch row's fields to `slot` (of `id`, its waits from row `firstWait`) and indexes them. */
  private attach(slot: number, id: string, firstWait: number): void {
    const r = this.row;
    this.shape[slot] = this.shapes.code(r.flow, r.ver, r.env);
    this.state[slot] = r.state;
    this.flags[slot] = r.flags;
    this.startMs[slot] = r.startMs;
    this.active[slot] = r.active;
    this.segment[slot] = r.segment;
    this.offset[slot] = r.offset;
    this.length[slot] = r.length;
    this.correlation[slot] = r.correlation;
    const root = r.root === id ? null : r.root;
    if (root !== null || r.parent !== null) this.lineage.set(slot, [root, r.parent]);
    if (root !== null) {
      let members = this.trees.get(root);
      if (members === undefined) this.trees.set(root, (members = new Set()));
      members.add(slot);
    }
    this.firstWait[slot] = firstWait;
    this.heap.set(slot, r.dueMs);
    this.count(slot, 1);
  }

  /** Takes `slot` out of every index but its id and the listing (a replace or a remove follows). */
  private detach(slot: number): void {
    this.count(slot, -1);
    this.heap.set(slot, null);
    this.taken.delete(slot);
    this.waits.removeChain(this.firstWait[slot]!);
    this.firstWait[slot] = -1;
    const lineage = this.lineage.get(slot);
    if (lineage === undefined) return;
    this.lineage.delete(slot);
    const root = lineage[0];
    if (root === null) return;
    const members = this.trees.get(root)!;
    members.delete(slot);
    if (members.size === 0) this.trees.delete(root);
  }

  private count(slot: number, by: 1 | -1): void {
    if (this.state[slot] !== STATE.RUNNING) return;
    const flow = this.shapes.flow(this.shape[slot]!);
    if (flow >= this.running.length) {
      const n = Math.max(16, 2 * flow + 2);
      this.running = grown(this.running, n);
      this.waitingOnly = grown(this.waitingOnly, n);
    }
    this.running[flow]! += by;
    if (this.active[slot] === 0 && this.firstWait[slot]! >= 0) this.waitingOnly[flow]! += by;
  }
}
