/*
 * Two runs of one flow set side by side: the nodes each reached, in the order the runs went
 * (path alignment), the first point where their paths parted, the time each spent at each node,
 * and the variables that differ there. Compared by node id, so two versions of a flow compare
 * too. Pure: the compare page reads the runs, their versions and logs, and draws what this returns.
 */
import type { InstanceView, LogEntry, NodeView } from '../../shared/api/process.js';
import type { FlowNode } from '../../shared/flow/types.js';
import { buildGraph, type GraphModel, type ModelEdge } from '../diagram/graph-model.js';
import { NODE_STATE_WORDS, nodeState } from './states.js';
import {
  copiesComplete,
  variableChanges,
  visitVariables,
  type VariableChange,
  type VisitVariables,
} from './compare-variables.js';

/** Which runs reached a node, or went along an edge. */
export type Side = 'both' | 'a' | 'b';

/** One run as the comparison takes it: the execution, its version's nodes, its log (null: not read yet). */
export interface RunInput {
  readonly run: InstanceView;
  readonly nodes: Readonly<Record<string, FlowNode>>;
  readonly log: readonly LogEntry[] | null;
}

/** The time one run spent at a node: its visits and their durations summed. */
export interface NodeTime {
  readonly visits: number;
  /** Milliseconds, every visit summed (one still open counted up to `now`). */
  readonly ms: number;
  /** A visit is still open. */
  readonly open: boolean;
}

/** The variables that differ at a node both runs reached (its last visit in each); null: a log cannot tell. */
export interface NodeVariableDiff {
  readonly entry: readonly VariableChange[] | null;
  readonly exit: readonly VariableChange[] | null;
}

/** A node reached by either run, with what each did there. */
export interface NodeRow {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly side: Side;
  readonly a: NodeTime | null;
  readonly b: NodeTime | null;
  /** B's time less A's, in milliseconds, when both reached it. */
  readonly deltaMs: number | null;
  /** For a node both reached; null for one only one run reached. */
  readonly variables: NodeVariableDiff | null;
}

/** Where one run went from the divergence point. */
export interface RunWay {
  /** The node's latest state there, in words (`completed`, `failed`). */
  readonly state: string;
  /** The edges it took out of the node: each one's label (a branch's condition, `default`) or null, and the node it leads to. */
  readonly took: readonly { readonly label: string | null; readonly to: string; readonly toName: string }[];
  /** Its visits there. */
  readonly visits: number;
}

/** The first node both runs reached where they went different ways (other edges, another end, more visits). */
export interface Divergence {
  readonly nodeId: string;
  readonly name: string;
  readonly type: string;
  readonly a: RunWay;
  readonly b: RunWay;
}

/** The comparison of run A with run B. */
export interface Comparison {
  /** They run the same flow (the page compares nothing else). */
  readonly sameFlow: boolean;
  readonly versions: { readonly a: string; readonly b: string };
  /** Node ids only one version defines: compared by id, drawn from that version. */
  readonly onlyDefinedIn: { readonly a: readonly string[]; readonly b: readonly string[] };
  /** Every node either reached, in the order the runs reached them (A's order, B's own nodes where B reached them). */
  readonly rows: readonly NodeRow[];
  readonly divergence: Divergence | null;
  /** The diagram: A's version with the nodes only B's defines, each edge taken by either run drawn taken. */
  readonly graph: GraphModel;
  /** Which runs went along each edge of `graph` (by index); null: neither. */
  readonly edgeSides: readonly (Side | null)[];
  /** Which runs reached each node or boundary event of `graph`, by id; absent: neither. */
  readonly nodeSides: ReadonlyMap<string, Side>;
  /** The variables each run ends with (has now) that differ. */
  readonly finalVariables: readonly VariableChange[];
  /** A log's copies of the variables stopped before its end (a large log): values after that are unknown. */
  readonly variablesIncomplete: { readonly a: boolean; readonly b: boolean };
}

/** Node ids in the order a run first reached them. Pure. */
export function firstVisits(nodes: readonly NodeView[]): string[] {
  const sorted = [...nodes].sort((x, y) => (x.startTime < y.startTime ? -1 : x.startTime > y.startTime ? 1 : 0));
  return [...new Set(sorted.map((n) => n.nodeId))];
}

/**
 * The two paths (node ids in first-visit order) as one sequence: A's nodes in A's order, each of
 * B's own nodes placed right after the node B reached before it (the start when none). Pure.
 */
