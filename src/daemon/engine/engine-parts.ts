/**
 * How an Engine is put together (engine.ts): the parts behind its facade, each given what it
 * needs of the others and of the engine's own hooks (its steps, its clock, its close). Built
 * once, in the order they depend on each other; nothing here runs a step.
 */
import { createVoiceRunner } from '../voice/voice-runner.js';
import type { Executions } from '../state/executions.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import type { FlowSecretValues } from '../secrets/flow-secret-values.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { ExecutionArchive } from './archive.js';
import { BulkOperations } from './bulk/bulk-operations.js';
import type { EngineCluster } from './cluster-port.js';
import { DomainSchemas } from './domain-schemas.js';
import { Effects } from './effects.js';
import type { EngineEmitter } from './engine-events.js';
import { EventDelivery } from './event-delivery.js';
import { JobOperations } from './jobs.js';
import type { ExecutionLimits } from './limits.js';
import type { EngineOptions } from './options.js';
import { executionSources } from './queries.js';
import { StepRunner } from './runner.js';
import { StartRate } from './start-rate.js';
import { engineStepContext } from './step-context.js';
import type { RunStep, StepContext } from './step/index.js';
import { CHECK_TOUCHED_BY_ENV } from './touch-check.js';
import { callHttp } from './work/http.js';
import { WorkRunner } from './work-runner.js';
import { uuidv7 } from '../state/ids.js';

/** What the parts are built around: the engine's state and settings, and its own hooks. */
export interface EngineHost {
  readonly state: WfxState;
  readonly executions: Executions;
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly now: () => Date;
  readonly maxJsonDepth: number;
  readonly limits: ExecutionLimits;
  readonly secrets: SecretBox;
  /** Where `{secret.NAME}` values are read (the engine's). */
  readonly secretValues: FlowSecretValues;
  /** Where events are published (the Engine). */
  readonly emitter: EngineEmitter;
  /** Runs a step through the engine (resolved once durable). */
  readonly step: RunStep;
  /** True once the engine stops. */
  readonly closed: () => boolean;
  /** Tracks work until it settles, so the engine's close waits for it. */
  readonly track: <T>(work: Promise<T>) => Promise<T>;
  readonly onError: (err: unknown, what: string) => void;
}

/** The parts behind the Engine's facade. */
export interface EngineParts {
  readonly schemas: DomainSchemas;
  readonly jobs: JobOperations;
  readonly work: WorkRunner;
  readonly cluster: EngineCluster | null;
  readonly ctx: StepContext;
  readonly archive: ExecutionArchive;
  readonly effects: Effects;
  readonly events: EventDelivery;
  readonly bulk: BulkOperations;
  readonly runner: StepRunner;
}

/** Builds the parts of an engine (see the top of this file). */
export function engineParts(host: EngineHost, options: EngineOptions): EngineParts {
  const { step, closed } = host;
  const schemas = new DomainSchemas(host.maxJsonDepth);
  const jobs = new JobOperations({
    state: host.state,
    executions: host.executions,
    step,
    now: host.now,
    secretValues: host.secretValues,
  });
  const work = new WorkRunner({
    state: host.state,
    secrets: host.secrets,
    http: options.http ?? callHttp,
    network: options.network,
    secretValues: host.secretValues,
    scripts: options.scripts,
    ai: options.ai,
    voice:
      options.voice ??
      (options.files &&
        createVoiceRunner({
          files: options.files,
          tmpDir: options.files.tmpDir,
          ...(options.network && { network: options.network }),
        })),
    onProgress: (order, delta) => {
      if (host.emitter.listenerCount('progress') === 0) return;
      const { instanceId: processInstanceId, nodeInstanceId } = order;
      const nodeId = host.executions.get(processInstanceId)?.nodes[nodeInstanceId]?.nodeId;
      if (nodeId !== undefined) host.emitter.emit('progress', { processInstanceId, nodeId, nodeInstanceId, delta });
    },
    maxJsonDepth: host.maxJsonDepth,
    onError: (err, what) => host.onError(err, what),
    closed,
    step,
  });
  const cluster =
    options.cluster?.({
      state: host.state,
      now: host.now,
      consumeKept: (messageId, sub) => host.step({ kind: 'kept.consume', messageId, sub }),
      deliverHere: (event) => host.step({ kind: 'thrown.deliver', event }),
      passedThrown: (id) => host.step({ kind: 'thrown.passed', id }),
      track: (work) => void host.track(work),
      onError: (err, what) => host.onError(err, what),
    }) ?? null;
  const ctx = engineStepContext({
    state: host.state,
    newInstanceId: options.store.newExecutionId ?? uuidv7,
    isWorking: (key) => work.isWorking(key),
    files: options.files,
    maxJsonDepth: host.maxJsonDepth,
    schemas,
    limits: host.limits,
    startRate: new StartRate(host.limits.organizationStartsPerSecond),
    claimsKept: cluster?.claimsKept ?? false,
    keepsThrown: cluster?.keepsThrown ?? false,
  });
  const archive = new ExecutionArchive({
    state: host.state,
    store: host.store,
    history: options.history,
    track: (work) => host.track(work),
    onError: (err, what) => host.onError(err, what),
    onArchived: (id) => effects.archived(id),
    closed,
  });
  const effects: Effects = new Effects({
    state: host.state,
    flows: ctx,
    emitter: host.emitter,
    work,
    archive,
    now: host.now,
    onError: (err, what) => host.onError(err, what),
    closed,
    step,
    executions: host.executions,
    begin: (input) => runner.begin(input),
    observe: options.observe,
    timersAfter: options.timersAfter,
    ...(cluster && { claim: (id: string) => cluster.offerKept(id), pass: (id: string) => cluster.thrownHere(id) }),
    deliver: (id) =>
      void host.track(events.deliverKept(id)).catch((err: unknown) => host.onError(err, `delivering event ${id}`)),
  });
  const events = new EventDelivery({
    state: host.state,
    store: host.store,
    step,
    now: host.now,
    holdsMessageId: cluster && ((key) => cluster.holdsMessageId(key)),
  });
  const bulk = new BulkOperations({
    state: host.state,
    step,
    now: host.now,
    sources: executionSources(host.executions, host.state, archive),
    limits: host.limits,
    partitions: options.store.partitioning,
    rate: options.bulkRate,
    onError: (err, what) => host.onError(err, what),
    closed,
    track: (work) => host.track(work),
    hold: (ids) => archive.hold(ids),
  });
  const runner = new StepRunner({
    state: host.state,
    executions: host.executions,
    checkTouched: options.checkTouched ?? CHECK_TOUCHED_BY_ENV,
    store: host.store,
    ctx,
    now: host.now,
    archive,
    effects,
    closed,
    track: (work) => host.track(work),
    observe: options.observe,
  });
  return { schemas, jobs, work, cluster, ctx, archive, effects, events, bulk, runner };
}
