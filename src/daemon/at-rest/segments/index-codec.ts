import {
  FLAG_CHILD,
  withSlot,
  FLAG_SLOT,
  FLAG_TRIGGERED,
  summaryFlags,
  type ExecutionSummary,
  type WaitSummary,
} from '../../state/execution-summary.js';

/**
 * A segment's index as it is stored (`NNNNNN.index.json`): one array per field, entry i of the
 * segment at position i of each, so that loading is one JSON.parse of a few long arrays rather
 * than one parse per entry. Strings that repeat (organization, flow, version, environment, node,
 * wait kind, message name, domain, action, assignee) are numbers into `strings`. Waits are
 * flattened: entry i has `waits[i]` of them, in order, in the `wait*` columns:
 * - input: `waitTime` since, `waitName` assignee;
 * - event: `waitName` ref, `waitAction` eventType, `waitKey` the correlation key (`true`: the
 *   entry's own `correlationKey`, written once not twice, from version 2), `waitFlowNode` the
 *   node's flow id;
 * - job: `waitName` domain, `waitAction` action, `waitTime` notBefore, `waitLock` lockedUntil;
 * - the other kinds: kind and node only. Unused cells are null.
 * Times (`startMs`, `dueMs`, `waitTime`, `waitLock`) are ms after `timeBase` (the first entry's
 * start): short numbers parse faster than 13-digit ones.
 *
 * Columns added later are optional, and an index written before them reads as its old default:
 * - `flags` (per entry; FLAG_TRIGGERED, FLAG_CHILD): absent, no entry was started by a trigger
 *   and an entry with a parent is a child;
 * - `waitFlowNode` (per wait): absent, an event wait's flow node id is '' (unknown until the
 *   execution is read and written again);
 * - `waitPriority` (per wait): written only by a segment with a job of priority other than 0;
 *   absent, every job's priority is 0;
 * - `search` (per entry): written only by a segment with an entry that has search attributes;
 *   absent, none has any.
 */
export interface IndexDoc {
  readonly format: 'wfx-execution-segment-index';
  /** 2 since `waitKey` may be `true`; a version 1 index reads the same. */
  readonly version: 1 | 2;
  readonly segment: number;
  /** The segment file's size in bytes. */
  readonly bytes: number;
  readonly timeBase: number;
  readonly strings: string[];
  readonly ids: string[];
  readonly offset: number[];
  readonly length: number[];
  readonly organization: number[];
  readonly processId: number[];
  readonly processVersion: number[];
  readonly environment: number[];
  readonly stateCd: number[];
  readonly root: Array<string | null>;
  readonly parent: Array<string | null>;
  readonly startMs: number[];
  readonly correlationKey: Array<string | null>;
  readonly dueMs: Array<number | null>;
  readonly active: number[];
  readonly waits: number[];
  readonly waitKind: number[];
  readonly waitNode: number[];
  readonly waitTime: Array<number | null>;
  readonly waitLock: Array<number | null>;
  readonly waitName: Array<number | null>;
  readonly waitAction: Array<number | null>;
  /** Per wait: an event wait's correlation key; `true`: its entry's `correlationKey` (version 2). */
  readonly waitKey: Array<string | null | true>;
  /** Per entry, FLAG_* bits (absent in indexes written before it: see above). */
  readonly flags?: number[];
  /** Per wait: an event wait's flow node id (a string's number), null for the other kinds (absent: see above). */
  readonly waitFlowNode?: Array<number | null>;
  /** Per wait: a job wait's priority, null for 0 and the other kinds (absent: every one 0; see above). */
  readonly waitPriority?: Array<number | null>;
  /** Per entry: its search attributes, null for none (absent: none has any; see above). */
  readonly search?: Array<Readonly<Record<string, string>> | null>;
  /** Ids that stopped being live executions as of this segment (archived, or moved away). */
  readonly removed: string[];
}

type Columns = { -readonly [K in keyof IndexDoc]: IndexDoc[K] };

/** Builds an index document entry by entry (the strings interned as they come). */
export class IndexBuilder {
  private readonly doc: Columns;
  private readonly table = new Map<string, number>();

  constructor(segment: number) {
    this.doc = {
      format: 'wfx-execution-segment-index',
      version: 2,
      segment,
      bytes: 0,
      timeBase: 0,
      strings: [],
      ids: [],
      offset: [],
      length: [],
      organization: [],
      processId: [],
      processVersion: [],
      environment: [],
      stateCd: [],
      root: [],
      parent: [],
      startMs: [],
      correlationKey: [],
      dueMs: [],
      active: [],
      waits: [],
      waitKind: [],
      waitNode: [],
      waitTime: [],
      waitLock: [],
      waitName: [],
      waitAction: [],
      waitKey: [],
      flags: [],
      waitFlowNode: [],
      removed: [],
    };
  }

  private str(s: string): number {
    let n = this.table.get(s);
    if (n === undefined) {
      n = this.doc.strings.length;
      this.doc.strings.push(s);
      this.table.set(s, n);
    }
    return n;
  }

