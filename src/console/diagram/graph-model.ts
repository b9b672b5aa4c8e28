/*
 * A flow's graph as the diagram draws it: its nodes with their shapes and, for an execution,
 * each node's instances and state, the edges it took, the branch each gateway took, the loop
 * iterations, the boundary events that fired; and the bodies of the containers opened. Pure:
 * the diagram lays it out (layout.ts) and draws it (diagram.tsx).
 */
import type { InstanceView, NodeView } from '../../shared/api/process.js';
import { branchPart } from '../../shared/flow/coverage-items.js';
import { edgesOf, type EdgeKind } from '../../shared/flow/graph.js';
import type { BoundaryEventNode, FlowNode } from '../../shared/flow/types.js';
import { nodeState, type NodeState } from '../model/states.js';

/** How a node is drawn: a circle, a diamond, a rounded box, or a box that opens on its body. */
export type Shape = 'event' | 'gateway' | 'task' | 'container';

/** A boundary event, drawn on the border of the node it is attached to. */
export interface ModelBoundary {
  readonly id: string;
  readonly name: string;
  readonly event: 'timer' | 'error';
  /** Its node instances in the execution (one when it fired). */
  readonly instances: readonly NodeView[];
  readonly state: NodeState | null;
  /** It fired in this execution. */
  readonly fired: boolean;
}

/** A node of the graph, with what the execution did there. */
export interface ModelNode {
  readonly id: string;
  readonly type: string;
  readonly name: string;
  readonly shape: Shape;
  /** Its node instances in the execution, oldest first (none: not reached, or no execution). */
  readonly instances: readonly NodeView[];
  /** Its latest instance's state; null when not reached. */
  readonly state: NodeState | null;
  /** A loopNode reached: the iterations started so far; null otherwise. */
  readonly iterations: number | null;
  /** A collection loop waiting: how many items it iterates; null otherwise. */
  readonly loopItems: number | null;
  readonly boundaries: readonly ModelBoundary[];
  /** The node has a body (a loopNode, an embedded subProcess). */
  readonly container: boolean;
  /** A container opened: its body's graph; null when closed (or not a container). */
  readonly body: GraphModel | null;
  /** The child executions it started (a body's runs: loop iterations, an embedded subProcess), oldest first. */
  readonly children: readonly string[];
}

/** A connection drawn between two nodes. */
export interface ModelEdge {
  readonly from: string;
  readonly to: string;
  /** The boundary event the edge leaves from (then `from` is the node it is attached to); null otherwise. */
  readonly boundary: string | null;
  readonly kind: EdgeKind;
  /** What the edge says: a branch's condition, then, else, default, error, timeout; null for a plain next. */
  readonly label: string | null;
  /** The execution went along it. */
  readonly taken: boolean;
  /** Which branch of `from` it is, as test coverage names it (`then`, `branch 2`, `errorFlow`); null for a plain next and a boundary event's. */
  readonly branch: string | null;
}

/** A graph: the nodes of one node map (a flow's, or a body's) and the edges between them. */
export interface GraphModel {
  readonly nodes: readonly ModelNode[];
  readonly edges: readonly ModelEdge[];
}

/** The containers opened, by node id: the run whose states the body shows and what is opened inside it. */
export interface Opened {
  readonly [containerId: string]: OpenedBody;
}

/** An opened container's body: the child execution it shows (null: the definition only), and its own opened containers. */
export interface OpenedBody {
  readonly run: InstanceView | null;
  readonly opened: Opened;
}

const EVENT_TYPES = new Set([
  'startEvent',
  'endEvent',
  'intermediateThrowEvent',
  'intermediateCatchEvent',
  'boundaryEvent',
]);
const GATEWAY_TYPES = new Set(['exclusiveGateway', 'inclusiveGateway', 'parallelGateway', 'ifElse']);

/** The node has a body of nodes drawn inside it (a loopNode, a subProcess with `nodes:`). Pure. */
export function hasBody(node: FlowNode): node is FlowNode & { readonly nodes: Readonly<Record<string, FlowNode>> } {
  return node.type === 'loopNode' || (node.type === 'subProcess' && node.nodes !== undefined);
}

/** How a node of `type` is drawn. Pure. */
export function shapeOf(node: FlowNode): Shape {
  if (hasBody(node)) return 'container';
  if (EVENT_TYPES.has(node.type)) return 'event';
  if (GATEWAY_TYPES.has(node.type)) return 'gateway';
  return 'task';
}

/** A `${...}` condition without its braces, as an edge's label. */
function conditionText(condition: string): string {
  const m = /^\$\{([\s\S]*)\}$/.exec(condition.trim());
  return (m ? m[1]! : condition).trim();
}

/** The label of an edge of `kind` (branch `index` of `node` for a branch); null for a plain next. */
function edgeLabel(node: FlowNode, kind: EdgeKind, path: readonly (string | number)[]): string | null {
  switch (kind) {
    case 'branch': {
      const branches = (node as { branches?: readonly { condition?: string }[] }).branches;
      const b = branches?.[path[1] as number];
      return typeof b?.condition === 'string' ? conditionText(b.condition) : 'branch';
    }
    case 'then':
    case 'else':
    case 'default':
      return kind;
    case 'errorFlow':
      return 'error';
    case 'timeoutFlow':
      return 'timeout';
    default:
      return null;
  }
}