export function alignPaths(a: readonly string[], b: readonly string[]): { id: string; side: Side }[] {
  const inA = new Set(a);
  const inB = new Set(b);
  const out: { id: string; side: Side }[] = a.map((id) => ({ id, side: inB.has(id) ? 'both' : 'a' }));
  for (let i = 0; i < b.length; i++) {
    const id = b[i]!;
    if (inA.has(id)) continue;
    const before = i === 0 ? -1 : out.findIndex((r) => r.id === b[i - 1]);
    out.splice(before + 1, 0, { id, side: 'b' });
  }
  return out;
}

/** A run's time at each node: visits and summed durations (an open visit up to `now`). Pure. */
export function nodeTimes(nodes: readonly NodeView[], now: number): Map<string, NodeTime> {
  const times = new Map<string, NodeTime>();
  for (const n of nodes) {
    const end = n.endTime === null ? now : Date.parse(n.endTime);
    const ms = Math.max(0, end - Date.parse(n.startTime));
    const t = times.get(n.nodeId);
    times.set(n.nodeId, {
      visits: (t?.visits ?? 0) + 1,
      ms: (t?.ms ?? 0) + ms,
      open: (t?.open ?? false) || n.endTime === null,
    });
  }
  return times;
}

/** An edge's identity across versions: its ends and the boundary event it leaves from. */
const edgeKey = (e: ModelEdge) => JSON.stringify([e.from, e.boundary, e.to]);

/** What a run did at node `id` of its graph: its state, the edges it took out, its visits. */
function wayAt(graph: GraphModel, id: string, names: (id: string) => string): RunWay {
  const node = graph.nodes.find((n) => n.id === id);
  const boundary = graph.nodes.flatMap((n) => n.boundaries).find((b) => b.id === id);
  const instances = node?.instances ?? boundary?.instances ?? [];
  const latest = instances.at(-1);
  const took = graph.edges
    .filter((e) => e.taken && (e.boundary ?? e.from) === id)
    .map((e) => ({ label: e.label, to: e.to, toName: names(e.to) }));
  return {
    state: latest ? NODE_STATE_WORDS[nodeState(latest.statusCd)] : 'not reached',
    took,
    visits: instances.length,
  };
}

/** Two ways differ: other edges out, another end state, or another number of visits. */
function differs(a: RunWay, b: RunWay): boolean {
  const targets = (w: RunWay) => JSON.stringify([...new Set(w.took.map((t) => t.to))].sort());
  return targets(a) !== targets(b) || a.state !== b.state || a.visits !== b.visits;
}

/**
 * The first node, in the aligned order, both runs reached and left differently (other edges
 * taken, another end state, another number of visits); null when their paths did not part. Pure.
 */
export function findDivergence(
  order: readonly { id: string; side: Side }[],
  graphA: GraphModel,
  graphB: GraphModel,
  names: (id: string) => string,
  types: (id: string) => string,
): Divergence | null {
  for (const { id, side } of order) {
    if (side !== 'both') continue;
    const a = wayAt(graphA, id, names);
    const b = wayAt(graphB, id, names);
    if (differs(a, b)) return { nodeId: id, name: names(id), type: types(id), a, b };
  }
  return null;
}

/** The nodes of `a` with those only `b` defines after them: A's version, plus what B's adds. */
function mergedNodes(
  a: Readonly<Record<string, FlowNode>>,
  b: Readonly<Record<string, FlowNode>>,
): Record<string, FlowNode> {
  const merged: Record<string, FlowNode> = { ...a };
  for (const [id, node] of Object.entries(b)) if (!Object.hasOwn(a, id)) merged[id] = node;
  return merged;
}

/** The variables at a node both runs reached, as far as both logs tell. */
function nodeVariableDiff(a: VisitVariables, b: VisitVariables): NodeVariableDiff {
  return {
    entry: a.entry && b.entry ? variableChanges(a.entry, b.entry) : null,
    exit: a.exit && b.exit ? variableChanges(a.exit, b.exit) : null,
  };
}

/** A run's variables as it holds them now: its `data` without the failure. */
function variablesOf(run: InstanceView): Record<string, unknown> {
  const { error: _error, ...variables } = run.data;
  return variables;
}

/**
 * Compares run `A` with run `B` (`now`: the instant open visits are counted up to). Nodes are
 * matched by id; a node only one version defines is drawn from that version. Pure.
 */