  private time(ms: number): number {
    return ms - this.doc.timeBase;
  }

  private timeOrNull(ms: number | null): number | null {
    return ms === null ? null : ms - this.doc.timeBase;
  }

  private strOrNull(s: string | null): number | null {
    return s === null ? null : this.str(s);
  }

  /** Adds the entry of the frame of `id` at `offset` (`length` bytes) with its summary. */
  add(id: string, offset: number, length: number, s: ExecutionSummary): void {
    const d = this.doc;
    if (d.ids.length === 0) d.timeBase = s.startMs;
    d.ids.push(id);
    d.offset.push(offset);
    d.length.push(length);
    d.organization.push(this.str(s.organization));
    d.processId.push(this.str(s.processId));
    d.processVersion.push(this.str(s.processVersion));
    d.environment.push(this.str(s.environment));
    d.stateCd.push(s.stateCd);
    d.root.push(s.root);
    d.parent.push(s.parent);
    d.startMs.push(this.time(s.startMs));
    d.correlationKey.push(s.correlationKey);
    d.dueMs.push(this.timeOrNull(s.dueMs));
    d.active.push(s.active);
    d.flags!.push(summaryFlags(s));
    if (s.search !== undefined || d.search !== undefined) {
      // Made at the first such entry, the entries before it filled in: most segments have none.
      d.search ??= new Array<Readonly<Record<string, string>> | null>(d.ids.length - 1).fill(null);
      d.search.push(s.search ?? null);
    }
    d.waits.push(s.waits.length);
    for (const w of s.waits) this.addWait(w, s.correlationKey);
  }

  private addWait(w: WaitSummary, correlationKey: string | null): void {
    const d = this.doc;
    d.waitKind.push(this.str(w.kind));
    d.waitNode.push(this.str(w.node));
    let time: number | null = null;
    let lock: number | null = null;
    let name: number | null = null;
    let action: number | null = null;
    let key: string | null | true = null;
    let flowNode: number | null = null;
    if (w.kind === 'input') {
      time = this.time(w.since);
      name = this.strOrNull(w.assignee);
    } else if (w.kind === 'event') {
      name = this.str(w.ref);
      action = this.str(w.eventType);
      // A message wait mostly waits under its execution's own key: written once, parsed once.
      key = w.key !== null && w.key === correlationKey ? true : w.key;
      flowNode = this.str(w.nodeId);
    } else if (w.kind === 'job') {
      name = this.str(w.domain);
      action = this.str(w.action);
      time = this.timeOrNull(w.notBefore);
      lock = this.timeOrNull(w.lockedUntil);
    }
    d.waitTime.push(time);
    d.waitLock.push(lock);
    d.waitName.push(name);
    d.waitAction.push(action);
    d.waitKey.push(key);
    d.waitFlowNode!.push(flowNode);
    const priority = w.kind === 'job' ? (w.priority ?? 0) : 0;
    if (priority !== 0 || d.waitPriority !== undefined) {
      // Made at the first such job, the waits before it filled in: most segments have none.
      d.waitPriority ??= new Array<number | null>(d.waitKind.length - 1).fill(null);
      d.waitPriority.push(priority === 0 ? null : priority);
    }
  }

  /** The document, with the segment's size and the removed ids. The builder is spent. */
  finish(bytes: number, removed: Iterable<string>): IndexDoc {
    this.doc.bytes = bytes;
    this.doc.removed = [...removed];
    return this.doc;
  }
}

/** The columns every entry has a cell in, and those every wait has. */
const ENTRY_COLUMNS = [
  'offset',
  'length',
  'organization',
  'processId',
  'processVersion',
  'environment',
  'stateCd',
  'root',
  'parent',
  'startMs',
  'correlationKey',
  'dueMs',
  'active',
  'waits',
] as const;
const WAIT_COLUMNS = ['waitKind', 'waitNode', 'waitTime', 'waitLock', 'waitName', 'waitAction', 'waitKey'] as const;

/**
 * Parses an index document's text and checks its shape (every column as long as it must be);
 * returns the reason it is not an index of segment `segment`, or the document. Pure.
 */
export function parseIndex(text: string, segment: number): IndexDoc | string {
  let doc: IndexDoc;
  try {
    doc = JSON.parse(text) as IndexDoc;
  } catch {
    return 'the index is not JSON';
  }
  if (
    doc === null ||
    typeof doc !== 'object' ||
    doc.format !== 'wfx-execution-segment-index' ||
    (doc.version !== 1 && doc.version !== 2)
  )
    return 'the file is not a segment index';
  if (doc.segment !== segment) return `the index is of segment ${doc.segment}`;
  const n = Array.isArray(doc.ids) ? doc.ids.length : -1;
  if (n < 0 || !Array.isArray(doc.strings) || !Array.isArray(doc.removed) || typeof doc.timeBase !== 'number')
    return 'the index lacks a column';
  for (const c of ENTRY_COLUMNS)
    if (!Array.isArray(doc[c]) || doc[c].length !== n) return `column ${c} is not ${n} long`;
  let waits = 0;
  for (const w of doc.waits) waits += w;
  for (const c of WAIT_COLUMNS)
    if (!Array.isArray(doc[c]) || doc[c].length !== waits) return `column ${c} is not ${waits} long`;
  if (doc.flags !== undefined && (!Array.isArray(doc.flags) || doc.flags.length !== n))
    return `column flags is not ${n} long`;
  if (doc.waitFlowNode !== undefined && (!Array.isArray(doc.waitFlowNode) || doc.waitFlowNode.length !== waits))
    return `column waitFlowNode is not ${waits} long`;
  if (doc.waitPriority !== undefined && (!Array.isArray(doc.waitPriority) || doc.waitPriority.length !== waits))
    return `column waitPriority is not ${waits} long`;
  if (doc.search !== undefined && (!Array.isArray(doc.search) || doc.search.length !== n))
    return `column search is not ${n} long`;
  return doc;
}