/** A boundary edge's label: `timer 5m`, `error CODE`. */
function boundaryLabel(b: BoundaryEventNode): string {
  const detail = b.event === 'timer' ? b.duration : b.errorCode;
  return detail ? `${b.event} ${detail}` : b.event;
}

/** The status an instance of the edge's source ends with when the edge is taken. */
function leavingStatus(kind: EdgeKind): number {
  if (kind === 'timeoutFlow') return 5;
  return kind === 'errorFlow' ? -1 : 2;
}

/**
 * Whether a token went from one of `from` to one of `to`: an instance of the source ended the
 * way the edge is taken (completed; failed or cancelled for errorFlow; timed out for
 * timeoutFlow) no later than an instance of the target started.
 */
function taken(kind: EdgeKind, from: readonly NodeView[], to: readonly NodeView[]): boolean {
  if (from.length === 0 || to.length === 0) return false;
  const status = leavingStatus(kind);
  const left = from.filter(
    (f) => f.endTime !== null && (status === -1 ? f.statusCd === 3 || f.statusCd === 4 : f.statusCd === status),
  );
  return left.some((f) => to.some((t) => t.startTime >= f.endTime!));
}

/**
 * The graph of the node map `nodes` for execution `run` (null: the definition alone), with the
 * containers in `opened` opened. Boundary events are drawn on their node, not as nodes; an edge
 * to a node not in the map is left out. Pure.
 */
export function buildGraph(
  nodes: Readonly<Record<string, FlowNode>>,
  run: InstanceView | null,
  opened: Opened = {},
): GraphModel {
  const byNode = new Map<string, NodeView[]>();
  for (const ni of run?.nodes ?? []) {
    const list = byNode.get(ni.nodeId);
    if (list) list.push(ni);
    else byNode.set(ni.nodeId, [ni]);
  }
  const instancesOf = (id: string): readonly NodeView[] => byNode.get(id) ?? [];
  const latestState = (list: readonly NodeView[]) => (list.length === 0 ? null : nodeState(list.at(-1)!.statusCd));

  const boundariesOf = new Map<string, ModelBoundary[]>();
  for (const [id, node] of Object.entries(nodes)) {
    if (node.type !== 'boundaryEvent' || nodes[node.attachedTo] === undefined) continue;
    const instances = instancesOf(id);
    const list = boundariesOf.get(node.attachedTo) ?? [];
    list.push({
      id,
      name: node.name ?? id,
      event: node.event,
      instances,
      state: latestState(instances),
      fired: instances.length > 0,
    });
    boundariesOf.set(node.attachedTo, list);
  }

  const modelNodes: ModelNode[] = [];
  const edges: ModelEdge[] = [];
  for (const [id, node] of Object.entries(nodes)) {
    const attached = node.type === 'boundaryEvent' && nodes[node.attachedTo] !== undefined;
    for (const e of edgesOf(id, node)) {
      if (nodes[e.to] === undefined) continue;
      const from = attached ? (node as BoundaryEventNode).attachedTo : id;
      edges.push({
        from,
        to: e.to,
        boundary: attached ? id : null,
        kind: attached && e.kind === 'next' ? 'boundary' : e.kind,
        label:
          attached && e.kind === 'next' ? boundaryLabel(node as BoundaryEventNode) : edgeLabel(node, e.kind, e.path),
        taken: taken(e.kind, instancesOf(id), instancesOf(e.to)),
        branch: attached ? null : branchPart(e.kind, e.path),
      });
    }
    if (attached) continue;
    const instances = instancesOf(id);
    const latest = instances.at(-1);
    const container = hasBody(node);
    const open = container ? opened[id] : undefined;
    const children = instances.flatMap((ni) => ni.childInstanceIds ?? []);
    const wait = latest?.statusCd === 1 ? latest.wait : undefined;
    modelNodes.push({
      id,
      type: node.type,
      name: node.name ?? id,
      shape: shapeOf(node),
      instances,
      state: latestState(instances),
      iterations: node.type === 'loopNode' && latest ? (latest.childInstanceIds?.length ?? 0) : null,
      loopItems: wait?.kind === 'loop' && wait.state.items ? wait.state.items.length : null,
      boundaries: boundariesOf.get(id) ?? [],
      container,
      body:
        container && open
          ? buildGraph((node as { nodes: Record<string, FlowNode> }).nodes, open.run, open.opened)
          : null,
      children,
    });
  }
  return { nodes: modelNodes, edges };
}

/** The labels of the edges a gateway (or any node) took, in declaration order. Pure. */
export function branchesTaken(graph: GraphModel, nodeId: string): string[] {
  return graph.edges.filter((e) => e.from === nodeId && e.boundary === null && e.taken).map((e) => e.label ?? e.to);
}
