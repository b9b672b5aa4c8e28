/**
 * The rows of the execution index's waits (waits.ts's WaitTable reads them): one row of
 * typed-array columns per waiting node (a wait handle), chained per execution, allocated from a
 * free list, and the indexes each row joins when it is filled and leaves when it is removed
 * (subscriptions by bucket, input tasks per flow, jobs per action), saved in and restored from
 * the index's image. Executions with several waits are rare; they just take several rows.
 */
import type { ImageIn, ImageOut } from './image.js';
import type { WaitSummary } from '../execution-summary.js';
import { grown, type Interner, type Pairs } from './columns.js';
import { MessageIndex } from './message-index.js';
import { dropFrom, listOf, SortedList } from './sorted.js';
import { INPUT, JOB, KINDS, MESSAGE, NO_KEY, orNull, SIGNAL, textOrder, type Owners } from './wait-kinds.js';

/** The wait rows and the indexes they join (see the top of this file). */
export class WaitRows {
  protected owner: Int32Array;
  private next: Int32Array;
  private kind: Uint8Array;
  protected node: Int32Array;
  /** input: the assignee (-1: none); message, signal: the ref; job: the domain. */
  protected a: Int32Array;
  /** input: the flow; message, signal: the organization and ref; job: the organization, domain and action. */
  private b: Int32Array;
  /** input: since; job: notBefore (NaN: null). */
  protected t1: Float64Array;
  /** The lockedUntil of job waits that have one: a worker's lock is transient, so no column for it. */
  protected readonly locks = new Map<number, number>();
  /** The priority of job waits whose execution has one other than 0: rare, so no column for it. */
  private readonly priorities = new Map<number, number>();
  /** message, signal: the node's flow id (-1: unknown, an older index). */
  protected flowNode: Int32Array;
  /**
   * message, signal: 1 where the wait's correlation key is its execution's (as most message
   * waits': no key kept per row), else the key is in `keys` (null: none).
   */
  private own: Uint8Array;
  private readonly keys = new Map<number, string>();
  protected subNext: Int32Array;
  private subPrev: Int32Array;
  private free = new Int32Array(0);
  private freeCount = 0;
  private rows = 0;
  protected readonly messages = new MessageIndex({
    bucketOf: (row) => this.b[row]!,
    keyOf: (row) => this.keyOf(row) ?? NO_KEY,
  });
  protected readonly signals = new Map<number, number>();
  protected readonly taskLists = new Map<number, SortedList>();
  protected readonly jobLists = new Map<number, SortedList>();
  /** Input tasks in all (the rows of every task list). */
  protected tasksWaiting = 0;
  /** Oldest first, as a task page's key orders them (state/task-index.ts taskKey): since, execution, node. */
  protected readonly taskOrder = (x: number, y: number): number =>
    this.t1[x]! - this.t1[y]! ||
    this.owners.compareIds(this.owner[x]!, this.owner[y]!) ||
    textOrder(this.strings.text(this.node[x]!), this.strings.text(this.node[y]!)) ||
    x - y;
  private readonly jobOrder = (x: number, y: number): number =>
    this.owners.compareIds(this.owner[x]!, this.owner[y]!) || x - y;

  constructor(
    protected readonly owners: Owners,
    protected readonly strings: Interner,
    /** Pairs of strings' numbers: flows (organization, processId), buckets (organization, ref), job groups ((organization, domain), action). */
    protected readonly pairs: Pairs,
    /** Rows made at once: a load knows about how many waits it puts. */
    capacity = 16,
  ) {
    const n = Math.max(16, capacity);
    this.owner = new Int32Array(n);
    this.next = new Int32Array(n);
    this.kind = new Uint8Array(n);
    this.node = new Int32Array(n);
    this.a = new Int32Array(n);
    this.b = new Int32Array(n);
    this.t1 = new Float64Array(n);
    this.flowNode = new Int32Array(n);
    this.subNext = new Int32Array(n);
    this.subPrev = new Int32Array(n);
    this.own = new Uint8Array(n);
  }

  /** Saves the table and its indexes (image.ts). */
  save(out: ImageOut): void {
    const columns = [this.owner, this.next, this.kind, this.node, this.a, this.b, this.t1, this.flowNode];
    for (const c of [...columns, this.subNext, this.subPrev, this.own, this.free]) out.column(c);
    out.value([this.freeCount, this.rows, this.tasksWaiting]);
    out.numberMap(this.locks);
    out.numberMap(this.priorities);
    out.column(Int32Array.from(this.keys.keys()));
    out.texts([...this.keys.values()]);
    out.numberMap(this.signals);
    for (const lists of [this.taskLists, this.jobLists]) {
      out.value([...lists.keys()]);
      for (const list of lists.values()) list.save(out);
    }
    this.messages.save(out);
  }

