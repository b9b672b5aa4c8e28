/**
 * The summary a checkpoint writes beside each execution it puts in a segment
 * (StoreOptions.snapshotCollection.summarize): state/execution-summary.ts's, with the due times
 * of timer boundary events read from the execution's flow (effect-plan.ts's boundaryDue).
 */
import { FlowGraph } from '../../shared/flow/graph.js';
import { nodesAt } from '../../shared/flow/types.js';
import { summarize, type ExecutionSummary } from '../state/execution-summary.js';
import { WFX_STORE } from '../state/records.js';
import type { Instance, WfxState } from '../state/state.js';
import { boundaryDue } from './effect-plan.js';
import type { FlowScope } from './step/context.js';

/**
 * A summarizer of executions of the state it is given: flows parsed once per version (a flow
 * version never changes). An execution whose flow cannot be read is summarized without its
 * boundary timers rather than failing the checkpoint: its start walks it again in any case.
 */
export function executionSummarizer(): (entry: unknown, state: object) => ExecutionSummary {
  const graphs = new Map<string, FlowScope>();
  let state: WfxState | null = null;
  const flowOf = (inst: Instance): FlowScope => {
    const key = `${inst.processId}\u0000${inst.processVersion}\u0000${inst.scope?.join('/') ?? ''}`;
    let g = graphs.get(key);
    if (!g) {
      const definition = state!.flows[inst.processId]!.versions[inst.processVersion]!.definition;
      const nodes = nodesAt(definition, inst.scope)!;
      const startId = Object.keys(nodes).find((n) => nodes[n]!.type === 'startEvent')!;
      g = { definition, nodes, graph: new FlowGraph(nodes), startId };
      graphs.set(key, g);
    }
    return g;
  };
  const due = boundaryDue({ flowOf });
  return (entry, s) => {
    state = s as WfxState;
    try {
      return summarize(entry as Instance, due);
    } catch {
      return summarize(entry as Instance, () => []);
    }
  };
}

/**
 * How the daemon opens its JSON store: WFX_STORE with its executions kept in execution
 * segments, each with its summary (a summarizer of its own per store).
 */
export function wfxJsonStore(): typeof WFX_STORE & {
  readonly snapshotCollection: typeof WFX_STORE.snapshotCollection & {
    readonly summarize: (entry: unknown, state: object) => ExecutionSummary;
  };
} {
  return { ...WFX_STORE, snapshotCollection: { ...WFX_STORE.snapshotCollection, summarize: executionSummarizer() } };
}
