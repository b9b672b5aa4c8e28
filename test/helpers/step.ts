/**
 * The engine's step driven in memory: a state built by the reducer, a clock tests move by hand,
 * flows parsed from YAML and published with the daemon's own code, no store and no disk. Each
 * `run` is one step (engine/step/index.ts, runStep): its records, effects and answer. The step
 * decides on a deeply frozen copy of the state (frozen-state.ts), so a step that changed the
 * state it was given, rather than its draft, throws; its records are then applied once.
 */
import { randomUUID } from 'node:crypto';
import { engineStepContext } from '../../src/daemon/engine/step-context.js';
import { runStep, type StepAnswer, type StepInput, type StepResult } from '../../src/daemon/engine/step/index.js';
import type { FileMeta, StepContext, StepTracing } from '../../src/daemon/engine/step/context.js';
import { DEFAULT_LIMITS, type ExecutionLimits } from '../../src/daemon/engine/limits.js';
import { nodeKey, type NodeKey } from '../../src/daemon/engine/keys.js';
import { StartRate } from '../../src/daemon/engine/start-rate.js';
import { publishFlow } from '../../src/daemon/flows/publish.js';
import { DomainSchemas } from '../../src/daemon/engine/domain-schemas.js';
import type { BulkOperation } from '../../src/daemon/state/bulk.js';
import { applyRecord, type WfxRecord } from '../../src/daemon/state/records.js';
import {
  initialState,
  type Environment,
  type Execution,
  type NodeInstance,
  type WfxState,
} from '../../src/daemon/state/state.js';
import type { DurableStore } from '../../src/daemon/store/store.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../../src/shared/json-shape.js';
import { validateFlowSource } from '../../src/shared/flow/validate.js';
import { BILLING } from './jobs.js';
import { frozenCopy } from './frozen-state.js';
import { countedId, memoryStore } from '../../src/daemon/flow-tests/memory-engine.js';

/** What a MemoryStep may be given. */
export interface MemoryStepOptions {
  readonly limits?: Partial<ExecutionLimits>;
  /** Kept messages consumed only under a claim (the step lists `claim` effects). */
  readonly claimsKept?: boolean;
  /** Events thrown written and listed as `pass` effects. */
  readonly keepsThrown?: boolean;
  /** Tracing (StepContext.tracing); default none, whatever the process's tracer. */
  readonly tracing?: StepTracing | null;
  /**
   * False: each step decides on the live state and its draft is committed, as the engine's
   * runner does (the benches: a frozen copy per step is for correctness, not speed). Default true.
   */
  readonly frozen?: boolean;
}

/** The step in memory (see the top of this file). */
export class MemoryStep {
  readonly state: WfxState = initialState();
  /** The clock, in ms since the epoch: every step runs at it. */
  ms = Date.parse('2026-11-21T10:00:00.000Z');
  /** Node instances whose work is under way (StepContext.isWorking). */
  readonly working = new Set<NodeKey>();
  /** The file store's files, by organization and fileId (StepContext.file). */
  readonly files = new Map<string, FileMeta>();
  readonly ctx: StepContext;
  /** Ids drawn so far (countedId). */
  private ids = 0;
  private readonly frozen: boolean;

  constructor(options: MemoryStepOptions = {}) {
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.frozen = options.frozen ?? true;
    this.ctx = engineStepContext({
      state: this.state,
      newInstanceId: (now) => countedId(now, ++this.ids),
      newId: (now) => countedId(now, ++this.ids),
      tracing: options.tracing ?? null,
      isWorking: (key) => this.working.has(key),
      files: { get: (organization, fileId) => this.files.get(`${organization}|${fileId}`) },
      maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
      schemas: new DomainSchemas(DEFAULT_MAX_JSON_DEPTH),
      limits,
      startRate: new StartRate(limits.organizationStartsPerSecond),
      claimsKept: options.claimsKept ?? false,
      keepsThrown: options.keepsThrown ?? false,
    });
  }

