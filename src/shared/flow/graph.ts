import type { FlowNode } from './types.js';

/** How one node connects to another. */
export type EdgeKind = 'next' | 'then' | 'else' | 'branch' | 'default' | 'errorFlow' | 'timeoutFlow' | 'boundary';

export interface Edge {
  readonly from: string;
  readonly to: string;
  readonly kind: EdgeKind;
  /** Property path in the node that names the target (`next.1`, `branches.0.next`). */
  readonly path: readonly (string | number)[];
}

/** Every outgoing connection of a node, in declaration order. Pure. */
export function edgesOf(id: string, node: FlowNode): Edge[] {
  const edges: Edge[] = [];
  const add = (to: unknown, kind: EdgeKind, path: (string | number)[]) => {
    if (typeof to === 'string') edges.push({ from: id, to, kind, path });
  };
  const n = node as unknown as Record<string, unknown>;
  if (Array.isArray(n.next)) n.next.forEach((to, i) => add(to, 'next', ['next', i]));
  else add(n.next, 'next', ['next']);
  add(n.then, 'then', ['then']);
  add(n.else, 'else', ['else']);
  if (Array.isArray(n.branches)) {
    n.branches.forEach((b, i) => add((b as { next?: unknown } | null)?.next, 'branch', ['branches', i, 'next']));
  }
  // A gateway's default is a connection; a memoryAction's `default` is a value.
  if (n.type === 'exclusiveGateway' || n.type === 'inclusiveGateway') add(n.default, 'default', ['default']);
  add(n.errorFlow, 'errorFlow', ['errorFlow']);
  add(n.timeoutFlow, 'timeoutFlow', ['timeoutFlow']);
  return edges;
}

/**
 * The connections of a flow's nodes, with incoming edges precomputed and reachability found
 * when first asked. Immutable once built; the engine keeps one per flow version.
 */
export class FlowGraph {
  private readonly out = new Map<string, Edge[]>();
  private readonly in = new Map<string, Edge[]>();
  /** Each node's position, for the bits of `reaching`. */
  private readonly index = new Map<string, number>();
  /** Per join asked about: the nodes that can reach it, one bit per node (see canReach). */
  private readonly reaching = new Map<string, Uint8Array>();
  private readonly flowEdges = new Map<string, { ways: readonly Edge[]; next: readonly Edge[] }>();
  private readonly attached = new Map<string, string[]>();

  constructor(readonly nodes: Readonly<Record<string, FlowNode>>) {
    for (const id of Object.keys(nodes)) {
      this.index.set(id, this.index.size);
      this.out.set(id, []);
      this.in.set(id, []);
    }
    for (const [id, node] of Object.entries(nodes)) {
      for (const edge of edgesOf(id, node)) {
        this.out.get(id)!.push(edge);
        this.in.get(edge.to)?.push(edge);
      }
    }
    // A boundary event is reached through the node it is attached to: an edge from that node
    // (never routed along; it makes the event reachable, and counts for OR-joins).
    for (const [id, node] of Object.entries(nodes)) {
      if (node?.type !== 'boundaryEvent' || !this.out.has(node.attachedTo)) continue;
      const edge: Edge = { from: node.attachedTo, to: id, kind: 'boundary', path: ['attachedTo'] };
      this.out.get(node.attachedTo)!.push(edge);
      this.in.get(id)!.push(edge);
      const list = this.attached.get(node.attachedTo) ?? [];
      list.push(id);
      this.attached.set(node.attachedTo, list);
    }
  }

  /** The boundary events attached to `id`, in declaration order. */
  boundaries(id: string): readonly string[] {
    return this.attached.get(id) ?? [];
  }

  /** Outgoing edges of `id` (none for an unknown id). */
  outgoing(id: string): readonly Edge[] {
    return this.out.get(id) ?? [];
  }

  /**
   * The ways a token leaves `id` on success (every edge but errorFlow and timeoutFlow), and of
   * those the `next` ones (the default route). Computed once per node: the engine routes with
   * them at every step.
   */
  routes(id: string): { readonly ways: readonly Edge[]; readonly next: readonly Edge[] } {
    let r = this.flowEdges.get(id);
    if (!r) {
      const ways = this.outgoing(id).filter(
        (e) => e.kind !== 'errorFlow' && e.kind !== 'timeoutFlow' && e.kind !== 'boundary',
      );
      r = { ways, next: ways.filter((e) => e.kind === 'next') };
      this.flowEdges.set(id, r);
    }
    return r;
  }

  /** Incoming edges of `id`: how many tokens a parallel join waits for. */
  incoming(id: string): readonly Edge[] {
    return this.in.get(id) ?? [];
  }

  /**
   * Ids reachable from `from` by following connections (not including `from` unless on a
   * cycle). One walk over the graph each call: the validator asks it once per node map.
   */
  reachableFrom(from: string): ReadonlySet<string> {
    const set = new Set<string>();
    const stack = this.outgoing(from).map((e) => e.to);
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (set.has(id) || !this.out.has(id)) continue;
      set.add(id);
      for (const e of this.outgoing(id)) stack.push(e.to);
    }
    return set;
  }

  /**
   * True when a token at `from` can still arrive at `to`. The engine asks it of inclusive joins
   * only: the nodes that reach a join are found once per join (one walk back from it, kept as
   * one bit per node), so a flow of n nodes holds n bits per join asked about, never a set per
   * node it is asked from.
   */
  canReach(from: string, to: string): boolean {
    const i = this.index.get(from);
    if (i === undefined) return false;
    let bits = this.reaching.get(to);
    if (!bits) {
      bits = new Uint8Array(Math.ceil(this.index.size / 8));
      const stack = this.incoming(to).map((e) => e.from);
      while (stack.length > 0) {
        const id = stack.pop()!;
        const j = this.index.get(id);
        if (j === undefined || bits[j >> 3]! & (1 << (j & 7))) continue;
        bits[j >> 3]! |= 1 << (j & 7);
        for (const e of this.incoming(id)) stack.push(e.from);
      }
      this.reaching.set(to, bits);
    }
    return (bits[i >> 3]! & (1 << (i & 7))) !== 0;
  }
}
