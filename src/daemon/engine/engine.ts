/**
 * Long file: the Engine's operations (start, answer, event, cancel, timers) and their wiring;
 * each operation is short, and reads, effects, work and recovery live beside it (queries.ts,
 * effects.ts, work-runner.ts, recovery.ts).
 */
import { EventEmitter } from 'node:events';
import { WfxError } from '../../shared/errors.js';
import type { AiRunner } from '../ai/types.js';
import type { FileStore } from '../files/file-store.js';
import type { VoiceRunner } from '../voice/types.js';
import { createVoiceRunner } from '../voice/voice-runner.js';
import { FlowGraph } from '../../shared/flow/graph.js';
import { checkInputs } from '../../shared/flow/inputs.js';
import { nodesAt, type FlowDefinition, type FlowNode } from '../../shared/flow/types.js';
import { validateTaskData } from '../../shared/input-data.js';
import { fileIdOf } from '../../shared/file-ref.js';
import { cloneData, extensibleCopy, ownEntry } from '../../shared/json-object.js';
import {
  DEFAULT_MAX_JSON_DEPTH,
  describeDepthExcess,
  formatJsonPath,
  jsonDepthExcess,
} from '../../shared/json-shape.js';
import { WorkCount } from '../../shared/work-count.js';
import { expiredMemoryEntries } from '../state/memory.js';
import { InstanceTable } from '../state/instance-table.js';
import type { WfxRecord } from '../state/records.js';
import { STATUS, type Environment, type Instance, type WfxState } from '../state/state.js';
import { subscriptionsFor } from '../state/subscriptions.js';
import type { HistoryStore } from '../store/history-store.js';
import type { DurableStore } from '../store/store.js';
import { ExecutionArchive, type InstanceSummary } from './archive.js';
import { Effects } from './effects.js';
import type { EngineEvents } from './engine-events.js';
import { uuidv7 } from './ids.js';
import type { NodeKey } from './keys.js';
import { findInstance, listInstances, runningInstance, runningNow } from './queries.js';
import type { EngineCluster, EngineClusterPort, MovingExecutions } from '../cluster/ports.js';
import { recoverLiveState, reindexSubscriptions } from './recovery.js';
import { Transition, type EngineCore, type LaunchParams } from './transition.js';
import { callHttp, type HttpCall, type HttpCallOptions } from './work/http.js';
import type { NetworkPolicy } from './work/network-policy.js';
import type { WorkResult } from './work/result.js';
import type { ScriptRunner } from './work/script.js';
import { WorkRunner } from './work-runner.js';
import { SecretBox } from '../secrets/secret-box.js';
import { JobOperations } from './jobs.js';
import { DomainSchemas } from '../jobs/schemas.js';
import { DEFAULT_LIMITS, overLimits, type ExecutionLimits } from './limits.js';
import { LiveCounts } from '../state/live-counts.js';
import { formatBytes } from '../../shared/bytes.js';
import { jsonSize } from '../../shared/json-size.js';

export type { EngineEvents, JobsWaiting, LogsAdvanced, StreamedLog, WorkProgress } from './engine-events.js';
export type { LifecycleEvent } from './lifecycle.js';
import type { OrganizationScope as Caller } from './scope.js';

/** A start of an execution (Engine.start): the flow, and optionally its version, environment, key and data. */
export interface StartRequest extends Caller {
  readonly processId: string;
  readonly environment?: Environment;
  readonly versionNumber?: string;
  readonly correlationKey?: string | null;
  readonly data?: Record<string, unknown>;
  readonly parentInstanceId?: string | null;
}