  /** Takes the table an image saved (an empty table). */
  restore(inp: ImageIn): void {
    this.owner = inp.column('Int32Array');
    this.next = inp.column('Int32Array');
    this.kind = inp.column('Uint8Array');
    this.node = inp.column('Int32Array');
    this.a = inp.column('Int32Array');
    this.b = inp.column('Int32Array');
    this.t1 = inp.column('Float64Array');
    this.flowNode = inp.column('Int32Array');
    this.subNext = inp.column('Int32Array');
    this.subPrev = inp.column('Int32Array');
    this.own = inp.column('Uint8Array');
    this.free = inp.column('Int32Array');
    const all = [this.next, this.kind, this.node, this.a, this.b, this.t1, this.flowNode, this.subNext, this.subPrev];
    const n = this.owner.length;
    if (n === 0 || ![...all, this.own].every((c) => c.length === n))
      throw new RangeError('the image has wait columns that do not fit');
    const [freeCount = -1, rows = -1, tasksWaiting = -1] = inp.numbers();
    this.freeCount = freeCount;
    this.rows = rows;
    this.tasksWaiting = tasksWaiting;
    if (rows > n || rows < 0 || freeCount < 0 || freeCount > this.free.length || tasksWaiting < 0)
      throw new RangeError('the image has wait counts that do not fit');
    inp.numberMap(this.locks);
    inp.numberMap(this.priorities);
    const keyRows = inp.column('Int32Array');
    const keys = inp.texts();
    this.keys.clear();
    keyRows.forEach((row, i) => this.keys.set(row, keys[i]!));
    inp.numberMap(this.signals);
    for (const [lists, order] of [
      [this.taskLists, this.taskOrder],
      [this.jobLists, this.jobOrder],
    ] as const) {
      lists.clear();
      for (const code of inp.numbers()) {
        const list = new SortedList(order);
        list.restore(inp);
        lists.set(code, list);
      }
    }
    this.messages.restore(inp);
  }

  /** Rows of the table in use. */
  get size(): number {
    return this.rows - this.freeCount;
  }

  /** Adds the waits of execution `slot` of flow `flow` (a pair); returns its first row, -1 when none. */
  add(slot: number, organization: number, flow: number, waits: readonly WaitSummary[]): number {
    let first = -1;
    for (let i = waits.length - 1; i >= 0; i--) {
      first = this.link(slot, first);
      this.fill(first, organization, flow, waits[i]!);
    }
    return first;
  }

  /** A new row of execution `slot`, chained before row `next` (-1: the last); `fillCoded` fills it. */
  link(slot: number, next: number): number {
    const row = this.row();
    this.owner[row] = slot;
    this.next[row] = next;
    return row;
  }

  /** Removes the chain of rows from `first` (an execution's waits). */
  removeChain(first: number): void {
    for (let row = first; row >= 0;) {
      const after = this.next[row]!;
      this.unindex(row);
      this.kind[row] = 0;
      this.own[row] = 0;
      this.keys.delete(row);
      if (this.freeCount === this.free.length) this.free = grown(this.free, Math.max(16, this.freeCount * 2));
      this.free[this.freeCount++] = row;
      row = after;
    }
  }

  /** The waits of the chain from `first`, in order. */
  summaries(first: number): WaitSummary[] {
    const out: WaitSummary[] = [];
    for (let row = first; row >= 0; row = this.next[row]!) out.push(this.summary(row));
    return out;
  }

  /** How many rows the chain from `first` has. */
  count(first: number): number {
    let n = 0;
    for (let row = first; row >= 0; row = this.next[row]!) n++;
    return n;
  }

  /** The job waits of the chain from row `first`. */
  jobCount(first: number): number {
    let n = 0;
    for (let row = first; row >= 0; row = this.next[row]!) if (this.kind[row] === JOB) n++;
    return n;
  }

  /** The correlation key of message or signal row `row`, or null. */
  private keyOf(row: number): string | null {
    return this.own[row] === 1 ? this.owners.correlationOf(this.owner[row]!) : (this.keys.get(row) ?? null);
  }

  private row(): number {
    if (this.freeCount > 0) return this.free[--this.freeCount]!;
    const row = this.rows++;
    if (row === this.owner.length) {
      const n = row * 2;
      this.owner = grown(this.owner, n);
      this.next = grown(this.next, n);
      this.kind = grown(this.kind, n);
      this.node = grown(this.node, n);
      this.a = grown(this.a, n);
      this.b = grown(this.b, n);
      this.t1 = grown(this.t1, n);
      this.flowNode = grown(this.flowNode, n);
      this.subNext = grown(this.subNext, n);
      this.subPrev = grown(this.subPrev, n);
      this.own = grown(this.own, n);
    }
    return row;
  }

  private fill(row: number, organization: number, flow: number, wait: WaitSummary): void {
    const node = this.strings.code(wait.node);
    switch (wait.kind) {
      case 'input':
        return this.fillCoded(row, organization, flow, INPUT, node, this.codeOrNone(wait.assignee), -1, wait.since);
      case 'event': {
        const kind = wait.eventType === 'message' ? MESSAGE : SIGNAL;
        return this.fillCoded(
          row,
          organization,
          flow,
          kind,
          node,
          this.strings.code(wait.ref),
          -1,
          NaN,
          null,
          wait.key,
          this.strings.code(wait.nodeId),
        );
      }
      case 'job': {
        const domain = this.strings.code(wait.domain);
        const action = this.strings.code(wait.action);
        const notBefore = wait.notBefore ?? NaN;
        const { lockedUntil, priority } = wait;
        return this.fillCoded(
          row,
          organization,
          flow,
          JOB,
          node,
          domain,
          action,
          notBefore,
          lockedUntil,
          null,
          -1,
          priority,
        );
      }
      default:
        this.fillCoded(row, organization, flow, KINDS.indexOf(wait.kind), node, -1, -1, NaN);
    }
  }