/** Calls `fn` with each entry of `doc` in order: its id, offset, length and summary (made anew). */
export function forEachEntry(
  doc: IndexDoc,
  fn: (id: string, offset: number, length: number, summary: ExecutionSummary) => void,
): void {
  const s = doc.strings;
  const base = doc.timeBase;
  let w = 0;
  for (let i = 0; i < doc.ids.length; i++) {
    const count = doc.waits[i]!;
    const waits: WaitSummary[] = new Array<WaitSummary>(count);
    for (let k = 0; k < count; k++, w++) waits[k] = waitAt(doc, w, doc.correlationKey[i]!);
    const summary: ExecutionSummary = {
      id: doc.ids[i]!,
      organization: s[doc.organization[i]!]!,
      processId: s[doc.processId[i]!]!,
      processVersion: s[doc.processVersion[i]!]!,
      environment: s[doc.environment[i]!]!,
      stateCd: doc.stateCd[i]!,
      root: doc.root[i]!,
      parent: doc.parent[i]!,
      startMs: base + doc.startMs[i]!,
      triggered: flagOf(doc, i, FLAG_TRIGGERED),
      child: doc.flags === undefined ? doc.parent[i]! !== null : flagOf(doc, i, FLAG_CHILD),
      correlationKey: doc.correlationKey[i]!,
      dueMs: plus(base, doc.dueMs[i]!),
      active: doc.active[i]!,
      waits,
    };
    const search = doc.search?.[i] ?? null;
    if (search !== null) (summary as { search?: typeof search }).search = search;
    fn(doc.ids[i]!, doc.offset[i]!, doc.length[i]!, withSlot(summary, flagOf(doc, i, FLAG_SLOT)));
  }
}

/** Wait `w` of `doc`'s flattened wait columns, of an entry whose correlation key is `correlationKey`. */
function waitAt(doc: IndexDoc, w: number, correlationKey: string | null): WaitSummary {
  const s = doc.strings;
  const base = doc.timeBase;
  const kind = s[doc.waitKind[w]!] as WaitSummary['kind'];
  const node = s[doc.waitNode[w]!]!;
  const name = doc.waitName[w]!;
  const action = doc.waitAction[w]!;
  switch (kind) {
    case 'input':
      return { kind, node, since: base + doc.waitTime[w]!, assignee: name === null ? null : s[name]! };
    case 'event':
      return {
        kind,
        node,
        eventType: s[action!] as 'message' | 'signal',
        nodeId: flowNodeAt(doc, w),
        ref: s[name!]!,
        key: waitKeyOf(doc.waitKey[w]!, correlationKey),
      };
    case 'job':
      return {
        kind,
        node,
        domain: s[name!]!,
        action: s[action!]!,
        notBefore: plus(base, doc.waitTime[w]!),
        lockedUntil: plus(base, doc.waitLock[w]!),
        ...priorityAt(doc, w),
      };
    default:
      return { kind, node };
  }
}

/** Whether entry `i` of `doc` has flag `flag` (none in an index written before the flags). */
function flagOf(doc: IndexDoc, i: number, flag: number): boolean {
  return doc.flags !== undefined && (doc.flags[i]! & flag) !== 0;
}

/** The flow node id of event wait `w` of `doc` ('' in an index written before the column). */
export function flowNodeAt(doc: Pick<IndexDoc, 'strings' | 'waitFlowNode'>, w: number): string {
  const n = doc.waitFlowNode?.[w] ?? null;
  return n === null ? '' : doc.strings[n]!;
}

/** The priority of job wait `w` of `doc`, as its summary has it: `{}` for 0. */
function priorityAt(doc: Pick<IndexDoc, 'waitPriority'>, w: number): { priority?: number } {
  const p = doc.waitPriority?.[w] ?? null;
  return p === null ? {} : { priority: p };
}

/** A `waitKey` cell's key: `true` stands for the entry's own `correlationKey`. */
function waitKeyOf(cell: string | null | true, correlationKey: string | null): string | null {
  return cell === true ? correlationKey : cell;
}

function plus(base: number, ms: number | null): number | null {
  return ms === null ? null : base + ms;
}
