/**
 * The Engine: the facade the API, the triggers and the daemon use. Each operation is one step
 * (step/: the engine's decisions, as a function of the state and an input) run by the one
 * runner (runner.ts) inside one store transaction; its answer, and what it calls for
 * (effects.ts), happen only once it is durable. Reads are in queries.ts, event delivery in
 * event-delivery.ts, the jobs API in jobs.ts, the restart in recovery.ts, work in work-runner.ts.
 */
import { FlowSecretValues } from '../secrets/flow-secret-values.js';
import { EventEmitter } from 'node:events';
import { WfxError } from '../../shared/errors.js';
import type { FileStore } from '../files/file-store.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../../shared/json-shape.js';
import { WorkCount } from '../../shared/work-count.js';
import { ExecutionTable } from '../state/execution-table.js';
import { Executions } from '../state/executions.js';
import type { WfxRecord } from '../state/records.js';
import type { Execution, WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import type { ExecutionQuery } from './execution-filter.js';
import { listExecutions, type ExecutionPage } from './execution-list.js';
import { groupFailures, type FailureQuery } from './failures.js';
import type { FailureGroups, TaskAction } from '../../shared/api/index.js';
import type { EngineEvents } from './engine-events.js';
import type { PublishRequest } from './event-delivery.js';
import { executionSources, failureSources, findInstance, listInstances, runningInstance } from './queries.js';
import type { OrganizationScope } from './scope.js';
import type { MovingExecutions } from './cluster-port.js';
import { recoverExecutions, recoverTaken, reindexLiveState } from './recovery.js';
import type { Recovering } from './recovery.js';
import { replayExecution, retryExecution, type RepairDeps, type RepairRequest } from './repair.js';
import type { HandOff } from './runner.js';
import type { EventOutcome, MoveResult, RefusedStart, StartRequest, StepAnswer, StepInput } from './step/index.js';
import { planMove } from './version-move.js';
import { SecretBox } from '../secrets/secret-box.js';
import { type JobOperations } from './jobs.js';
import { type BulkOperations } from './bulk/bulk-operations.js';
import { type DomainSchemas } from './domain-schemas.js';
import { DEFAULT_LIMITS, type ExecutionLimits } from './limits.js';
import type { EngineOptions } from './options.js';
import { executionCacheFor } from './executions-at-rest.js';
import { engineParts, type EngineParts } from './engine-parts.js';

export type { EngineEvents, JobsWaiting, LogsAdvanced, StreamedLog, WorkProgress } from './engine-events.js';
export type { LifecycleEvent } from './lifecycle.js';
export type { EventOutcome, StartRequest } from './step/index.js';
export type { EngineOptions } from './options.js';

/** Expired memory entries one sweep removes at most. */
const MEMORY_SWEEP_BATCH = 1000;

/**
 * The workflow engine: starts executions, resumes them with tasks, events and timers, cancels
 * them (see the top of this file). Emits, once a step is durable, the events of EngineEvents
 * (engine-events.ts): `logs`, `log`, `lifecycle`, `finished` and `archived`; and `progress`
 * while a model answers (not journaled).
 */
export class Engine extends EventEmitter<EngineEvents> implements MovingExecutions {
  readonly state: WfxState;
  /** The seam before the executions (state/executions.ts): reads by id, and trees made resident. */
  readonly executions: Executions;
  private readonly store: DurableStore<WfxState, WfxRecord>;
  private readonly now: () => Date;
  private readonly onError: (err: unknown, what: string) => void;
  /** How deep start data, work results and the variables a node sets may nest (EngineOptions.maxJsonDepth). */
  readonly maxJsonDepth: number;
  /** What one execution, tree and organization may hold (EngineOptions.limits over DEFAULT_LIMITS). */
  readonly limits: ExecutionLimits;
  private closed = false;
  /** Steps and archiving under way. */
  private readonly inflight = new WorkCount();
  /** The file store (EngineOptions.files). */
  readonly files: FileStore | undefined;
  /** The secrets keys (EngineOptions.secrets). */
  readonly secrets: SecretBox;
  /** Where the values of the secrets flows name are read (EngineOptions.secretsDir). */
  readonly secretValues: FlowSecretValues;
  /** Domain actions' schemas, compiled once. */
  readonly schemas: DomainSchemas;
  /** The jobs API's operations (domainTask jobs: activate, complete, fail, heartbeat, release). */
  readonly jobs: JobOperations;
  /** Bulk operations over the executions a query selects (POST /process/bulk). */
  readonly bulk: BulkOperations;
  /** The parts behind this facade (engine-parts.ts): work, effects, the runner, event delivery, the archive. */
  private readonly parts: EngineParts;

  constructor(options: EngineOptions) {
    super();
    this.setMaxListeners(0);
    this.store = options.store;
    this.state = options.store.state;
    this.executions = new Executions(this.state, options.cold ?? executionCacheFor(options));
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => undefined);
    this.maxJsonDepth = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.files = options.files;
    this.secrets = options.secrets ?? SecretBox.ephemeral();
    this.secretValues = new FlowSecretValues(this.state, this.secrets, options.secretsDir);
    this.parts = engineParts(
      {
        state: this.state,
        executions: this.executions,
        store: this.store,
        now: this.now,
        maxJsonDepth: this.maxJsonDepth,
        limits: this.limits,
        secrets: this.secrets,
        secretValues: this.secretValues,
        emitter: this,
        step: (input, now) => this.step(input, now),
        closed: () => this.closed,
        track: (work) => this.track(work),
        onError: (err, what) => this.onError(err, what),
      },
      options,
    );
    ({ schemas: this.schemas, jobs: this.jobs, bulk: this.bulk } = this.parts);
  }

  /** What continueRecovered needs: steps, and whether the store failed or the engine stops. */
  private readonly recovering: Recovering = {
    step: (input, now) => this.step(input, now),
    failed: () => this.store.failed !== null || this.closed,
    onError: (err, what) => this.onError(err, what),
  };

  /** Runs one step (runner.ts): resolves with its answer once durable and its effects carried out. */
  private step<I extends StepInput>(input: I, now?: Date): Promise<StepAnswer<I>> {
    return this.parts.runner.step(input, now);
  }

  // --- operations ------------------------------------------------------------------------

  /**
   * Starts an execution of the active (or the given) version and resolves once its first
   * step is durable. Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND, PROCESS_NOT_PUBLISHED,
   * VALIDATION_ERROR, PAYLOAD_TOO_LARGE, EXECUTION_LIMIT_EXCEEDED. With `handOff`, as submitTask.
   */
  async start(req: StartRequest, handOff?: HandOff): Promise<Execution> {
    return this.parts.runner.run({ kind: 'start', request: req }, handOff);
  }

  /**
   * Starts several executions and emits `finalize`'s records in the same transaction (one
   * journal entry): a trigger records what it started together with the starts, so a crash
   * leaves either all of it or none. Requests that cannot start (no such flow or version, data
   * too deep) are skipped; `finalize` receives the executions that started and why each skipped
   * one could not (its error, in the order of `reqs`), so that the trigger can record it.
   */
  async startBatch(
    reqs: readonly StartRequest[],
    finalize: (started: readonly Execution[], refused: readonly RefusedStart[]) => WfxRecord[],
  ): Promise<Execution[]> {
    return this.step({ kind: 'start.batch', requests: reqs, finalize });
  }

  /**
   * Submits input to a waiting input node or user task, or claims or unclaims it; `by`
   * (api/caller.ts, actorOf) is kept on the node as `answeredBy` or `claimedBy`. Throws
   * INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING, NODE_NOT_WAITING, TASK_CLAIMED, VALIDATION_ERROR
   * (422, the node keeps waiting). With `handOff`, resolves once the answer is taken and gives
   * it the step's durability to wait for (api/durable-reply.ts).
   */
  async submitTask(
    req: OrganizationScope & {
      processInstanceId: string;
      nodeId: string;
      action: TaskAction;
      data?: Record<string, unknown>;
      by?: string;
      /** Act on a task another person claimed (the caller may: the route checks it). */
      takeOver?: boolean;
    },
    handOff?: HandOff,
  ): Promise<void> {
    const id = (await runningInstance(this.executions, this.parts.archive, req, req.processInstanceId))
      .processInstanceId;
    const { nodeId, action, by } = req;
    const data = req.data ?? {};
    const input = {
      kind: 'answer',
      instanceId: id,
      nodeId,
      action,
      data,
      ...(by !== undefined && { by }),
      ...(req.takeOver === true && { takeOver: true }),
    } as const;
    await this.parts.runner.run(input, handOff);
  }

  /**
   * Delivers a message or signal (POST /process/event): resolves with what it resumed, or
   * `buffered` (nothing matched, kept for `ttlSeconds`); else NO_MATCHING_SUBSCRIPTION.
   * `elsewhere` delivers it to the executions other daemons hold (api/fan-out.ts) once its id is
   * known new (what they resumed counts as matched). One message id at a time: the second finds
   * the first's remembered (`duplicate`), however long `elsewhere` took.
   */
  publishEvent(req: PublishRequest): Promise<EventOutcome> {
    return this.parts.events.publish(req);
  }

  /** Cancels a running execution. Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING. */
  async cancel(req: OrganizationScope & { processInstanceId: string }): Promise<void> {
    const id = (await runningInstance(this.executions, this.parts.archive, req, req.processInstanceId))
      .processInstanceId;
    await this.step({ kind: 'cancel', instanceId: id, reason: 'cancelled by request' });
  }

  /**
   * Retries a failed execution where it failed (repair.ts). Throws INSTANCE_NOT_FOUND,
   * INSTANCE_NOT_FAILED, INSTANCE_IS_CHILD, VERSION_NOT_FOUND, VALIDATION_ERROR,
   * PAYLOAD_TOO_LARGE, EXECUTION_LIMIT_EXCEEDED.
   */
  retry(req: RepairRequest): Promise<void> {
    return retryExecution(this.repairDeps, req);
  }

  /**
   * Starts a new execution replaying `req.processInstanceId` from `req.nodeId` (repair.ts).
   * Throws INSTANCE_NOT_FOUND, INSTANCE_IS_CHILD, VERSION_NOT_FOUND, NODE_NOT_FOUND,
   * NODE_NOT_REACHED, REPLAY_VARIABLES_UNKNOWN, VALIDATION_ERROR, PAYLOAD_TOO_LARGE,
   * EXECUTION_LIMIT_EXCEEDED.
   */
  replay(req: RepairRequest & { nodeId: string }): Promise<Execution> {
    return replayExecution(this.repairDeps, req);
  }

  private get repairDeps(): RepairDeps {
    return { executions: this.executions, archive: this.parts.archive, step: (input, now) => this.step(input, now) };
  }

  /**
   * Moves a running execution (and the children running a body of its flow) to version
   * `toVersion` of its flow; with `dryRun` only checks that it can (nothing written). Throws
   * INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING, INSTANCE_MOVES_WITH_PARENT, VERSION_NOT_FOUND,
   * INSTANCE_NOT_MOVABLE (`details.problems`); see version-move.ts.
   */
  async move(
    req: OrganizationScope & { processInstanceId: string; toVersion: string; by: string; dryRun?: boolean },
  ): Promise<MoveResult> {
    const id = (await runningInstance(this.executions, this.parts.archive, req, req.processInstanceId))
      .processInstanceId;
    if (!req.dryRun) return this.step({ kind: 'move', instanceId: id, toVersion: req.toVersion, by: req.by });
    const plan = planMove(this.state, id, req.toVersion);
    return {
      processInstanceId: id,
      fromVersion: plan.fromVersion,
      toVersion: plan.toVersion,
      moved: false,
      children: plan.executions.slice(1).map((i) => i.processInstanceId),
    };
  }

  /** A live or archived execution the caller may see, or null. */
  getInstance(caller: OrganizationScope, id: string): Promise<Execution | null> {
    return findInstance(this.executions, this.parts.archive, caller, id);
  }

  /**
   * Executions of a flow, newest first (ids are time-ordered): live ones and those in history.
   * `cursor` is the last id of the previous page. Throws PROCESS_NOT_FOUND for a flow the
   * caller may not see.
   */
  listInstances(
    caller: OrganizationScope,
    processId: string,
    opts: { stateCd?: number; limit: number; cursor?: string; children?: boolean },
  ): Promise<ExecutionPage> {
    return listInstances(this.executions, this.state, this.parts.archive, caller, processId, opts);
  }

  /**
   * Every execution `query` asks for (its `organization`: whose, null for every one's), newest
   * first, a page after `query.cursor` (see listExecutions).
   */
  listExecutions(query: ExecutionQuery): Promise<ExecutionPage> {
    return listExecutions(executionSources(this.executions, this.state, this.parts.archive), query);
  }

  /** The failed executions `query` selects, live and archived, grouped by flow, code and node (see groupFailures). */
  failures(query: FailureQuery): Promise<FailureGroups> {
    return groupFailures(failureSources(this.executions, this.state, this.parts.archive), query);
  }

  /**
   * After a restart: arms the timers of waiting nodes (overdue ones fire at once), runs nodes
   * that were active, archives finished executions not archived yet, drops what expired.
   */
  async recover(): Promise<void> {
    await recoverExecutions(this.state, this.parts.effects, this.executions, this.limits, this.recovering);
    await this.sweepExpired();
    this.parts.cluster?.loaded();
    // Kept by daemons that shared this database (this one shares it with none), or for cold executions here.
    if (!this.parts.cluster?.keepsThrown)
      await this.parts.events.deliverAllKept().then(() => this.step({ kind: 'thrown.forget' }));
    this.bulk.resume();
  }

  /**
   * Executions its store has just put into the state or its cache's directory (a partition
   * taken while running: PgStore.take), in the turn it did: resumed as after a restart (timers
   * armed, active nodes run again, finished ones archived), the indexes made again for every
   * execution (the load reset them). Resolves once the active ones ran.
   */
  async adopt(ids: readonly string[]): Promise<void> {
    try {
      await recoverTaken(this.state, this.parts.effects, this.executions, ids, this.limits, this.recovering);
    } finally {
      // Even when one taken could not be read back: the rest is this daemon's all the same.
      // A claim or a thrown event its last holder had not used: its nodes may now.
      this.parts.cluster?.loaded();
      // The lanes of bulk operations in those partitions are this daemon's now.
      this.bulk.resume();
    }
  }

  /**
   * Hands executions over to another daemon (their partition given up: PgStore.drop, which
   * `removal` calls with these hooks). Those `leaving` are forgotten just before they leave the
   * state (timers disarmed, work under way aborted: their next holder runs it again), the
   * indexes made again without them just after; the archive's writes in flight and the events
   * under message ids `leaving` names are `settled` before the lease goes.
   */
  async handOver(
    leaving: (instanceId: string) => boolean,
    removal: (hooks: { leaving: () => void; left: () => void; settled: () => Promise<void> }) => Promise<void>,
  ): Promise<void> {
    await removal({
      leaving: () => {
        for (const id of ExecutionTable.of(this.state).ids()) {
          const inst = this.executions.get(id);
          if (inst !== undefined && leaving(id)) this.parts.effects.forget(inst);
        }
      },
      left: () => {
        reindexLiveState(this.state, leaving, this.executions.coldLive() ?? undefined);
        this.parts.effects.armColdDue();
        this.emit('handedOver', leaving);
      },
      // Events under message ids of theirs remember the id before the next holder reads it.
      settled: async () => {
        await Promise.all([this.parts.archive.idle(), Promise.allSettled(this.parts.events.underWay(leaving))]);
      },
    });
  }

  /**
   * Removes kept messages, dedup entries and memory entries whose time is up (an expired
   * memory entry already reads as missing; this frees it). At most MEMORY_SWEEP_BATCH memory
   * entries per sweep, so one sweep stays a small journal entry; the rest go in later ones.
   */
  async sweepExpired(): Promise<void> {
    await this.step({ kind: 'sweep', memoryBatch: MEMORY_SWEEP_BATCH });
  }

  /**
   * Stops timers and new operations, and resolves once the steps and archiving already under
   * way have finished (graceful stop: the store is closed after this).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.bulk.close();
    this.executions.close();
    this.parts.effects.close();
    this.parts.cluster?.close();
    // Work under way is abandoned: its nodes are still Active, so a restart runs them again.
    this.parts.work.abortAll(new WfxError('SERVICE_UNAVAILABLE', 'the engine is stopping'));
    await this.inflight.idle();
    await this.parts.work.close();
  }

  /** Tracks `work` until it settles, so close() can wait for it. */
  private track<T>(work: Promise<T>): Promise<T> {
    return this.inflight.track(work);
  }

  /**
   * How many log lines of execution `inst` are durable and streamed: a log stream replays up
   * to here, then follows `log` events.
   */
  streamedLogCount(inst: Execution): number {
    return this.parts.effects.streamedLogCount(inst);
  }

  /** Re-reads the clock for due timers (after a clock jump; tests moving their clock). */
  pokeTimers(): void {
    this.parts.effects.pokeTimers();
  }

  /** Number of armed timers (for status and tests). */
  get timerCount(): number {
    return this.parts.effects.timerCount;
  }
}