  private codeOrNone(text: string | null): number {
    return text === null ? -1 : this.strings.code(text);
  }

  /**
   * Fills wait row `row` of an execution of `organization` and `flow` with strings as their
   * numbers: `kind` a KINDS index (waitKind), `name` the assignee (-1: none), ref or domain,
   * `action` a job's action, `time` since or notBefore (NaN: none), `lock` a job's
   * lockedUntil, `key` an event's correlation key, `flowNode` an event wait's flow node id
   * (-1: unknown), `priority` a job's execution's priority.
   */
  fillCoded(
    row: number,
    organization: number,
    flow: number,
    kind: number,
    node: number,
    name: number,
    action: number,
    time: number,
    lock: number | null = null,
    key: string | null = null,
    flowNode = -1,
    priority = 0,
  ): void {
    this.node[row] = node;
    this.kind[row] = kind;
    if (key !== null && key === this.owners.correlationOf(this.owner[row]!)) this.own[row] = 1;
    else if (key !== null) this.keys.set(row, key);
    if (kind === INPUT) {
      this.a[row] = name;
      this.b[row] = flow;
      this.t1[row] = time;
      listOf(this.taskLists, flow, this.taskOrder).insert(row);
      this.tasksWaiting++;
    } else if (kind === MESSAGE || kind === SIGNAL) {
      this.a[row] = name;
      this.flowNode[row] = flowNode;
      const bucket = this.pairs.code(organization, name);
      this.b[row] = bucket;
      this.subPrev[row] = -1;
      if (kind === MESSAGE) {
        this.subNext[row] = this.messages.push(bucket, key ?? NO_KEY, row);
      } else {
        this.subNext[row] = this.signals.get(bucket) ?? -1;
        this.signals.set(bucket, row);
      }
      if (this.subNext[row]! >= 0) this.subPrev[this.subNext[row]!] = row;
    } else if (kind === JOB) {
      this.a[row] = name;
      this.b[row] = this.pairs.code(this.pairs.code(organization, name), action);
      this.t1[row] = time;
      if (lock !== null) this.locks.set(row, lock);
      if (priority !== 0) this.priorities.set(row, priority);
      listOf(this.jobLists, this.b[row]!, this.jobOrder).insert(row);
    }
  }

  private unindex(row: number): void {
    const kind = this.kind[row]!;
    if (kind === INPUT) {
      dropFrom(this.taskLists, this.b[row]!, row);
      this.tasksWaiting--;
    } else if (kind === JOB) {
      dropFrom(this.jobLists, this.b[row]!, row);
      this.locks.delete(row);
      this.priorities.delete(row);
    } else if (kind === MESSAGE || kind === SIGNAL) {
      const prev = this.subPrev[row]!;
      const after = this.subNext[row]!;
      if (after >= 0) this.subPrev[after] = prev;
      if (prev >= 0) this.subNext[prev] = after;
      else if (kind === SIGNAL) {
        if (after >= 0) this.signals.set(this.b[row]!, after);
        else this.signals.delete(this.b[row]!);
      } else {
        const k = this.keyOf(row) ?? NO_KEY;
        if (after >= 0) this.messages.setHead(this.b[row]!, k, after);
        else this.messages.delete(this.b[row]!, k);
      }
    }
  }

  private summary(row: number): WaitSummary {
    const node = this.strings.text(this.node[row]!);
    const kind = this.kind[row]!;
    if (kind === INPUT) {
      const assignee = this.a[row]!;
      return { kind: 'input', node, since: this.t1[row]!, assignee: assignee < 0 ? null : this.strings.text(assignee) };
    }
    if (kind === MESSAGE || kind === SIGNAL) {
      const eventType = kind === MESSAGE ? 'message' : 'signal';
      const flowNode = this.flowNode[row]!;
      return {
        kind: 'event',
        node,
        eventType,
        nodeId: flowNode < 0 ? '' : this.strings.text(flowNode),
        ref: this.strings.text(this.a[row]!),
        key: this.keyOf(row),
      };
    }
    if (kind === JOB) {
      const action = this.strings.text(this.pairs.second(this.b[row]!));
      const domain = this.strings.text(this.a[row]!);
      return {
        kind: 'job',
        node,
        domain,
        action,
        notBefore: orNull(this.t1[row]!),
        lockedUntil: this.locks.get(row) ?? null,
        ...(this.priorities.has(row) && { priority: this.priorities.get(row)! }),
      };
    }
    return { kind: KINDS[kind] as 'timer' | 'child' | 'loop' | 'tools' | 'queue', node };
  }
}
