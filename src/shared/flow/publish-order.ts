/**
 * The order to publish several flows in: a flow an agent calls as a tool is published before
 * the agent (publish checks that each tool is published with inputs), whatever the order of
 * the files. Otherwise the given order is kept; flows that call each other in a cycle keep it too.
 */
import { flowToolSpecs, toolProcessId } from './agent-tools.js';
import type { FlowDefinition, FlowNode } from './types.js';

/**
 * `items` reordered so that each flow's tools come before it (a stable sort by dependency):
 * the flows of a cycle stay together in their given order, after the tools they call outside
 * it. Pure.
 */
export function publishOrder<T>(items: readonly T[], flowOf: (item: T) => FlowDefinition | null): T[] {
  const flows = items.map(flowOf);
  const byProcessId = new Map<string, number>();
  flows.forEach((flow, i) => {
    if (flow && !byProcessId.has(flow.processId)) byProcessId.set(flow.processId, i);
  });
  // The items each item's agents call, in the order they name them.
  const calls = flows.map((flow, i) =>
    (flow ? toolsOf(flow.nodes) : []).flatMap((processId) => {
      const j = byProcessId.get(processId);
      return j === undefined || j === i ? [] : [j];
    }),
  );
  const component = cycles(calls);
  const members = new Map<number, number[]>();
  component.forEach((c, i) => members.set(c, [...(members.get(c) ?? []), i]));
  const out: T[] = [];
  const placed = new Set<number>();
  // Components form no cycle among themselves: each is placed once, after those it calls.
  const place = (c: number): void => {
    if (placed.has(c)) return;
    placed.add(c);
    for (const i of members.get(c)!) for (const j of calls[i]!) place(component[j]!);
    for (const i of members.get(c)!) out.push(items[i]!);
  };
  component.forEach((c) => place(c));
  return out;
}

/**
 * The strongly connected components of the graph `calls` (Tarjan): one number per item, the
 * same for items that call each other, directly or around a cycle.
 */
function cycles(calls: readonly (readonly number[])[]): number[] {
  const index = new Array<number>(calls.length).fill(-1);
  const low = new Array<number>(calls.length).fill(0);
  const component = new Array<number>(calls.length).fill(-1);
  const stack: number[] = [];
  let next = 0;
  let count = 0;
  const visit = (v: number): void => {
    index[v] = low[v] = next++;
    stack.push(v);
    for (const w of calls[v]!) {
      if (index[w] === -1) {
        visit(w);
        low[v] = Math.min(low[v]!, low[w]!);
      } else if (component[w] === -1) {
        low[v] = Math.min(low[v]!, index[w]!); // on the stack: part of the cycle being walked
      }
    }
    if (low[v] !== index[v]) return;
    let w: number;
    do {
      w = stack.pop()!;
      component[w] = count;
    } while (w !== v);
    count++;
  };
  calls.forEach((_, v) => {
    if (index[v] === -1) visit(v);
  });
  return component;
}

/** The processIds the callAgent nodes of `nodes` (and of their bodies) call as tools. */
function toolsOf(nodes: Readonly<Record<string, FlowNode>>): string[] {
  const out: string[] = [];
  for (const node of Object.values(nodes)) {
    if (node.type === 'callAgent') out.push(...flowToolSpecs(node.tools).map(({ spec }) => toolProcessId(spec)));
    if ((node.type === 'loopNode' || node.type === 'subProcess') && node.nodes) out.push(...toolsOf(node.nodes));
  }
  return out;
}
