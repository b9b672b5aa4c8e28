/**
 * The execution index's rows (execution-index.ts's ExecutionIndex reads them): each execution's
 * slot by id, its fields written into the columns by `put` (or a segment index's columns by
 * `loadColumns`), and every index a row joins and leaves with it (waits, the due heap, the
 * listing's order, trees, counts per flow), saved in the index's image.
 */
import { STATE } from '../../../shared/api/index.js';
import { FLAG_CHILD, summaryFlags } from '../execution-summary.js';
import type { ExecutionSummary } from '../execution-summary.js';
import { SegmentCodes, type SummaryColumns } from './batch-load.js';
import { grown, Interner, Pairs, Shapes } from './columns.js';
import { DueHeap } from './due-heap.js';
import { IdTable } from './id-table.js';
import type { ImageOut } from './image.js';
import { checkLocation, emptyRow, emptyWalkRow, type CodedRow, type Location, type WalkRow } from './row.js';
import { SlotColumns } from './slot-columns.js';
import { SortedList } from './sorted.js';
import { WaitTable } from './waits.js';
import { SearchIndex } from './search-index.js';

/** The rows of the execution index and the indexes they keep (see the top of this file). */
export class IndexRows extends SlotColumns {
  protected readonly ids: IdTable;
  protected readonly strings = new Interner();
  protected readonly pairs = new Pairs();
  protected readonly shapes = new Shapes(this.pairs);
  protected readonly waits: WaitTable;
  protected readonly heap: DueHeap;
  /** Live slots, oldest id first (new ids come last: an insert is an append). */
  protected readonly order: SortedList;
  protected correlation: Array<string | null>;
  /** The search attributes of the executions that have some, and their index. */
  protected search = new SearchIndex();
  /** Root and parent of the executions that have one (children: rare). */
  protected readonly lineage = new Map<number, readonly [string | null, string | null]>();
  /** The slots of each tree's executions but its root, by the root's id. */
  protected readonly trees = new Map<string, Set<number>>();
  protected readonly row: CodedRow = emptyRow();
  protected readonly walked: WalkRow = emptyWalkRow();
  /** Slots whose timer `takeDue` took, not put again nor removed since (their due time is nowhere else). */
  protected readonly taken = new Set<number>();

  /** An execution index with room for `capacity` executions before its columns grow. */
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

  /** Saves the execution index as it is (image.ts: restore with `fromImage`). */
  save(out: ImageOut): void {
    for (const part of [this.ids, this.strings, this.pairs, this.shapes, this.waits, this.heap, this.order])
      part.save(out);
    this.saveColumns(out);
    out.texts(this.correlation.slice(0, this.slots));
    out.value([...this.lineage].map(([slot, [root, parent]]) => [slot, root, parent]));
    this.search.save(out);
  }

  /** Executions in the execution index. */
  get size(): number {
    return this.slots - this.freeCount;
  }

  /** Makes room for `count` executions in all before the columns grow (a load knows about how many come). */
  reserve(count: number): void {
    if (count <= this.capacity) return;
    this.grow(count);
    this.ids.reserve(count);
  }

  /** Adds execution `summary` at `location`, or replaces what the execution index had of it. */
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
    r.search = summary.search;
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
      r.search = c.search?.[i] ?? undefined;
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
          c.waitPriority?.[k] ?? 0,
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

  /** Removes execution `id`; false when the execution index has no such execution. */
  remove(id: string): boolean {
    const slot = this.ids.slotOf(id);
    if (slot < 0) return false;
    this.removeSlot(slot);
    return true;
  }

  /** Moves where the document of `id` is (a compaction copied it): false when the execution index has no such execution. */
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

  /** Whether execution `id` is in the execution index. */
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
    this.search.set(slot, r.search);
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
    this.search.delete(slot);
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
