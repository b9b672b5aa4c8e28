/**
 * What the engine gives the room of executions at rest (src/daemon/at-rest/), and takes from it:
 * the summary a checkpoint writes beside each execution it puts in a segment or a row
 * (StoreOptions.snapshotCollection.summarize): state/execution-summary.ts's, with the due times
 * of timer boundary events read from the execution's flow (effect-plan.ts's boundaryDue); the
 * JSON store's options with its segments; and the cache of resident executions the engine keeps.
 */
import { ExecutionCache } from '../at-rest/execution-cache.js';
import { SEGMENTS_AT_REST } from '../at-rest/segments/execution-segments.js';
import { summarize, type BoundaryDue, type ExecutionSummary } from '../state/execution-summary.js';
import { WFX_STORE } from '../state/records.js';
import type { Execution, WfxState } from '../state/state.js';
import type { SegmentsAtRest } from '../store/at-rest-port.js';
import { boundaryDue } from './effect-plan.js';
import type { EngineOptions } from './options.js';
import { FlowScopes } from './step-context.js';

/**
 * A summarizer of executions of the state it is given (the JSON store's and the PostgreSQL
 * store's `summarize`): flows parsed once per version and state. An execution whose flow cannot
 * be read is summarized without its boundary timers rather than failing the checkpoint: its
 * start walks it again in any case.
 */
export function executionSummarizer(): (entry: unknown, state: object) => ExecutionSummary {
  let scopes: { state: object; due: BoundaryDue } | null = null;
  return (entry, state) => {
    if (scopes?.state !== state) scopes = { state, due: boundaryDue(new FlowScopes(state as WfxState)) };
    try {
      return summarize(entry as Execution, scopes.due);
    } catch {
      return summarize(entry as Execution, () => []);
    }
  };
}

/**
 * How the daemon opens its JSON store: WFX_STORE with its executions kept in execution
 * segments (the store's port to them, StoreOptions.segments), each with its summary (a
 * summarizer of its own per store).
 */
export function wfxJsonStore(): typeof WFX_STORE & {
  readonly snapshotCollection: typeof WFX_STORE.snapshotCollection & {
    readonly summarize: (entry: unknown, state: object) => ExecutionSummary;
  };
  readonly segments: SegmentsAtRest;
} {
  return {
    ...WFX_STORE,
    snapshotCollection: { ...WFX_STORE.snapshotCollection, summarize: executionSummarizer() },
    segments: SEGMENTS_AT_REST,
  };
}

/** The cache EngineOptions ask for (`executionCache`, on a store whose executions can leave memory), else null. */
export function executionCacheFor(options: EngineOptions): ExecutionCache | null {
  const store = options.store.evictable;
  if (options.executionCache === undefined || !store) return null;
  const summarize = executionSummarizer();
  return new ExecutionCache({
    state: options.store.state,
    store,
    capacity: options.executionCache,
    summarize: (inst, state) => summarize(inst, state),
    checkpoint: () => options.store.checkpoint?.() ?? Promise.resolve(),
    onError: options.onError ?? (() => undefined),
  });
}
