/**
 * The step's bookkeeping: the records it wrote (each applied to the state at once), the
 * executions it touched and deferred, the effects it asks for, and the queue of nodes to run
 * with its budget. How tokens move through it is tokens.ts's; running nodes, step.ts's.
 */
import type { WfxRecord } from '../../state/records.js';
import type { Execution, NodeInstance, WfxState } from '../../state/state.js';
import { stepBytes } from '../limits.js';
import type { StepContext, StepEffect } from './context.js';

/** Node runs per step before the rest is left for a later one (fairness between executions). */
const RUNS_PER_STEP = 10_000;

let lastAt = { ms: NaN, iso: '' };
/** `now.toISOString()`, made once per millisecond: under load a dozen steps share one. */
function isoAt(now: Date): string {
  const ms = now.getTime();
  if (ms !== lastAt.ms) lastAt = { ms, iso: now.toISOString() };
  return lastAt.iso;
}

/** A node to run: an Active node instance, or a token that reached `nodeId` and is not written yet. */
export interface Queued {
  readonly instanceId: string;
  readonly nodeId: string;
  readonly nodeInstanceId: string | null;
}

/** The step's bookkeeping (see the top of this file). */
export abstract class StepLedger {
  /** Executions this step changed. */
  readonly touched = new Set<string>();
  /** Executions with runnable nodes left over (the run budget ran out). */
  readonly deferred = new Set<string>();
  /** What the step asks to be done once durable (context.ts, StepEffect). */
  readonly effects: StepEffect[] = [];
  /** The records written, in order (each applied when written). */
  readonly records: WfxRecord[] = [];
  /**
   * Nodes to run: an existing Active node instance (`nodeInstanceId`), or a token that just
   * reached `nodeId` and is not written yet: most nodes complete in the step that reaches
   * them, and are then written as one `node.ran` record instead of entered + completed.
   */
  protected readonly queue: Queued[] = [];
  /** Tokens queued but not written yet, per execution (they count toward MAX_NODE_INSTANCES). */
  protected readonly pending = new Map<string, number>();
  /** Nodes run so far (the run budget: spent). */
  protected runs = 0;
  private maxRuns = RUNS_PER_STEP;
  /** The JSON size of the data this step's nodes set and started executions with (limits.ts, stepBytes). */
  bytes = 0;
  readonly maxBytes: number;
  /** The step's instant, as ISO text. */
  readonly at: string;

  constructor(
    readonly state: WfxState,
    readonly ctx: StepContext,
    readonly now: Date,
    /** Applies a record to the state (the store's transaction, or the reducer in a test). */
    private readonly apply: (record: WfxRecord) => void,
  ) {
    this.at = isoAt(now);
    this.maxBytes = stepBytes(ctx.limits);
  }

  /** Writes `record`: applied to the state at once, and kept in `records`. */
  emit(record: WfxRecord): void {
    this.records.push(record);
    this.apply(record);
  }

  /** Takes `n` starts of `organization` from its org-starts-per-second limit: 0, else the ms to wait (StartRate.take). */
  takeStarts(organization: string, n: number): number {
    return this.ctx.startRate.take(organization, n, this.now.getTime());
  }

  /** Whether this step has run as many nodes, or written as much data, as one step may. */
  get spent(): boolean {
    return this.runs >= this.maxRuns || this.bytes >= this.maxBytes;
  }

  /**
   * Lowers how many nodes this step runs before it leaves the rest for a later one: a step that
   * continues deferred executions takes a smaller share of a turn of the event loop.
   */
  limitRuns(max: number): void {
    this.maxRuns = Math.min(this.maxRuns, max);
  }

  /** Leaves execution `id` for a later step (its runnable nodes stay Active). */
  defer(id: string): void {
    if (this.deferred.has(id)) return;
    this.deferred.add(id);
    this.effects.push({ kind: 'defer', instanceId: id });
  }

  /** Queues the Active node instance `ni` of `inst` to run (a restart's, or a deferred step's). */
  queueActive(inst: Execution, ni: NodeInstance): void {
    this.queue.push({ instanceId: inst.processInstanceId, nodeId: ni.nodeId, nodeInstanceId: ni.id });
  }
}
