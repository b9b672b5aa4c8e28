import { EventEmitter } from 'node:events';
import { WfxError } from '../../shared/errors.js';
import { parseDuration } from '../../shared/duration.js';
import { FlowGraph } from '../../shared/flow/graph.js';
import { nodesAt, type BoundaryEventNode, type FlowDefinition, type FlowNode } from '../../shared/flow/types.js';
import { indexEventWait, type WfxRecord } from '../state/records.js';
import { shareParsedStrings } from '../state/gc.js';
import { InstanceTable } from '../state/instance-table.js';
import { logEntry } from '../state/log-line.js';
import { STATE, STATUS, type Environment, type Instance, type LogEntry, type WfxState } from '../state/state.js';
import { subscriptionsFor } from '../state/subscriptions.js';
import type { History } from '../store/history.js';
import type { DurableStore, Transaction } from '../store/store.js';
import { ExecutionArchive, ownRecordsJson, type InstanceSummary } from './archive.js';
import { uuidv7 } from './ids.js';
import { validateTaskData } from '../../shared/input-data.js';
import { cloneData, ownEntry } from '../../shared/json-object.js';
import { DEFAULT_MAX_JSON_DEPTH, describeDepthExcess, formatJsonPath, jsonDepthExcess } from '../../shared/json-shape.js';
import { TimerQueue } from './timers.js';
import { Transition, type EngineCore, type LaunchParams, type WorkOrder } from './transition.js';
import { callHttp, type HttpCall, type HttpCallOptions } from './work/http.js';
import type { NetworkPolicy } from './work/network-policy.js';
import type { WorkResult } from './work/result.js';
import { createScriptRunner, type ScriptRunner } from './work/script.js';
import { WorkCount } from '../../shared/work-count.js';

/** A lifecycle event (SPEC.md section 4), published once the transition is durable. */
export interface LifecycleEvent {
  readonly type:
    | 'PROCESS_STARTED'
    | 'PROCESS_COMPLETED'
    | 'PROCESS_FAILED'
    | 'PROCESS_CANCELLED'
    | 'NODE_STARTED'
    | 'NODE_WAITING'
    | 'NODE_COMPLETED'
    | 'NODE_FAILED'
    | 'NODE_CANCELLED'
    | 'NODE_TIMEDOUT';
  readonly processInstanceId: string;
  readonly processId: string;
  readonly organization: string;
  readonly timestamp: string;
  readonly nodeId?: string;
  readonly nodeInstanceId?: string;
  readonly nodeType?: string;
  readonly statusCd?: number;
  readonly stateCd?: number;
}

/** A log entry as streamed: `id` is its 1-based position in the execution's log. */
export interface StreamedLog {
  readonly processInstanceId: string;
  readonly id: number;
  readonly entry: LogEntry;
}

/** An execution's log has `upTo` durable entries (read them from `instance.logs` with logEntry). */
export interface LogsAdvanced {
  readonly processInstanceId: string;
  readonly upTo: number;
  readonly instance: Instance;
}

/** Who asks: an organization, or null for a system credential (any organization). */
export type Caller = { readonly organization: string | null };

export interface StartRequest extends Caller {
  readonly processId: string;
  readonly environment?: Environment;
  readonly versionNumber?: string;
  readonly correlationKey?: string | null;
  readonly data?: Record<string, unknown>;
  readonly parentInstanceId?: string | null;
}

export interface EngineOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly history: History;
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
}

type FlowScope = { definition: FlowDefinition; nodes: Readonly<Record<string, FlowNode>>; graph: FlowGraph; startId: string };

const NODE_EVENT: Partial<Record<number, LifecycleEvent['type']>> = {
  [STATUS.FAILED]: 'NODE_FAILED',
  [STATUS.CANCELLED]: 'NODE_CANCELLED',
  [STATUS.TIMED_OUT]: 'NODE_TIMEDOUT',
};
const PROCESS_EVENT = { 1: 'PROCESS_COMPLETED', 2: 'PROCESS_FAILED', 3: 'PROCESS_CANCELLED' } as const;