/** What an Engine is made of: its store and history, and what tests may replace. */
export interface EngineOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly history: HistoryStore;
  /** The clock (tests pass their own). */
  readonly now?: () => Date;
  readonly onError?: (err: unknown, what: string) => void;
  /** How serviceTask calls are made (tests may count or slow them). Default: work/http.ts. */
  readonly http?: (call: HttpCall, options: HttpCallOptions) => Promise<WorkResult>;
  /** Where serviceTask calls may connect (passed to `http`). Default: the built-in rules (work/network-policy.ts). */
  readonly network?: NetworkPolicy;
  /** The scriptTask sandbox. Default: a pool of QuickJS workers, started on first use, closed with the engine. */
  readonly scripts?: ScriptRunner;
  /** How deep start data, work results and the variables a node sets may nest (default DEFAULT_MAX_JSON_DEPTH; see json-shape.ts). */
  readonly maxJsonDepth?: number;
  /**
   * How aiTask calls are made (the daemon's one runner; it owns and closes it). Absent: an
   * aiTask fails with AI_PROVIDER_NOT_FOUND.
   */
  readonly ai?: AiRunner;
  /**
   * The file store: a file input's reference is checked against it, a voiceTask writes its
   * audio there. Absent: file references are refused and a voiceTask fails.
   */
  readonly files?: FileStore;
  /** How voiceTasks are carried out. Default: the local engines and providers, over `files`. */
  readonly voice?: VoiceRunner;
  /**
   * On a daemon sharing a database with others: the engine's part in it, built by the cluster
   * room (cluster/ports.ts): kept messages consumed under claims won in the database, events
   * thrown kept until the other daemons have them, events refused (PARTITION_MOVING) under
   * message ids whose partition it no longer holds. Absent: a daemon alone (kept messages
   * consumed at once, an event thrown wakes what waits here only, every message id its own).
   */
  readonly cluster?: EngineClusterPort;
  /** What one execution, tree and organization may hold (limits.ts); each left out takes its default. */
  readonly limits?: Partial<ExecutionLimits>;
  /**
   * The daemon's secrets keys: model providers' API keys are opened with them for each call, and
   * the routes and triggers built on this engine seal and open theirs with them. Default: a key
   * in memory only (SecretBox.ephemeral), for engines a test builds.
   */
  readonly secrets?: SecretBox;
}

type FlowScope = {
  definition: FlowDefinition;
  nodes: Readonly<Record<string, FlowNode>>;
  graph: FlowGraph;
  startId: string;
};

/** Expired memory entries one sweep removes at most. */
const MEMORY_SWEEP_BATCH = 1000;

/** The `{env.*}` of an organization and environment that has none set. */
const NO_ENV: Readonly<Record<string, string>> = Object.freeze({});

/** What POST /process/event did: the waits it resumed, or that it kept the event, or a repeat. */
export interface EventOutcome {
  readonly status: 'resumed' | 'buffered' | 'duplicate';
  readonly matched: Array<{ processInstanceId: string; nodeId: string }>;
}

/**
 * The workflow engine: starts executions, resumes them with tasks, events and timers, cancels
 * them. Every operation is one synchronous Transition inside one store transaction (so
 * concurrent operations never interleave inside an execution); its answer, and the effects its
 * records call for (effects.ts: log lines, lifecycle events, timers, work, archiving), happen
 * only once the transaction is durable. The read side is in queries.ts, the restart in
 * recovery.ts, work nodes' calls in work-runner.ts.
 *
 * Emits, once a step is durable, the events of EngineEvents (engine-events.ts): `logs`, `log`,
 * `lifecycle`, `finished` and `archived`; and `progress` while a model answers (not journaled).
 */
