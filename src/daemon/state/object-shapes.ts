/**
 * Shapes of the live state's objects chosen for V8's garbage collector: the values are the
 * same, only which objects hold them changes. Each function says why it pays.
 */
import { extensibleCopy } from '../../shared/json-object.js';
import type { Execution, NodeInstance, Writable } from './state.js';

/**
 * A copy of execution `inst`: the same data in new objects (the execution, its containers and
 * node instances; what they hold is shared, since the reducer replaces it, never changes it).
 * What a step's draft changes in place of the live object (state/draft/state-draft.ts).
 *
 * Why it pays besides: an execution that waited a while lives in V8's old generation. Resuming
 * it writes new objects (log lines, nodes, variables, times) into it, and every such
 * old-to-new pointer is a root for the scavenger until the next full GC, even once the
 * execution is finished and gone: what it points to survives and is promoted. Resumed in a
 * copy, the old objects are left unchanged (dead, pointing at nothing new), and the copy dies
 * young with all it gained.
 *
 * Its nodes by Object.assign, not a spread: on Node 20 (V8 11.3) a spread's copy gets a map
 * outside the transition tree, so each property the reducer then adds to a node (`answeredBy`
 * and `answeredAt`, `attempts`) goes to the runtime and makes maps of its own, and every read
 * of such nodes after is megamorphic. Built up from `{}`, the copies share the usual maps. The
 * execution itself stays a spread: nothing on the hot path adds to it, and a spread copies
 * its twenty-odd fields faster.
 */
export function executionCopy(inst: Execution): Execution {
  const nodes: Record<string, NodeInstance> = {};
  for (const id in inst.nodes) {
    const node = Object.assign({}, inst.nodes[id]!);
    if (node.children) node.children = node.children.slice(); // a child's start adds to it
    if (node.fired) node.fired = node.fired.slice(); // boundary.fired adds to it
    nodes[id] = node;
  }
  const copy = { ...inst };
  copy.nodes = nodes;
  copy.logs = inst.logs.slice();
  copy.variables = extensibleCopy(inst.variables); // the step adds to them
  copy.joins = extensibleCopy(inst.joins);
  return copy;
}

/**
 * Makes an execution just parsed from the snapshot or the journal share its strings, where
 * JSON.parse gave each its own copy (V8 shares only strings of up to 10 characters): its id
 * with its key in `instances` (`id`), each node's times with the time before them (the nodes of
 * a step share one ISO string, as they do in a running daemon), and its flow's id, name and
 * version and each log line that is one string with the same of `prev`, the execution recovered
 * just before it (executions of a flow log alike). Equal strings only, so nothing a reader sees
 * changes. It takes a good part off each waiting execution's heap (docs/decisions/): less for
 * every scavenge and mark to walk while the daemon runs.
 */
export function shareParsedStrings(inst: Execution, id: string, prev: Execution | null): void {
  const own = inst as Writable<Execution>;
  if (own.processInstanceId === id) own.processInstanceId = id;
  if (prev !== null) {
    if (own.processId === prev.processId) own.processId = prev.processId;
    if (own.processName === prev.processName) own.processName = prev.processName;
    if (own.processVersion === prev.processVersion) own.processVersion = prev.processVersion;
    const logs = own.logs;
    const before = prev.logs;
    const n = Math.min(logs.length, before.length);
    for (let i = 0; i < n; i++) {
      const line = logs[i];
      if (typeof line === 'string' && line === before[i]) logs[i] = before[i]!;
    }
  }
  let time = own.startTime;
  for (const key in own.nodes) {
    const node = own.nodes[key] as Writable<NodeInstance>;
    if (node.startTime === time) node.startTime = time;
    else time = node.startTime;
    if (node.endTime === null) continue;
    if (node.endTime === time) node.endTime = time;
    else time = node.endTime;
  }
}