/** The `{env.*}` of an organization and environment that has none set. */
const NO_ENV: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The workflow engine: starts executions, resumes them with tasks, events and timers, cancels
 * them. Every operation is one synchronous Transition inside one store transaction (so
 * concurrent operations never interleave inside an execution); its answer, its lifecycle events
 * and log lines, its timers and the archiving of finished executions all happen only once the
 * transaction is durable.
 *
 * Emits, once a step is durable: `logs` ({processInstanceId, upTo}: an execution's log now has
 * `upTo` durable entries; one per execution per step), `log` (StreamedLog, each entry: only
 * while someone listens), `lifecycle` (LifecycleEvent: only while someone listens), `finished`
 * (execution id, after its last log entries), and `archived` (execution id) once a finished
 * execution has moved to history. Building events nobody listens to would cost every step.
 */
export class Engine extends EventEmitter implements EngineCore {
  readonly state: WfxState;
  private readonly store: DurableStore<WfxState, WfxRecord>;
  private readonly history: History;
  private readonly now: () => Date;
  /** Parsed flow versions: processId -> version (and body scope, `version/loop/inner`) -> nodes, graph and start node. */
  private readonly graphs = new Map<string, Map<string, FlowScope>>();
  /** Work under way (HTTP calls, scripts), by `instanceId|nodeInstanceId`: aborted when its node stops. */
  private readonly working = new Map<string, AbortController>();
  private readonly http: (call: HttpCall, options: HttpCallOptions) => Promise<WorkResult>;
  private readonly network: NetworkPolicy | undefined;
  private scriptRunner: ScriptRunner | undefined;
  private readonly ownsScripts: boolean;
  private readonly timers: TimerQueue;
  private readonly onError: (err: unknown, what: string) => void;
  /** How deep start data, work results and the variables a node sets may nest (EngineOptions.maxJsonDepth). */
  readonly maxJsonDepth: number;
  /** Log entries already streamed, per live execution. */
  private readonly streamed = new Map<string, number>();
  private closed = false;
  /** Steps and archiving under way. */
  private readonly inflight = new WorkCount();
  /** Finished executions: to history, from history. */
  private readonly archive: ExecutionArchive;

  constructor(options: EngineOptions) {
    super();
    this.setMaxListeners(0);
    this.store = options.store;
    this.state = options.store.state;
    this.history = options.history;
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => undefined);
    this.http = options.http ?? callHttp;
    this.network = options.network;
    this.scriptRunner = options.scripts;
    this.ownsScripts = options.scripts === undefined;
    this.maxJsonDepth = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
    this.timers = new TimerQueue((key) => this.fireTimer(key), () => this.now().getTime());
    this.archive = new ExecutionArchive({
      state: this.state,
      store: this.store,
      history: this.history,
      track: (work) => this.track(work),
      onError: (err, what) => this.onError(err, what),
      onArchived: (id) => {
        this.streamed.delete(id);
        this.emit('archived', id);
      },
      closed: () => this.closed,
    });
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

  isWorking(key: string): boolean {
    return this.working.has(key);
  }

  envOf(inst: Instance): Readonly<Record<string, string>> {
    return this.state.environments[inst.organization]?.[inst.environment] ?? NO_ENV;
  }

  newInstanceId(now: Date): string {
    return uuidv7(now);
  }

  // --- operations ------------------------------------------------------------------------