export class Engine extends EventEmitter<EngineEvents> implements EngineCore, MovingExecutions {
  readonly state: WfxState;
  private readonly store: DurableStore<WfxState, WfxRecord>;
  private readonly now: () => Date;
  /** Parsed flow versions: processId -> version (and body scope, `version/loop/inner`) -> nodes, graph and start node. */
  private readonly graphs = new Map<string, Map<string, FlowScope>>();
  /** Events being delivered, by message id (organization|messageId): one at a time each. */
  private readonly publishing = new Map<string, Promise<unknown>>();
  private readonly onError: (err: unknown, what: string) => void;
  /** How deep start data, work results and the variables a node sets may nest (EngineOptions.maxJsonDepth). */
  readonly maxJsonDepth: number;
  /** What one execution, tree and organization may hold (EngineOptions.limits over DEFAULT_LIMITS). */
  readonly limits: ExecutionLimits;
  private closed = false;
  /** Steps and archiving under way. */
  private readonly inflight = new WorkCount();
  /** Finished executions: to history, from history. */
  private readonly archive: ExecutionArchive;
  /** Work nodes' calls under way. */
  private readonly work: WorkRunner;
  /** What durable steps call for: events, timers, work, archiving. */
  private readonly effects: Effects;
  /** The file store (EngineOptions.files). */
  readonly files: FileStore | undefined;
  /** The secrets keys (EngineOptions.secrets). */
  readonly secrets: SecretBox;
  /** Domain actions' schemas, compiled once. */
  readonly schemas: DomainSchemas;
  /** The jobs API's operations (domainTask jobs: activate, complete, fail, heartbeat, release). */
  readonly jobs: JobOperations;
  /** The engine's part in a daemon sharing its database (EngineOptions.cluster); null: a daemon alone. */
  private readonly cluster: EngineCluster | null;
  /** Kept messages are consumed under claims (EngineCluster.claimsKept). */
  readonly claimsKept: boolean;
  /** Events thrown are kept until the other daemons have them (EngineCluster.keepsThrown). */
  readonly keepsThrown: boolean;

  private readonly newId: (now: Date, parentInstanceId: string | null) => string;

