/**
 * The engine's step run in memory for a flow test (`wfx test`): a state built by the reducer, a
 * clock of the test's own, flows published with the daemon's own code, no store, no disk and no
 * timers of the process. Each input is one step (engine/step/index.ts, runStep), committed at
 * once; what it calls for is planned as the daemon plans it (engine/effect-plan.ts) and carried
 * out here: timers kept until the test's clock passes them, work handed to the case's mocks (or
 * the real sandbox and network), executions left for later continued. The same steps the daemon
 * runs, so a flow that passes here runs the same path there.
 */
import { DEFAULT_MAX_JSON_DEPTH } from '../../shared/json-shape.js';
import type { FlowDefinition } from '../../shared/flow/types.js';
import { DomainSchemas } from '../engine/domain-schemas.js';
import { planEffects, type Listening } from '../engine/effect-plan.js';
import { nodeKey, timerTarget, type NodeKey, type TimerKey } from '../engine/keys.js';
import { DEFAULT_LIMITS, type ExecutionLimits } from '../engine/limits.js';
import { StartRate } from '../engine/start-rate.js';
import { engineStepContext } from '../engine/step-context.js';
import type { StepContext, WorkOrder } from '../engine/step/context.js';
import { runStep, type StepAnswer, type StepInput } from '../engine/step/index.js';
import { publishFlow } from '../flows/publish.js';
import type { WorkResult } from '../outbound/result.js';
import { execution } from '../state/executions.js';
import { applyRecord, type WfxRecord } from '../state/records.js';
import { initialState, STATE, STATUS, type Environment, type WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';

/** Nothing listens to lifecycle events, jobs, spans or metrics in a test. */
const LISTENING: Listening = { lifecycle: false, jobs: false, spans: false, metrics: false };

/** Steps one case may run before it is stopped: a flow that loops without end fails its case instead of the run. */
export const MAX_STEPS = 10_000;

/** A uuidv7-shaped id from the clock and a counter: the same case gives the same ids, run after run. */
export function countedId(now: Date, n: number): string {
  const hex = now.getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** A store over `state` in memory, for publishFlow: a commit is applied at once. */
export function memoryStore(state: WfxState): DurableStore<WfxState, WfxRecord> {
  return {
    state,
    failed: null,
    commit: (...records) => {
      for (const r of records) applyRecord(state, r);
      return Promise.resolve();
    },
    flush: () => Promise.resolve(),
    transact: () => {
      throw new Error('not used by publishFlow');
    },
  };
}

/**
 * Carries out a node's work (a mock, the sandbox, the network): its result, as the work runner
 * hands it back. A rejection stops what the engine was doing (settle, advance reject with it).
 */
export type DoWork = (order: WorkOrder) => Promise<WorkResult>;

/** What a MemoryEngine is made with. */
export interface MemoryEngineOptions {
  /** The clock's start, ms since the epoch. */
  readonly now: number;
  readonly work: DoWork;
  /**
   * Takes up jobs that wait for a worker (domainTasks), once nothing else is left to run; true
   * when it ran steps (settle then goes on with what they called for).
   */
  readonly jobs?: () => Promise<boolean>;
  readonly limits?: Partial<ExecutionLimits>;
}

/** The step in memory, with the effects a test needs carried out (see the top of this file). */
export class MemoryEngine {
  readonly state: WfxState = initialState();
  /** The test's clock, ms since the epoch: every step runs at it. */
  ms: number;
  readonly ctx: StepContext;
  /** Steps run so far (MAX_STEPS). */
  steps = 0;
  private ids = 0;
  /** Timers armed: when each is due. */
  private readonly timers = new Map<TimerKey, number>();
  /** Inputs waiting for their step, in order (executions continued). */
  private readonly inputs: StepInput[] = [];
  /** Work to carry out, in the order the steps asked for it. */
  private readonly work: WorkOrder[] = [];
  /** Node instances whose work is asked for or under way (StepContext.isWorking). */
  private readonly working = new Set<NodeKey>();

  constructor(private readonly options: MemoryEngineOptions) {
    this.ms = options.now;
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.ctx = engineStepContext({
      state: this.state,
      newInstanceId: (now) => countedId(now, ++this.ids),
      newId: (now) => countedId(now, ++this.ids),
      tracing: null,
      isWorking: (key) => this.working.has(key),
      files: undefined,
      maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
      schemas: new DomainSchemas(DEFAULT_MAX_JSON_DEPTH),
      limits,
      startRate: new StartRate(limits.organizationStartsPerSecond),
      claimsKept: false,
      keepsThrown: false,
    });
    this.apply({ type: 'organization.created', name: 'default', at: this.now.toISOString() });
  }

  /** The clock as a Date. */
  get now(): Date {
    return new Date(this.ms);
  }

  /** Applies records straight to the state (what no step makes: an environment variable set). */
  apply(...records: WfxRecord[]): void {
    for (const r of records) applyRecord(this.state, r);
  }

  /**
   * Publishes `definition` (validated) in the default organization with the daemon's publish
   * code; its processId. The webhook registrations and email connections its triggers name are
   * made first, when missing: a test starts through them without a sender or a mailbox.
   */
  async publish(definition: FlowDefinition, environment: Environment): Promise<string> {
    const at = this.now.toISOString();
    for (const t of definition.triggers ?? []) {
      if (t.type === 'webhook' && !Object.values(this.state.webhooks).some((w) => w.name === t.webhook))
        this.apply({
          type: 'webhook.saved',
          webhook: {
            webhookId: `test-${t.webhook}`,
            name: t.webhook,
            organization: 'default',
            provider: 'CUSTOM',
            environmentMode: 'SHARED',
            authType: 'NONE',
            custom: null,
            endpoints: [],
            createdAt: at,
            updatedAt: at,
          },
        });
      if (t.type === 'email' && !Object.values(this.state.emailConnections).some((c) => c.name === t.connection))
        this.apply({
          type: 'emailConnection.saved',
          connection: {
            connectionId: `test-${t.connection}`,
            name: t.connection,
            organization: 'default',
            host: 'mail.invalid',
            port: 993,
            security: 'TLS',
            user: 'test',
            password: '',
            mailbox: 'INBOX',
            createdAt: at,
            updatedAt: at,
          },
        });
    }
    const r = await publishFlow(memoryStore(this.state), {
      definition,
      organization: 'default',
      environment,
      now: this.now,
    });
    return r.processId;
  }

  /** Runs one step with `input` at the clock's time, commits it and takes up what it calls for. */
  run<I extends StepInput>(input: I): StepAnswer<I> {
    if (++this.steps > MAX_STEPS)
      throw new Error(`the case ran more than ${MAX_STEPS} steps: does the flow loop without end?`);
    const result = runStep(this.state, this.ctx, this.now, input);
    result.commit();
    for (const effect of planEffects(this.state, this.ctx, result.records, result.effects, LISTENING)) {
      switch (effect.kind) {
        case 'timer.set':
          this.timers.set(effect.key, effect.at);
          break;
        case 'timer.delete':
          this.timers.delete(effect.key);
          break;
        case 'work':
          this.working.add(nodeKey(effect.instanceId, effect.nodeInstanceId));
          this.work.push(effect);
          break;
        case 'work.stop':
          this.working.delete(effect.key);
          break;
        case 'defer':
          this.inputs.push({ kind: 'continue', ids: [effect.instanceId], from: 0 });
          break;
        default:
          break; // logs, finished, claims: nothing to do in memory
      }
    }
    return result.answer;
  }

  /**
   * Runs what the steps so far called for until nothing is left but waits: executions
   * continued, then work carried out (one at a time, in order), each result a step of its own,
   * then jobs taken up (`jobs`).
   */
  async settle(): Promise<void> {
    for (;;) {
      const input = this.inputs.shift();
      if (input !== undefined) {
        this.run(input);
        continue;
      }
      const order = this.work.shift();
      if (order === undefined) {
        if (this.options.jobs !== undefined && (await this.options.jobs())) continue;
        return;
      }
      const key = nodeKey(order.instanceId, order.nodeInstanceId);
      if (!this.working.has(key) || !this.active(order)) {
        this.working.delete(key);
        continue;
      }
      const result = await this.options.work(order);
      this.working.delete(key);
      if (!this.active(order)) continue;
      const at = { instanceId: order.instanceId, nodeInstanceId: order.nodeInstanceId };
      this.run({ kind: 'work.done', ...at, result, request: order.request });
    }
  }

  /**
   * Moves the clock `ms` on: every timer due by then fires at its own due time, in order
   * (earliest first, then in the order armed), each followed by what it calls for.
   */
  async advance(ms: number): Promise<void> {
    const until = this.ms + ms;
    for (;;) {
      let next: [TimerKey, number] | null = null;
      for (const entry of this.timers) if (entry[1] <= until && (next === null || entry[1] < next[1])) next = entry;
      if (next === null) break;
      const [key, at] = next;
      this.timers.delete(key);
      this.ms = Math.max(this.ms, at);
      const { instanceId, nodeInstanceId, boundaryId } = timerTarget(key);
      this.run({ kind: 'timer', instanceId, nodeInstanceId, ...(boundaryId !== undefined && { boundaryId }) });
      await this.settle();
    }
    this.ms = until;
    await this.settle(); // what waited for the time itself (a job's retry backoff)
  }

  /** Whether the node of `order` still waits for its work: Active in a running execution. */
  private active(order: WorkOrder): boolean {
    const inst = execution(this.state, order.instanceId);
    const ni = inst?.nodes[order.nodeInstanceId];
    return inst !== undefined && ni !== undefined && inst.stateCd === STATE.RUNNING && ni.statusCd === STATUS.ACTIVE;
  }
}