  /**
   * Starts an execution of the active (or the given) version and resolves once its first
   * step is durable. Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND, PROCESS_NOT_PUBLISHED.
   */
  async start(req: StartRequest): Promise<Instance> {
    const params = this.startParams(req);
    return this.step((t) => t.start(params));
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
    finalize: (started: readonly Instance[], refused: ReadonlyArray<{ readonly req: StartRequest; readonly error: WfxError }>) => WfxRecord[],
  ): Promise<Instance[]> {
    const refused: Array<{ req: StartRequest; error: WfxError }> = [];
    const params = reqs.flatMap((req) => {
      try {
        return [this.startParams(req)];
      } catch (err) {
        refused.push({ req, error: err instanceof WfxError ? err : new WfxError('INTERNAL_ERROR', err instanceof Error ? err.message : String(err), { cause: err }) });
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
   * What a start runs: the flow version resolved. Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND,
   * PROCESS_NOT_PUBLISHED, VALIDATION_ERROR (data nested deeper than maxJsonDepth).
   */
  startParams(req: StartRequest): LaunchParams {
    const flow = ownEntry(this.state.flows, req.processId);
    if (!flow || (req.organization !== null && flow.organization !== req.organization)) {
      throw new WfxError('PROCESS_NOT_FOUND', `no flow ${req.processId}`);
    }
    const environment = req.environment ?? 'PRODUCTION';
    const version = req.versionNumber ?? flow.active[environment];
    if (version === undefined) {
      throw new WfxError('PROCESS_NOT_PUBLISHED', `flow ${req.processId} has no active version in ${environment}`);
    }
    const published = flow.versions[version];
    if (!published) throw new WfxError('VERSION_NOT_FOUND', `flow ${req.processId} has no version ${version}`);
    // Before the copy (it recurses): triggers and callProcess start here without a request body.
    const excess = req.data === undefined ? null : jsonDepthExcess(req.data, this.maxJsonDepth);
    if (excess !== null) {
      throw new WfxError('VALIDATION_ERROR', `the start data is ${describeDepthExcess(excess, 'data')}`, { details: { path: formatJsonPath(excess.path, 'data'), maxDepth: excess.maxDepth } });
    }
    return {
      processId: flow.processId,
      processName: published.definition.name,
      processVersion: version,
      organization: flow.organization,
      environment,
      correlationKey: req.correlationKey ?? null,
      parentInstanceId: req.parentInstanceId ?? null,
      variables: cloneData(req.data ?? {}),
    };
  }

  /**
   * Submits input to a waiting input node or user task. Throws INSTANCE_NOT_FOUND,
   * INSTANCE_NOT_RUNNING, NODE_NOT_WAITING, VALIDATION_ERROR (422, the node keeps waiting).
   */
  async submitTask(req: Caller & { processInstanceId: string; nodeId: string; action: 'COMPLETE' | 'CANCEL'; data?: Record<string, unknown> }): Promise<void> {
    const id = (await this.running(req, req.processInstanceId)).processInstanceId;
    const data = req.data ?? {};
    await this.step((t) => {
      // Checked in the step, on the execution as it is now: another call may have resumed or
      // ended it since running() (and a resume replaces its object: youngCopy).
      const inst = this.runningNow(id);
      const ni = Object.values(inst.nodes).find((n) => n.nodeId === req.nodeId && n.statusCd === STATUS.WAITING && n.wait?.kind === 'input');
      if (!ni || ni.wait?.kind !== 'input') throw new WfxError('NODE_NOT_WAITING', `node ${req.nodeId} of ${id} is not waiting for input`);
      if (req.action === 'COMPLETE') validateTaskData(ni.wait, data);
      t.resume(inst, ni, { kind: 'task', action: req.action, data });
    });
  }

  /**
   * Delivers a message or signal (POST /process/event). Resolves with what it resumed, or
   * `buffered` when nothing matched and it is kept for `ttlSeconds`. Throws
   * NO_MATCHING_SUBSCRIPTION when nothing matched and there is no ttl.
   */
  async publishEvent(req: {
    organization: string;
    eventType: string;
    correlationKey: string | null;
    data?: Record<string, unknown>;
    ttlSeconds?: number;
    messageId?: string | null;
  }): Promise<{ status: 'resumed' | 'buffered' | 'duplicate'; matched: Array<{ processInstanceId: string; nodeId: string }> }> {
    const now = this.now();
    const dedupKey = req.messageId ? `${req.organization}|${req.messageId}` : null;
    const seenUntil = dedupKey ? this.state.messageIds[dedupKey] : undefined;
    if (seenUntil !== undefined && seenUntil > now.toISOString()) {
      await this.store.flush(); // the first one may still be on its way to disk
      return { status: 'duplicate', matched: [] };
    }
    const subs = subscriptionsFor(this.state, req.organization, req.eventType, req.correlationKey);
    const ttl = req.ttlSeconds ?? 0;
    if (subs.length === 0 && ttl <= 0) {
      throw new WfxError('NO_MATCHING_SUBSCRIPTION', `no execution waits for ${req.eventType} with correlation key ${req.correlationKey ?? '(none)'}`);
    }
    const data = req.data ?? {};
    const matched = subs.map((s) => ({ processInstanceId: s.instanceId, nodeId: s.nodeId }));
    await this.step(
      (t, emit) => {
        if (dedupKey && ttl > 0) emit({ type: 'messageId.seen', key: dedupKey, until: new Date(now.getTime() + ttl * 1000).toISOString() });
        if (subs.length > 0) t.deliver(subs, data);
        else {
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
      },
      now,
    );
    return { status: subs.length > 0 ? 'resumed' : 'buffered', matched };
  }

  /** Cancels a running execution. Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING. */
  async cancel(req: Caller & { processInstanceId: string }): Promise<void> {
    const id = (await this.running(req, req.processInstanceId)).processInstanceId;
    await this.step((t) => t.cancel(this.runningNow(id), 'cancelled by request'));
  }

  /** A live or archived execution the caller may see, or null. */
  async getInstance(caller: Caller, id: string): Promise<Instance | null> {
    const inst: Instance | null = ownEntry(this.state.instances, id) ?? (await this.archive.read(id));
    if (!inst || (caller.organization !== null && inst.organization !== caller.organization)) return null;
    return inst;
  }

  /**
   * Executions of a flow, newest first (ids are time-ordered): live ones and those in history.
   * `cursor` is the last id of the previous page. Throws PROCESS_NOT_FOUND for a flow the
   * caller may not see.
   */
  listInstances(caller: Caller, processId: string, opts: { stateCd?: number; limit: number; cursor?: string }): Promise<{ items: InstanceSummary[]; nextCursor: string | null }> {
    return this.archive.list(caller, processId, opts, (id) => this.getInstance(caller, id));
  }

  /**
   * After a restart: arms the timers of waiting nodes (overdue ones fire at once), runs nodes
   * that were active, archives executions that finished but were not archived yet, and drops
   * kept messages and dedup entries that expired.
   */
  async recover(): Promise<void> {
    // The subscription index is derived: rebuilt in the same walk (one pass over 100k executions, not two).
    this.state.subscriptions = {};
    const running: Instance[] = [];
    let prev: Instance | null = null;
    for (const id of InstanceTable.of(this.state).ids()) {
      const inst = this.state.instances[id];
      if (inst === undefined) continue;
      shareParsedStrings(inst, id, prev);
      prev = inst;
      this.streamed.set(inst.processInstanceId, inst.logs.length);
      if (inst.stateCd !== STATE.RUNNING) {
        this.archive.enqueue(inst.processInstanceId, null);
        continue;
      }
      // One pass over the nodes, no arrays: this runs for every waiting execution at a restart.
      let active = false;
      let waiting = false;
      for (const id in inst.nodes) {
        const ni = inst.nodes[id]!;
        if (ni.statusCd === STATUS.ACTIVE) active = true;
        else if (ni.statusCd !== STATUS.WAITING) continue;
        else {
          waiting = true;
          if (ni.wait?.dueAt) this.timers.set(`${inst.processInstanceId}|${ni.id}`, Date.parse(ni.wait.dueAt));
          indexEventWait(this.state, inst, ni);
        }
        this.armBoundaries(inst, ni.id);
      }
      // Active nodes run again; an execution with nothing live is settled (finished, or its join fired).
      if (active || !waiting) running.push(inst);
    }
    for (const inst of running) await this.step((t) => t.continue(inst));
    await this.sweepExpired();
  }

  /** Removes kept messages and dedup entries whose time is up. */
  async sweepExpired(): Promise<void> {
    const now = this.now().toISOString();
    const expiredMessages = Object.values(this.state.messages).filter((m) => m.expiresAt <= now).map((m) => m.id);
    const expiredIds = Object.entries(this.state.messageIds).filter(([, until]) => until <= now).map(([k]) => k);
    if (expiredMessages.length === 0 && expiredIds.length === 0) return;
    await this.store.commit(
      ...expiredMessages.map((id) => ({ type: 'message.removed', id }) as const),
      ...expiredIds.map((key) => ({ type: 'messageId.expired', key }) as const),
    );
  }

  /**
   * Stops timers and new operations, and resolves once the steps and archiving already under
   * way have finished (graceful stop: the store is closed after this).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.timers.close();
    // Work under way is abandoned: its nodes are still Active, so a restart runs them again.
    for (const controller of this.working.values()) controller.abort(new WfxError('SERVICE_UNAVAILABLE', 'the engine is stopping'));
    await this.inflight.idle();
    if (this.ownsScripts) await this.scriptRunner?.close();
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
    return this.state.instances[inst.processInstanceId] === inst ? (this.streamed.get(inst.processInstanceId) ?? inst.logs.length) : inst.logs.length;
  }

  /** Re-reads the clock for due timers (after a clock jump; tests moving their clock). */
  pokeTimers(): void {
    this.timers.poke();
  }

  /** Number of armed timers (for status and tests). */
  get timerCount(): number {
    return this.timers.size;
  }

  // --- internals ---------------------------------------------------------------------------

  /**
   * The running execution `id` the caller may act on. Throws INSTANCE_NOT_RUNNING for a
   * finished one (live or archived), INSTANCE_NOT_FOUND for one it may not see or that does not exist.
   */
  private async running(caller: Caller, id: string): Promise<Instance> {
    const visible = (i: Instance | null | undefined): i is Instance => !!i && (caller.organization === null || i.organization === caller.organization);
    const live = ownEntry(this.state.instances, id);
    if (!visible(live)) {
      if (await this.getInstance(caller, id)) throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
      throw new WfxError('INSTANCE_NOT_FOUND', `no execution ${id}`);
    }
    if (live.stateCd !== STATE.RUNNING) throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
    return live;
  }

  /**
   * Live execution `id` as it is now, still running (in a step, after running() checked who may
   * see it): throws INSTANCE_NOT_RUNNING once it has finished, or left the live state.
   */
  private runningNow(id: string): Instance {
    const inst = this.state.instances[id];
    if (!inst || inst.stateCd !== STATE.RUNNING) throw new WfxError('INSTANCE_NOT_RUNNING', `execution ${id} is not running`);
    return inst;
  }

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
    // Pairs of execution id and log length, flat: nearly always one pair, where a Map cost more.
    const logsUpTo: Array<string | number> = [];
    for (const id of transition.touched) logsUpTo.push(id, this.state.instances[id]?.logs.length ?? 0);
    await tx.durable;
    this.afterDurable(tx, logsUpTo);
    for (const order of transition.work) this.startWork(order);
    for (const id of transition.deferred) setImmediate(() => this.resumeDeferred(id));
    return tx.result;
  }

  private afterDurable(tx: Pick<Transaction<unknown, WfxRecord>, 'records' | 'serialized' | 'settle'>, logsUpTo: ReadonlyArray<string | number>): void {
    const { records, serialized } = tx;
    // Log lines first: a log stream ends on its execution's PROCESS_* event, after every line.
    const perEntry = this.listenerCount('log') > 0;
    for (let p = 0; p < logsUpTo.length; p += 2) {
      const id = logsUpTo[p] as string;
      const upTo = logsUpTo[p + 1] as number;
      const inst = this.state.instances[id];
      if (!inst) continue;
      const from = this.streamed.get(id) ?? 0;
      if (upTo <= from) continue;
      // An execution that settles below leaves now: streamedLogCount then counts its whole log.
      if (tx.settle === null) this.streamed.set(id, upTo);
      if (perEntry) for (let i = from; i < upTo; i++) this.emit('log', { processInstanceId: id, id: i + 1, entry: logEntry(inst, inst.logs[i]!) } satisfies StreamedLog);
      this.emit('logs', { processInstanceId: id, upTo, instance: inst } satisfies LogsAdvanced);
    }
    const publish = this.listenerCount('lifecycle') > 0;
    for (const r of records) {
      if (publish) for (const event of this.lifecycleOf(r)) this.emit('lifecycle', event);
      if (r.type === 'node.waiting' && r.wait.dueAt) this.timers.set(`${r.instanceId}|${r.nodeInstanceId}`, Date.parse(r.wait.dueAt));
      else if (r.type === 'node.completed' || r.type === 'node.left') {
        const key = `${r.instanceId}|${r.nodeInstanceId}`;
        this.timers.delete(key);
        this.disarmBoundaries(r.instanceId, r.nodeInstanceId);
        this.working.get(key)?.abort(new Error('the node stopped'));
      } else if (r.type === 'boundary.fired') this.timers.delete(`${r.instanceId}|${r.nodeInstanceId}|${r.boundaryId}`);
      if (r.type === 'node.entered' || (r.type === 'node.waiting' && this.state.instances[r.instanceId]?.nodes[r.nodeInstanceId]?.statusCd === STATUS.WAITING)) {
        const inst = this.state.instances[r.instanceId];
        if (inst) this.armBoundaries(inst, r.nodeInstanceId);
      }
    }
    for (const r of records) {
      if (r.type !== 'instance.finished') continue;
      this.emit('finished', r.instanceId);
      if (tx.settle) {
        // Already in history (ExecutionArchive.oneStep): it leaves the live state now.
        tx.settle();
        this.streamed.delete(r.instanceId);
        this.emit('archived', r.instanceId);
      } else this.archive.enqueue(r.instanceId, ownRecordsJson(r.instanceId, records, serialized));
    }
  }

  /** The lifecycle events a record stands for (SPEC.md section 4). */
  private lifecycleOf(r: WfxRecord): LifecycleEvent[] {
    if (r.type === 'instance.started') {
      const i = r.instance;
      return [{ type: 'PROCESS_STARTED', processInstanceId: i.processInstanceId, processId: i.processId, organization: i.organization, timestamp: i.startTime, stateCd: 0 }];
    }
    if (!('instanceId' in r)) return [];
    const inst = this.state.instances[r.instanceId];
    if (!inst) return [];
    const base = { processInstanceId: inst.processInstanceId, processId: inst.processId, organization: inst.organization };
    if (r.type === 'instance.finished') return [{ type: PROCESS_EVENT[r.stateCd], ...base, timestamp: r.at, stateCd: r.stateCd }];
    if (r.type === 'nodes.ran') return r.nodes.flatMap((n) => this.lifecycleOf({ type: 'node.ran', instanceId: r.instanceId, at: r.at, ...n }));
    if (!('nodeInstanceId' in r)) return [];
    const ni = inst.nodes[r.nodeInstanceId];
    if (!ni) return [];
    // A literal, not `{ ...base, nodeId, ... }`: one that starts with a spread is slow (extensibleCopy).
    const node = { processInstanceId: base.processInstanceId, processId: base.processId, organization: base.organization, nodeId: ni.nodeId, nodeInstanceId: ni.id, nodeType: ni.nodeType };
    switch (r.type) {
      case 'node.entered':
        return [{ type: 'NODE_STARTED', ...node, timestamp: r.at, statusCd: STATUS.ACTIVE }];
      case 'node.ran':
        return [
          { type: 'NODE_STARTED', ...node, timestamp: r.at, statusCd: STATUS.ACTIVE },
          { type: 'NODE_COMPLETED', ...node, timestamp: r.at, statusCd: STATUS.COMPLETED },
        ];
      case 'node.waiting':
        return [{ type: 'NODE_WAITING', ...node, timestamp: r.at, statusCd: STATUS.WAITING }];
      case 'node.completed':
        return [{ type: 'NODE_COMPLETED', ...node, timestamp: r.at, statusCd: STATUS.COMPLETED }];
      case 'node.left':
        return [{ type: NODE_EVENT[r.statusCd]!, ...node, timestamp: r.at, statusCd: r.statusCd }];
      default:
        return [];
    }
  }

  private fireTimer(key: string): void {
    const [instanceId, nodeInstanceId, boundaryId] = key.split('|') as [string, string, string | undefined];
    const inst = this.state.instances[instanceId];
    const ni = inst?.nodes[nodeInstanceId];
    if (!inst || !ni || inst.stateCd !== STATE.RUNNING) return;
    if (boundaryId !== undefined) {
      this.step((t) => t.fireBoundary(inst, ni, boundaryId)).catch((err: unknown) => this.onError(err, `boundary timer ${key}`));
      return;
    }
    if (ni.statusCd !== STATUS.WAITING || !ni.wait?.dueAt) return;
    this.step((t) => t.resume(inst, ni, { kind: 'timer' })).catch((err: unknown) => this.onError(err, `timer of ${key}`));
  }

  /**
   * Arms the timer boundary events of a live node that have not fired: each is due its
   * duration after the node started, so a restart arms them again at the same instant
   * (overdue ones fire at once).
   */
  private armBoundaries(inst: Instance, nodeInstanceId: string): void {
    const ni = inst.nodes[nodeInstanceId];
    if (!ni || (ni.statusCd !== STATUS.ACTIVE && ni.statusCd !== STATUS.WAITING)) return;
    const { nodes, graph } = this.flowOf(inst);
    for (const id of graph.boundaries(ni.nodeId)) {
      const b = nodes[id] as BoundaryEventNode;
      if (b.event !== 'timer' || b.duration === undefined || ni.fired?.includes(id)) continue;
      this.timers.set(`${inst.processInstanceId}|${ni.id}|${id}`, Date.parse(ni.startTime) + parseDuration(b.duration));
    }
  }

  private disarmBoundaries(instanceId: string, nodeInstanceId: string): void {
    const inst = this.state.instances[instanceId];
    const ni = inst?.nodes[nodeInstanceId];
    if (!inst || !ni) return;
    for (const id of this.flowOf(inst).graph.boundaries(ni.nodeId)) this.timers.delete(`${instanceId}|${nodeInstanceId}|${id}`);
  }

  /**
   * Starts a node's work (once its step is durable) and resumes the node with the result in
   * a new step. A node stopped meanwhile (cancelled, its execution ended) aborts the work and
   * ignores its result. Work is not journaled while under way: after a crash the node is
   * still Active and runs again (at least once, as with every peer's HTTP tasks).
   */
  private startWork(order: WorkOrder): void {
    const key = `${order.instanceId}|${order.nodeInstanceId}`;
    const live = () => {
      const inst = this.state.instances[order.instanceId];
      const ni = inst?.nodes[order.nodeInstanceId];
      return inst && ni && inst.stateCd === STATE.RUNNING && ni.statusCd === STATUS.ACTIVE ? { inst, ni } : null;
    };
    if (this.closed || this.working.has(key) || !live()) return;
    const controller = new AbortController();
    this.working.set(key, controller);
    const run = async (): Promise<WorkResult> => {
      const { request } = order;
      if (request.kind === 'http') {
        let logged = 0;
        const result = await this.http(request.call, {
          signal: controller.signal,
          ...(this.network && { network: this.network }),
          onRetry: (info) => {
            logged++;
            this.logWork(order, `attempt ${info.attempt} failed (${info.reason}); retrying in ${info.delayMs}ms`);
          },
        });
        // Retries were logged as they happened; the result's log repeats them before its last line.
        return { ...result, logs: (result.logs ?? []).slice(logged) };
      }
      this.scriptRunner ??= createScriptRunner({ maxJsonDepth: this.maxJsonDepth });
      return this.scriptRunner.run(request.run, controller.signal);
    };
    run()
      .catch((err: unknown): WorkResult => ({ ok: false, code: 'INTERNAL_ERROR', message: err instanceof Error ? err.message : String(err) }))
      .then((result) => this.checkedResult(order.request.kind, result))
      .then((result) => {
        this.working.delete(key);
        const now = live();
        if (!now || this.closed || controller.signal.aborted) return;
        return this.step((t) => t.workDone(now.inst, now.ni, result)).catch((err: unknown) => {
          // Handling the result threw before anything changed (transact: nothing is applied on
          // a throw before the first record): the node fails visibly instead of staying Active,
          // and a restart does not run the work again.
          this.onError(err, `the result of ${key}`);
          const again = live();
          if (!again || this.closed) return;
          const message = `handling the work's result failed: ${err instanceof Error ? err.message : String(err)}`;
          return this.step((t) => t.failWork(again.inst, again.ni, 'INTERNAL_ERROR', message));
        });
      })
      .catch((err: unknown) => this.onError(err, `work of ${key}`));
  }

  /**
   * A work result nested deeper than maxJsonDepth becomes the node's failure
   * (HTTP_RESPONSE_INVALID, SCRIPT_RESULT_INVALID): it would overflow what recurses over the
   * variables later (the journal's JSON.stringify).
   */
  private checkedResult(kind: WorkOrder['request']['kind'], result: WorkResult): WorkResult {
    if (!result.ok) return result;
    const excess = jsonDepthExcess(result.value, this.maxJsonDepth);
    if (excess === null) return result;
    const what = kind === 'http' ? 'the response' : "the script's result";
    const code = kind === 'http' ? 'HTTP_RESPONSE_INVALID' : 'SCRIPT_RESULT_INVALID';
    return { ok: false, code, message: `${what} is ${describeDepthExcess(excess)}`, ...(result.logs && { logs: result.logs }) };
  }

  /** A line in the execution log while work goes on (a retry), journaled like any other. */
  private logWork(order: WorkOrder, message: string): void {
    const inst = this.state.instances[order.instanceId];
    const ni = inst?.nodes[order.nodeInstanceId];
    if (!inst || !ni || this.closed) return;
    this.step((t, emit) => {
      t.touched.add(inst.processInstanceId); // so log streams see the line
      emit({
        type: 'instance.logged',
        instanceId: inst.processInstanceId,
        entry: { nodeId: ni.nodeId, nodeName: ni.nodeName, nodeType: ni.nodeType, level: 'WARN', message, timestamp: this.now().toISOString() },
      });
    }).catch((err: unknown) => this.onError(err, `log of ${order.instanceId}`));
  }

  private resumeDeferred(id: string): void {
    const inst = this.state.instances[id];
    if (!inst || this.closed) return;
    this.step((t) => t.continue(inst)).catch((err: unknown) => this.onError(err, `continuing ${id}`));
  }

}