  constructor(options: EngineOptions) {
    super();
    this.setMaxListeners(0);
    this.newId = options.store.newExecutionId ?? uuidv7;
    this.store = options.store;
    this.state = options.store.state;
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => undefined);
    this.maxJsonDepth = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.files = options.files;
    this.secrets = options.secrets ?? SecretBox.ephemeral();
    const step = <T>(fn: (t: Transition, emit: (r: WfxRecord) => void) => T): Promise<T> => this.step(fn);
    const closed = (): boolean => this.closed;
    this.schemas = new DomainSchemas(this.maxJsonDepth);
    this.jobs = new JobOperations({ state: this.state, step, now: this.now, schemas: this.schemas });
    this.work = new WorkRunner({
      state: this.state,
      secrets: this.secrets,
      http: options.http ?? callHttp,
      network: options.network,
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
        if (this.listenerCount('progress') === 0) return;
        const nodeId = this.state.instances[order.instanceId]?.nodes[order.nodeInstanceId]?.nodeId;
        if (nodeId === undefined) return;
        this.emit('progress', {
          processInstanceId: order.instanceId,
          nodeId,
          nodeInstanceId: order.nodeInstanceId,
          delta,
        });
      },
      maxJsonDepth: this.maxJsonDepth,
      now: this.now,
      onError: (err, what) => this.onError(err, what),
      closed,
      step,
    });
    this.archive = new ExecutionArchive({
      state: this.state,
      store: this.store,
      history: options.history,
      track: (work) => this.track(work),
      onError: (err, what) => this.onError(err, what),
      onArchived: (id) => this.effects.archived(id),
      closed,
    });
    this.effects = new Effects({
      core: this,
      emitter: this,
      work: this.work,
      archive: this.archive,
      now: this.now,
      onError: (err, what) => this.onError(err, what),
      closed,
      step,
    });
    this.cluster =
      options.cluster?.({
        state: this.state,
        now: this.now,
        consumeKept: (id, sub) => step((t) => t.consumeKept(id, sub)),
        deliverHere: (e) =>
          this.step((t) =>
            t.deliver(subscriptionsFor(this.state, e.organization, e.eventType, e.correlationKey), e.data),
          ),
        commit: (...records) => this.store.commit(...records),
        track: (work) => void this.track(work),
        onError: (err, what) => this.onError(err, what),
      }) ?? null;
    this.claimsKept = this.cluster?.claimsKept ?? false;
    this.keepsThrown = this.cluster?.keepsThrown ?? false;
  }

  // --- EngineCore ------------------------------------------------------------------------

  flowOf(inst: Instance): FlowScope {
    let versions = this.graphs.get(inst.processId);
    if (!versions) this.graphs.set(inst.processId, (versions = new Map()));
    const key = inst.scope ? `${inst.processVersion}/${inst.scope.join('/')}` : inst.processVersion;
    let g = versions.get(key);
    if (!g) {
      const definition = this.state.flows[inst.processId]!.versions[inst.processVersion]!.definition;
      const nodes = nodesAt(definition, inst.scope)!;
      const startId = Object.keys(nodes).find((n) => nodes[n]!.type === 'startEvent')!;
      g = { definition, nodes, graph: new FlowGraph(nodes), startId };
      versions.set(key, g);
    }
    return g;
  }

  isWorking(key: NodeKey): boolean {
    return this.work.isWorking(key);
  }

  envOf(inst: Instance): Readonly<Record<string, string>> {
    return this.state.environments[inst.organization]?.[inst.environment] ?? NO_ENV;
  }

  newInstanceId(now: Date, parentInstanceId: string | null): string {
    return this.newId(now, parentInstanceId);
  }

  // --- operations ------------------------------------------------------------------------

  /**
   * Starts an execution of the active (or the given) version and resolves once its first
   * step is durable. Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND, PROCESS_NOT_PUBLISHED.
   */
  async start(req: StartRequest): Promise<Instance> {
    const params = this.startParams(req);
    this.admit(params.organization, 1);
    return this.step((t) => t.start(params));
  }

  /**
   * Throws EXECUTION_LIMIT_EXCEEDED when `n` more executions would make `organization` run
   * more than the live-executions limit. Checked in the turn the step starts (a step runs
   * synchronously once started), so starts racing each other cannot pass the limit together.
   */
  private admit(organization: string, n: number): void {
    const limit = this.limits.organizationExecutions;
    if (LiveCounts.of(this.state).organization(organization) + n <= limit) return;
    throw new WfxError(
      'EXECUTION_LIMIT_EXCEEDED',
      `organization ${organization} runs ${limit} executions already (the daemon's live-executions limit)`,
      { details: { organization, limit } },
    );
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
    finalize: (
      started: readonly Instance[],
      refused: ReadonlyArray<{ readonly req: StartRequest; readonly error: WfxError }>,
    ) => WfxRecord[],
  ): Promise<Instance[]> {
    const refused: Array<{ req: StartRequest; error: WfxError }> = [];
    const admitted = new Map<string, number>();
    const params = reqs.flatMap((req) => {
      try {
        const p = this.startParams(req);
        const n = (admitted.get(p.organization) ?? 0) + 1;
        this.admit(p.organization, n);
        admitted.set(p.organization, n);
        return [p];
      } catch (err) {
        refused.push({
          req,
          error:
            err instanceof WfxError
              ? err
              : new WfxError('INTERNAL_ERROR', err instanceof Error ? err.message : String(err), { cause: err }),
        });
        return [];
      }
    });
    return this.step((t, emit) => {
      const started = params.map((p) => t.start(p));
      for (const record of finalize(started, refused)) emit(record);
      return started;
    });
  }

  /**
   * What a start runs: the flow version resolved, its start data checked against the flow's
   * `inputs:` (defaults filled in). Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND,
   * PROCESS_NOT_PUBLISHED, VALIDATION_ERROR (data nested deeper than maxJsonDepth, or not
   * matching the inputs; `details.path` names the field).
   */
  startParams(req: StartRequest): LaunchParams {
    const flow = ownEntry(this.state.flows, req.processId);
    if (!flow || (req.organization !== null && flow.organization !== req.organization)) {
      throw new WfxError('PROCESS_NOT_FOUND', `no flow ${req.processId}`);
    }
    const environment = req.environment ?? 'PRODUCTION';
    const version = req.versionNumber ?? flow.active[environment];
    if (version === undefined) {
      // Say where it does run: the usual slip is a flow published to DEVELOPMENT only.
      const other = environment === 'PRODUCTION' ? 'DEVELOPMENT' : 'PRODUCTION';
      const there = flow.active[other];
      throw new WfxError(
        'PROCESS_NOT_PUBLISHED',
        `flow ${flow.name} (${req.processId}) has no active version in ${environment}` +
          (there === undefined
            ? ''
            : `; version ${there} is active in ${other}: start it there (environment ${other}, wfx run --env ${other})`),
        { details: { processId: req.processId, environment, active: flow.active } },
      );
    }
    const published = flow.versions[version];
    if (!published) throw new WfxError('VERSION_NOT_FOUND', `flow ${req.processId} has no version ${version}`);
    // Before the copy (it recurses): triggers and callProcess start here without a request body.
    const excess = req.data === undefined ? null : jsonDepthExcess(req.data, this.maxJsonDepth);
    if (excess !== null) {
      throw new WfxError('VALIDATION_ERROR', `the start data is ${describeDepthExcess(excess, 'data')}`, {
        details: { path: formatJsonPath(excess.path, 'data'), maxDepth: excess.maxDepth },
      });
    }
    // Before the copy too: a trigger's payload can be as large as its body limit allows.
    const size = req.data === undefined ? 2 : jsonSize(req.data, this.limits.variablesBytes);
    if (size > this.limits.variablesBytes) {
      throw new WfxError(
        'PAYLOAD_TOO_LARGE',
        `the start data is over ${formatBytes(this.limits.variablesBytes)} of JSON (the daemon's variables-size limit)`,
        { details: { limit: this.limits.variablesBytes } },
      );
    }
    const variables = cloneData(req.data ?? {});
    // On the copy: declared defaults are filled in.
    const violation = checkInputs(published.definition, variables);
    if (violation) {
      throw new WfxError(
        'VALIDATION_ERROR',
        `${violation.path} ${violation.message} (the inputs of flow ${published.definition.name}, version ${version})`,
        { details: { path: violation.path, processId: flow.processId, version } },
      );
    }
    return {
      processId: flow.processId,
      processName: published.definition.name,
      processVersion: version,
      organization: flow.organization,
      environment,
      correlationKey: req.correlationKey ?? null,
      parentInstanceId: req.parentInstanceId ?? null,
      variables,
    };
  }

  /**
   * Submits input to a waiting input node or user task. Throws INSTANCE_NOT_FOUND,
   * INSTANCE_NOT_RUNNING, NODE_NOT_WAITING, VALIDATION_ERROR (422, the node keeps waiting).
   */
  async submitTask(
    req: Caller & {
      processInstanceId: string;
      nodeId: string;
      action: 'COMPLETE' | 'CANCEL';
      data?: Record<string, unknown>;
    },
  ): Promise<void> {
    const id = (await runningInstance(this.state, this.archive, req, req.processInstanceId)).processInstanceId;
    const data = req.data ?? {};
    await this.step((t) => {
      // Checked in the step, on the execution as it is now: another call may have resumed or
      // ended it since runningInstance() (and a resume replaces its object: youngCopy).
      const inst = runningNow(this.state, id);
      const ni = Object.values(inst.nodes).find(
        (n) => n.nodeId === req.nodeId && n.statusCd === STATUS.WAITING && n.wait?.kind === 'input',
      );
      if (!ni || ni.wait?.kind !== 'input')
        throw new WfxError('NODE_NOT_WAITING', `node ${req.nodeId} of ${id} is not waiting for input`);
      if (req.action === 'COMPLETE') validateTaskData(ni.wait, data);
      const answer =
        req.action === 'COMPLETE' && ni.wait.inputType === 'file' ? this.withFile(inst.organization, data) : data;
      t.resume(inst, ni, { kind: 'task', action: req.action, data: answer });
    });
  }

  /**
   * A file input's answer with its reference replaced by the file's metadata (`{fileId, name,
   * mimeType, bytes, sha256}`), so the flow reads what it got. Throws 422 VALIDATION_ERROR for
   * a file that is not in the execution's organization.
   */
  private withFile(organization: string, data: Record<string, unknown>): Record<string, unknown> {
    const fileId = fileIdOf(data.inputValue);
    const file = fileId === null ? undefined : this.files?.get(organization, fileId);
    if (!file)
      throw new WfxError('VALIDATION_ERROR', `inputValue: no file ${String(fileId)} in this organization`, {
        status: 422,
        details: { field: 'inputValue' },
      });
    const { fileId: id, name, mimeType, bytes, sha256 } = file;
    return extensibleCopy(data, { inputValue: { fileId: id, name, mimeType, bytes, sha256 } });
  }

  /**
   * Delivers a message or signal (POST /process/event). Resolves with what it resumed, or
   * `buffered` when nothing matched and it is kept for `ttlSeconds`. Throws
   * NO_MATCHING_SUBSCRIPTION when nothing matched and there is no ttl. `elsewhere` delivers it
   * to the executions other daemons hold (cluster/ports.ts's OtherDaemons), once its message
   * id is known new: what they resumed counts as matched, so it is kept only when nothing
   * matched anywhere.
   * Events with one message id are delivered one at a time: the second finds the first's
   * id remembered (`duplicate`), however long `elsewhere` took.
   */
  async publishEvent(req: {
    organization: string;
    eventType: string;
    correlationKey: string | null;
    data?: Record<string, unknown>;
    ttlSeconds?: number;
    messageId?: string | null;
    elsewhere?: () => Promise<EventOutcome['matched']>;
  }): Promise<EventOutcome> {
    const dedupKey = req.messageId ? `${req.organization}|${req.messageId}` : null;
    if (dedupKey === null) return this.deliverEvent(req, null);
    // One event per message id at a time: a second waits for the first, then finds it seen.
    for (let earlier = this.publishing.get(dedupKey); earlier; earlier = this.publishing.get(dedupKey))
      await earlier.catch(() => undefined);
    const delivering = this.deliverEvent(req, dedupKey);
    this.publishing.set(dedupKey, delivering);
    try {
      return await delivering;
    } finally {
      if (this.publishing.get(dedupKey) === delivering) this.publishing.delete(dedupKey);
    }
  }

  /** publishEvent, with `dedupKey` (organization|messageId) not being delivered by another call. */
  private async deliverEvent(
    req: Parameters<Engine['publishEvent']>[0],
    dedupKey: string | null,
  ): Promise<EventOutcome> {
    // Checked in the turn the delivery is registered: handOver waits for those it lets through.
    if (dedupKey !== null && this.cluster?.holdsMessageId(dedupKey) === false)
      throw new WfxError('PARTITION_MOVING', 'the partition of this message id is moving to another daemon', {
        details: { retryAfter: 1 },
      });
    const now = this.now();
    const seenUntil = dedupKey ? this.state.messageIds[dedupKey] : undefined;
    if (seenUntil !== undefined && seenUntil > now.toISOString()) {
      await this.store.flush(); // the first one may still be on its way to disk
      return { status: 'duplicate', matched: [] };
    }
    const elsewhere = req.elsewhere ? await req.elsewhere() : [];
    const subs = subscriptionsFor(this.state, req.organization, req.eventType, req.correlationKey);
    const ttl = req.ttlSeconds ?? 0;
    if (subs.length === 0 && elsewhere.length === 0 && ttl <= 0) {
      throw new WfxError(
        'NO_MATCHING_SUBSCRIPTION',
        `no execution waits for ${req.eventType} with correlation key ${req.correlationKey ?? '(none)'}`,
      );
    }
    const data = req.data ?? {};
    const matched = [...subs.map((s) => ({ processInstanceId: s.instanceId, nodeId: s.nodeId })), ...elsewhere];
    const seen = dedupKey !== null && ttl > 0;
    if (subs.length === 0 && elsewhere.length > 0 && !seen) return { status: 'resumed', matched };
    await this.step((t, emit) => {
      if (seen)
        emit({ type: 'messageId.seen', key: dedupKey, until: new Date(now.getTime() + ttl * 1000).toISOString() });
      if (subs.length > 0) t.deliver(subs, data);
      else if (elsewhere.length === 0) {
        emit({
          type: 'message.buffered',
          message: {
            id: uuidv7(now),
            organization: req.organization,
            eventType: req.eventType,
            correlationKey: req.correlationKey,
            data,
            messageId: req.messageId ?? null,
            receivedAt: now.toISOString(),
            expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
          },
        });
      }
    }, now);
    return { status: matched.length > 0 ? 'resumed' : 'buffered', matched };
  }

  /** Cancels a running execution. Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING. */
  async cancel(req: Caller & { processInstanceId: string }): Promise<void> {
    const id = (await runningInstance(this.state, this.archive, req, req.processInstanceId)).processInstanceId;
    await this.step((t) => t.cancel(runningNow(this.state, id), 'cancelled by request'));
  }

  /** A live or archived execution the caller may see, or null. */
  getInstance(caller: Caller, id: string): Promise<Instance | null> {
    return findInstance(this.state, this.archive, caller, id);
  }

  /**
   * Executions of a flow, newest first (ids are time-ordered): live ones and those in history.
   * `cursor` is the last id of the previous page. Throws PROCESS_NOT_FOUND for a flow the
   * caller may not see.
   */
  listInstances(
    caller: Caller,
    processId: string,
    opts: { stateCd?: number; limit: number; cursor?: string; children?: boolean },
  ): Promise<{ items: InstanceSummary[]; nextCursor: string | null }> {
    return listInstances(this.state, this.archive, caller, processId, opts);
  }

  /**
   * After a restart: arms the timers of waiting nodes (overdue ones fire at once), runs nodes
   * that were active, archives executions that finished but were not archived yet, and drops
   * kept messages and dedup entries that expired.
   */
  async recover(): Promise<void> {
    const running = recoverLiveState(this.state, this.effects, undefined, (inst) =>
      overLimits(inst, this.limits, null),
    );
    for (const inst of running) await this.continueSafely(inst);
    await this.sweepExpired();
    this.cluster?.loaded();
    if (!this.keepsThrown && Object.keys(this.state.thrown).length > 0) {
      // Kept by daemons that shared this database: this one shares it with none.
      await this.store.commit(...Object.keys(this.state.thrown).map((id) => ({ type: 'event.passed', id }) as const));
    }
  }

  /**
   * Executions its store has just put into the state (a partition taken while running:
   * PgStore.take), in the turn it did: resumed as after a restart (timers armed, active nodes
   * run again, finished ones archived), and the subscription index made again for every
   * execution (the load reset it). Resolves once the active ones ran.
   */
  async adopt(ids: readonly string[]): Promise<void> {
    const running = recoverLiveState(this.state, this.effects, new Set(ids), (inst) =>
      overLimits(inst, this.limits, null),
    );
    for (const inst of running) await this.continueSafely(inst);
    // A claim its last holder won but did not use: a message its nodes may consume now. An
    // event thrown there that its last holder had not given on yet.
    this.cluster?.loaded();
  }

  /**
   * Hands executions over to another daemon (their partition given up: PgStore.drop, which
   * `removal` calls with these hooks). In the turn they leave the state, those `leaving` are
   * forgotten just before (timers disarmed, work under way aborted: their next holder runs it
   * again) and the subscription index is made again without them just after; the archive's
   * writes in flight (fenced by the partition's lease), and the events under message ids
   * `leaving` names, are `settled` before the lease goes.
   */
  async handOver(
    leaving: (instanceId: string) => boolean,
    removal: (hooks: { leaving: () => void; left: () => void; settled: () => Promise<void> }) => Promise<void>,
  ): Promise<void> {
    await removal({
      leaving: () => {
        for (const id of InstanceTable.of(this.state).ids()) {
          const inst = this.state.instances[id];
          if (inst !== undefined && leaving(id)) this.effects.forget(inst);
        }
      },
      left: () => {
        reindexSubscriptions(this.state);
        this.emit('handedOver', leaving);
      },
      // Events under message ids of theirs remember the id before the next holder reads it.
      settled: async () => {
        const publishing = [...this.publishing].filter(([key]) => leaving(key)).map(([, p]) => p);
        await Promise.all([this.archive.idle(), Promise.allSettled(publishing)]);
      },
    });
  }

  /**
   * Removes kept messages, dedup entries and memory entries whose time is up (an expired
   * memory entry already reads as missing; this frees it). At most MEMORY_SWEEP_BATCH memory
   * entries per sweep, so one sweep stays a small journal entry; the rest go in later ones.
   */
  async sweepExpired(): Promise<void> {
    const now = this.now().toISOString();
    const expiredMessages = Object.values(this.state.messages)
      .filter((m) => m.expiresAt <= now)
      .map((m) => m.id);
    const expiredIds = Object.entries(this.state.messageIds)
      .filter(([, until]) => until <= now)
      .map(([k]) => k);
    const expiredMemory = expiredMemoryEntries(this.state.memory, now, MEMORY_SWEEP_BATCH);
    if (expiredMessages.length === 0 && expiredIds.length === 0 && expiredMemory.length === 0) return;
    await this.store.commit(
      ...expiredMessages.map((id) => ({ type: 'message.removed', id }) as const),
      ...expiredIds.map((key) => ({ type: 'messageId.expired', key }) as const),
      ...expiredMemory.map((at) => ({ type: 'memory.written', ...at, entry: null }) as const),
    );
  }

  /**
   * Stops timers and new operations, and resolves once the steps and archiving already under
   * way have finished (graceful stop: the store is closed after this).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.effects.close();
    this.cluster?.close();
    // Work under way is abandoned: its nodes are still Active, so a restart runs them again.
    this.work.abortAll(new WfxError('SERVICE_UNAVAILABLE', 'the engine is stopping'));
    await this.inflight.idle();
    await this.work.close();
  }

  /**
   * Runs what is left of `inst` after a restart. A step that cannot run it (it throws before
   * changing anything) sets the execution aside, failed with INTERNAL_ERROR, and recovery goes
   * on with the others: one execution never keeps a daemon from coming back. A failed store
   * (the step threw after it changed the state) stops recovery: its state cannot be trusted.
   */
  private async continueSafely(inst: Instance): Promise<void> {
    const id = inst.processInstanceId;
    try {
      await this.step((t) => t.continue(this.state.instances[id] ?? inst));
    } catch (err) {
      if (this.store.failed || this.closed) throw err;
      this.onError(err, `recovery: execution ${id} could not run on; it is failed`);
      const message = `the execution could not run on after a restart: ${err instanceof Error ? err.message : String(err)}`;
      await this.step((t) => t.setAside(id, message));
    }
  }

  /** Tracks `work` until it settles, so close() can wait for it. */
  private track<T>(work: Promise<T>): Promise<T> {
    return this.inflight.track(work);
  }

  /**
   * How many log lines of execution `inst` are durable and streamed: a log stream replays up
   * to here, then follows `log` events.
   */
  streamedLogCount(inst: Instance): number {
    return this.effects.streamedLogCount(inst);
  }

  /** Re-reads the clock for due timers (after a clock jump; tests moving their clock). */
  pokeTimers(): void {
    this.effects.pokeTimers();
  }

  /** Number of armed timers (for status and tests). */
  get timerCount(): number {
    return this.effects.timerCount;
  }

  // --- internals ---------------------------------------------------------------------------

  /**
   * Runs one Transition in one store transaction, waits until it is durable, then carries out
   * what its records call for. `fn` runs synchronously in the step: whatever it reads of the
   * live state it must read there, not hold from before an await (a resume replaces an
   * execution's object, youngCopy).
   */
  private step<T>(fn: (t: Transition, emit: (r: WfxRecord) => void) => T, now = this.now()): Promise<T> {
    if (this.closed) return Promise.reject(new WfxError('SERVICE_UNAVAILABLE', 'the engine is stopping'));
    return this.track(this.runStep(fn, now));
  }

  private async runStep<T>(fn: (t: Transition, emit: (r: WfxRecord) => void) => T, now: Date): Promise<T> {
    let transition!: Transition;
    const tx = this.store.transact((emit) => {
      transition = new Transition(this, emit, now);
      return fn(transition, emit);
    }, this.archive.oneStep);
    const logsUpTo = this.effects.logMarks(transition.touched);
    await tx.durable;
    this.effects.afterDurable(tx, logsUpTo, transition);
    for (const id of transition.kept) this.cluster!.offerKept(id);
    for (const event of transition.thrown) this.cluster!.thrownHere(event.id);
    return tx.result;
  }
}