  /** The clock as a Date. */
  get now(): Date {
    return new Date(this.ms);
  }

  /** Applies records straight to the state (setup a step does not make: a domain saved). */
  apply(...records: WfxRecord[]): void {
    for (const r of records) applyRecord(this.state, r);
  }

  /** Publishes a flow given as YAML (`processId: AUTO` gets a fresh id) with the daemon's publish code. */
  async publish(yaml: string, organization = 'default', environment: Environment = 'PRODUCTION'): Promise<string> {
    const v = validateFlowSource(yaml.replace('processId: AUTO', `processId: ${randomUUID()}`));
    if (!v.ok) throw new Error(`test flow does not validate: ${JSON.stringify(v.problems)}`);
    const r = await publishFlow(this.store(), {
      definition: v.flow,
      organization,
      environment,
      now: this.now,
    });
    return r.processId;
  }

  /** Saves the domain BILLING (test/helpers/jobs.ts) in `organization`. */
  registerBilling(organization = 'default'): void {
    const at = this.now.toISOString();
    this.apply({ type: 'domain.saved', domain: { ...BILLING, organization, createdAt: at, updatedAt: at } });
  }

  /** Runs one step with `input` at the clock's time. */
  run<I extends StepInput>(input: I): StepResult<StepAnswer<I>> {
    if (!this.frozen) {
      const result = runStep(this.state, this.ctx, this.now, input);
      result.commit();
      return result;
    }
    // The step decides on a deeply frozen copy, and its records are applied to the state once.
    const result = runStep(frozenCopy(this.state), this.ctx, this.now, input);
    for (const r of result.records) applyRecord(this.state, r);
    return result;
  }

  /** Starts an execution of flow `processId` with `data`, as the API does: one `start` step. */
  start(
    processId: string,
    data: Record<string, unknown> = {},
    correlationKey: string | null = null,
  ): StepResult<Execution> {
    return this.run({ kind: 'start', request: { organization: 'default', processId, data, correlationKey } });
  }

  /** Execution `id` as it is now (throws when it is not live). */
  instance(id: string): Execution {
    const inst = this.state.instances[id];
    if (!inst) throw new Error(`no live execution ${id}`);
    return inst;
  }

  /** The latest node instance of `nodeId` in execution `id`. */
  node(id: string, nodeId: string): NodeInstance {
    const found = Object.values(this.instance(id).nodes).filter((n) => n.nodeId === nodeId);
    const ni = found.at(-1);
    if (!ni) throw new Error(`no node ${nodeId} in ${id}`);
    return ni;
  }

  /** Marks the work of node `nodeId` of execution `id` as under way. */
  markWorking(id: string, nodeId: string): void {
    this.working.add(nodeKey(id, this.node(id, nodeId).id));
  }

  /** A store over the state in memory, for publishFlow: a commit is applied at once. */
  private store(): DurableStore<WfxState, WfxRecord> {
    return memoryStore(this.state);
  }
}

/** The types of `records`, in order: what most step tests compare. */
export const typesOf = (records: readonly WfxRecord[]): string[] => records.map((r) => r.type);

/** A running operation over `ids` (lane 0), as BulkOperations.create makes it. */
export function bulkOf(m: MemoryStep, ids: readonly string[], over: Partial<BulkOperation> = {}): BulkOperation {
  const bulk: BulkOperation = {
    bulkId: `0193a000-0000-7000-8000-${String(Object.keys(m.state.bulks).length).padStart(12, '0')}`,
    organization: 'default',
    operation: 'cancel',
    params: null,
    query: {},
    startedBefore: new Date(m.ms + 1).toISOString(),
    by: 'key:k1',
    createdAt: m.now.toISOString(),
    partitions: [0],
    state: 'RUNNING',
    finishedAt: null,
    cancelledBy: null,
    error: null,
    lanes: {},
    ...over,
  };
  m.run({ kind: 'bulk.create', bulk, lanes: new Map([[0, [...ids].sort().reverse()]]) });
  return bulk;
}
