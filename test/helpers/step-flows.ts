/**
 * Whole flows driven through the step in memory (helpers/step.ts, MemoryStep): each step's
 * `defer` effects continued at once, as the engine's deferred steps would (deferred-executions.ts),
 * and its work answered by the test, so that a test reads what the engine would have decided
 * without a store, a disk or the work runner. The lifecycle events of each step are kept, read
 * from its records once it is applied, as the effect plan reads them (effect-plan.ts).
 */
import { lifecycleOf, type LifecycleEvent } from '../../src/daemon/engine/lifecycle.js';
import type { StepAnswer, StepInput, StepResult, WorkOrder } from '../../src/daemon/engine/step/index.js';
import type { EventOutcome } from '../../src/daemon/engine/step/events.js';
import type { WorkResult } from '../../src/daemon/outbound/result.js';
import { STATE, type Execution } from '../../src/daemon/state/state.js';
import { MemoryStep, type MemoryStepOptions } from './step.js';
import { liveInstances } from './state.js';

/** Nodes one continuing step runs (deferred-executions.ts, DEFERRED_RUNS). */
const DEFERRED_RUNS = 1000;
/** Steps one `run` may follow before the test is told its flow never settles. */
const MOST_STEPS = 100_000;

/** What a FlowStep may be given, besides MemoryStep's options. */
export interface FlowStepOptions extends MemoryStepOptions {
  /** The result of work a step asks for, handed back at once; undefined leaves it under way. */
  readonly work?: (order: WorkOrder) => WorkResult | undefined;
}

/** A MemoryStep whose every step is followed by the steps it leaves for later (see the top of this file). */
export class FlowStep extends MemoryStep {
  /** The lifecycle events of every step so far, in order. */
  readonly events: LifecycleEvent[] = [];
  private readonly work: FlowStepOptions['work'];
  /** True while a run follows its steps: the steps it runs are not followed again. */
  private following = false;

  constructor(options: FlowStepOptions = {}) {
    super(options);
    this.work = options.work;
  }

  /** Runs `input` as one step, then the steps it leaves (deferred executions, work answered); answers the first. */
  override run<I extends StepInput>(input: I): StepResult<StepAnswer<I>> {
    const first = this.one(input);
    if (this.following) return first;
    this.following = true;
    try {
      this.follow(first);
    } finally {
      this.following = false;
    }
    return first;
  }

  /** Starts an execution of flow `processId` in `organization`, as the API does. */
  startIn(
    organization: string,
    processId: string,
    data: Record<string, unknown> = {},
    correlationKey: string | null = null,
  ): StepResult<Execution> {
    return this.run({ kind: 'start', request: { organization, processId, data, correlationKey } });
  }

  /** Starts an execution of flow `processId` (organization default) and reads it once what it left has run. */
  started(processId: string, data: Record<string, unknown> = {}, correlationKey: string | null = null): Execution {
    return this.instance(this.start(processId, data, correlationKey).answer.processInstanceId);
  }

  /** As `started`, in `organization`. */
  startedIn(organization: string, processId: string, data: Record<string, unknown> = {}): Execution {
    return this.instance(this.startIn(organization, processId, data).answer.processInstanceId);
  }

  /** Completes the input node `nodeId` waiting in execution `id` with `data`. */
  answer(id: string, nodeId: string, data: Record<string, unknown>, action: 'COMPLETE' | 'CANCEL' = 'COMPLETE'): void {
    this.run({ kind: 'answer', instanceId: id, nodeId, action, data });
  }

  /** Delivers a message or signal as POST /process/event does without a message id or a ttl (Engine.publishEvent). */
  event(
    eventType: string,
    correlationKey: string | null,
    data: Record<string, unknown> = {},
    more: { organization?: string; ttlSeconds?: number } = {},
  ): EventOutcome {
    return this.run({
      kind: 'event',
      organization: more.organization ?? 'default',
      eventType,
      correlationKey,
      data,
      ttlSeconds: more.ttlSeconds ?? 0,
      messageId: null,
      dedupKey: null,
      elsewhere: [],
    }).answer;
  }

  /** Cancels execution `id` as the API does (Engine.cancel). */
  cancel(id: string): void {
    this.run({ kind: 'cancel', instanceId: id, reason: 'cancelled by request' });
  }

  /** One step, its lifecycle events kept. */
  private one<I extends StepInput>(input: I): StepResult<StepAnswer<I>> {
    const r = super.run(input);
    for (const record of r.records) this.events.push(...lifecycleOf(this.state, record));
    return r;
  }

  /** Runs what `first` left, and what that leaves, until nothing is. */
  private follow(first: StepResult<unknown>): void {
    const deferred: string[] = [];
    let head = 0;
    const work: WorkOrder[] = [];
    const take = (r: StepResult<unknown>) => {
      for (const e of r.effects) {
        if (e.kind === 'defer') deferred.push(e.instanceId);
        else if (e.kind === 'work' && this.work) work.push(e);
      }
    };
    take(first);
    for (let steps = 0; head < deferred.length || work.length > 0; steps++) {
      if (steps > MOST_STEPS) throw new Error(`the flow did not settle in ${MOST_STEPS} steps`);
      if (head < deferred.length) {
        const r = this.one({ kind: 'continue', ids: deferred.slice(), from: head, maxRuns: DEFERRED_RUNS });
        head = r.answer;
        take(r);
        continue;
      }
      const order = work.shift()!;
      const result = this.work?.(order);
      if (result === undefined) continue;
      const { instanceId, nodeInstanceId, request } = order;
      take(this.one({ kind: 'work.done', instanceId, nodeInstanceId, result, request }));
    }
  }
}

/** `nodeId:statusCd` of every node instance, in creation order (as helpers/engine.ts, trail). */
export function trail(inst: Execution): string[] {
  return Object.values(inst.nodes).map((n) => `${n.nodeId}:${n.statusCd}`);
}

/** The live executions of `m` that still run. */
export const running = (m: MemoryStep): Execution[] =>
  liveInstances(m.state).filter((i) => i.stateCd === STATE.RUNNING);

/** The child executions node `nodeId` of `inst` started, as they are now. */
export function childrenOf(m: MemoryStep, inst: Execution, nodeId: string): Execution[] {
  const ni = Object.values(inst.nodes).find((n) => n.nodeId === nodeId);
  return (ni?.children ?? []).map((id) => m.instance(id));
}

/** The execution's error code (it failed), or what it is instead. */
export const failedWith = (inst: Execution): string =>
  inst.stateCd === STATE.FAILED ? (inst.error?.code ?? 'no error') : `state ${inst.stateCd}`;