export function compareRuns(A: RunInput, B: RunInput, now: number): Comparison {
  const graphA = buildGraph(A.nodes, A.run);
  const graphB = buildGraph(B.nodes, B.run);
  const merged = mergedNodes(A.nodes, B.nodes);
  const names = (id: string) => merged[id]?.name ?? id;
  const types = (id: string) => merged[id]?.type ?? 'unknown';
  const order = alignPaths(firstVisits(A.run.nodes), firstVisits(B.run.nodes));
  const timesA = nodeTimes(A.run.nodes, now);
  const timesB = nodeTimes(B.run.nodes, now);
  const completeA = A.log !== null && copiesComplete(A.log, variablesOf(A.run));
  const completeB = B.log !== null && copiesComplete(B.log, variablesOf(B.run));

  const rows: NodeRow[] = order.map(({ id, side }) => {
    const a = timesA.get(id) ?? null;
    const b = timesB.get(id) ?? null;
    return {
      id,
      name: names(id),
      type: types(id),
      side,
      a,
      b,
      deltaMs: a && b ? b.ms - a.ms : null,
      variables:
        side === 'both' && A.log && B.log
          ? nodeVariableDiff(visitVariables(A.log, id, completeA), visitVariables(B.log, id, completeB))
          : null,
    };
  });

  const plain = buildGraph(merged, null);
  const takenA = new Set(graphA.edges.filter((e) => e.taken).map(edgeKey));
  const takenB = new Set(graphB.edges.filter((e) => e.taken).map(edgeKey));
  const edgeSides = plain.edges.map((e): Side | null => {
    const k = edgeKey(e);
    return takenA.has(k) ? (takenB.has(k) ? 'both' : 'a') : takenB.has(k) ? 'b' : null;
  });
  // An edge B took that A's version does not draw (B's version rewired a node A defines too).
  const drawn = new Set(plain.edges.map(edgeKey));
  const extra = graphB.edges.filter((e) => e.taken && !drawn.has(edgeKey(e)) && Object.hasOwn(merged, e.from));
  const graph: GraphModel = {
    nodes: plain.nodes,
    edges: [...plain.edges.map((e, i) => (edgeSides[i] === null ? e : { ...e, taken: true })), ...extra],
  };
  edgeSides.push(...extra.map((): Side => 'b'));

  return {
    sameFlow: A.run.processId === B.run.processId,
    versions: { a: A.run.processVersion, b: B.run.processVersion },
    onlyDefinedIn: {
      a: Object.keys(A.nodes).filter((id) => !Object.hasOwn(B.nodes, id)),
      b: Object.keys(B.nodes).filter((id) => !Object.hasOwn(A.nodes, id)),
    },
    rows,
    divergence: findDivergence(order, graphA, graphB, names, types),
    graph,
    edgeSides,
    nodeSides: new Map(order.map((r) => [r.id, r.side])),
    finalVariables: variableChanges(variablesOf(A.run), variablesOf(B.run)),
    variablesIncomplete: { a: A.log !== null && !completeA, b: B.log !== null && !completeB },
  };
}

/** A difference's identity: the same variable differing the same way. */
const changeKey = (c: VariableChange) => JSON.stringify([c.kind, c.a, c.b]);

/**
 * Each node's differences that are new there, in `rows`' order: on entry, those that did not
 * differ the same way when the node before it (both reached) was left; on exit, those that did
 * not on its entry. An input that differs shows at the first node, not at every one. Pure.
 */
export function newDifferences(rows: readonly NodeRow[]): Map<string, NodeVariableDiff> {
  const out = new Map<string, NodeVariableDiff>();
  let seen = new Map<string, string>();
  const keyed = (changes: readonly VariableChange[]) => new Map(changes.map((c) => [c.name, changeKey(c)]));
  for (const r of rows) {
    if (r.variables === null) continue;
    const { entry, exit } = r.variables;
    const freshEntry = entry === null ? null : entry.filter((c) => seen.get(c.name) !== changeKey(c));
    if (entry !== null) seen = keyed(entry);
    const freshExit = exit === null ? null : exit.filter((c) => seen.get(c.name) !== changeKey(c));
    if (exit !== null) seen = keyed(exit);
    out.set(r.id, { entry: freshEntry, exit: freshExit });
  }
  return out;
}
