/**
 * The executor of what durable steps call for: the one place where effects happen (log lines
 * and lifecycle events published, timers armed and disarmed, work started and aborted,
 * finished executions archived, deferred executions continued). What a step calls for is
 * planned first, as data (effect-plan.ts), then carried out here in the plan's order. Steps
 * decide; they never do any of this.
 */
import { isWfxError } from '../../shared/errors.js';
import { traceRecords } from '../observe/execution-spans.js';
import { TRACER } from '../observe/tracing.js';
import type { WfxRecord } from '../state/records.js';
import { STATE, STATUS, type Execution, type NodeInstance, type WfxState } from '../state/state.js';
import { CRASH_POINT_SET, crashPoint } from '../store/crash-point.js';
import type { Transaction } from '../store/store.js';
import { ownRecordsJson, recordsByExecution, type ExecutionArchive } from './archive.js';
import type { EngineEmitter } from './engine-events.js';
import { COLD_DUE, nodeKey, timerTarget, type TimerKey } from './keys.js';
import { armBoundaries, disarmBoundaries, planEffects, type PlannedEffect } from './effect-plan.js';
import { TimerQueue } from './timers.js';
import { LogStreams } from './log-streams.js';
import { DeferredExecutions } from './deferred-executions.js';
import type { BegunStep, RunStep, StepContext, StepEffect, StepInput, WorkOrder } from './step/index.js';
import type { WorkRunner } from './work-runner.js';
import type { EngineObserver } from '../observe/engine-observer.js';
import type { Executions } from '../state/executions.js';

/** How soon cold timers whose executions could not be read back are tried again (ms). */
const COLD_DUE_RETRY_MS = 5_000;

/** Cold executions read back at once when their timers are due: a batch each turn. */
const COLD_DUE_BATCH = 256;

/** What Effects needs from the engine. */
export interface EffectsOptions {
  readonly state: WfxState;
  /** The flows of executions (their boundary events). */
  readonly flows: Pick<StepContext, 'flowOf'>;
  /** Where events are published (the Engine). */
  readonly emitter: EngineEmitter;
  readonly work: WorkRunner;
  readonly archive: ExecutionArchive;
  readonly now: () => Date;
  readonly onError: (err: unknown, what: string) => void;
  /** True once the engine stops: deferred executions are not continued. */
  readonly closed: () => boolean;
  /** Runs a step (a timer's), resolved once durable (runner.ts). */
  readonly step: RunStep;
  /** The seam before the executions: cold ones due are read back; each read back has its log streamed whole, its timers armed. */
  readonly executions: Executions;
  /** Runs a step now, its answer known on return (runner.ts, StepRunner.begin). */
  readonly begin: (input: StepInput) => BegunStep<unknown>;
  /** Watches durable steps (metrics). */
  readonly observe?: EngineObserver | undefined;
  /** Timers fire once this settles (EngineOptions.timersAfter). */
  readonly timersAfter?: Promise<unknown> | undefined;
  /** A kept message a node waits for, to claim (cluster: kept-claims.ts). */
  readonly claim?: ((messageId: string) => void) | undefined;
  /** An event thrown in a durable step, to pass on (cluster: thrown-outbox.ts). */
  readonly pass?: ((eventId: string) => void) | undefined;
  /** An event thrown in a durable step that wakes executions not in memory, to deliver by a step of its own. */
  readonly deliver?: ((eventId: string) => void) | undefined;
}

/** The part of a store transaction the effects read: its records, their JSON, and the settling of a finished execution. */
export type DurableStep = Pick<Transaction<unknown, WfxRecord>, 'records' | 'serialized' | 'settle'>;

/**
 * Carries out the effects of durable steps, and keeps what they need between steps: armed
 * timers (by TimerKey) and how much of each live execution's log has been streamed.
 */
export class Effects {
  private readonly state: WfxState;
  private readonly flows: Pick<StepContext, 'flowOf'>;
  private readonly emitter: EngineEmitter;
  private readonly work: WorkRunner;
  private readonly archive: ExecutionArchive;
  private readonly options: EffectsOptions;
  private readonly timers: TimerQueue<TimerKey>;
  /** How much of each live execution's log has been streamed. */
  private readonly logs: LogStreams;
  /** Executions whose step ran out of budget, continued in turn (defer). */
  private readonly deferred: DeferredExecutions;
  /** Whether the cold executions' timer (COLD_DUE) is armed. */
  private coldArmed = false;

  constructor(options: EffectsOptions) {
    this.options = options;
    this.flows = options.flows;
    this.state = options.state;
    this.emitter = options.emitter;
    this.work = options.work;
    this.archive = options.archive;
    this.logs = new LogStreams(options.state, options.emitter);
    this.deferred = new DeferredExecutions(options);
    this.timers = new TimerQueue<TimerKey>(
      (key) => this.fireTimer(key),
      () => options.now().getTime(),
    );
    if (options.timersAfter) {
      this.timers.hold();
      const release = () => this.timers.release();
      void options.timersAfter.then(release, release);
    }
    const executions = options.executions;
    // Read back from disk: durable, so every line of its log counts as streamed; its timers are
    // armed exactly, as at a restart (while cold, the directory's due heap held the earliest).
    executions.onLoad((inst) => {
      this.logs.whole(inst);
      this.armTimersOf(inst);
    });
    executions.onEvict((inst) => this.evicted(inst));
    executions.onColdDue(() => this.armColdDue());
  }

  /**
   * Arms the one timer of the cold executions at the earliest of theirs (Executions.nextColdDue):
   * when it comes, those due are read back (their timers then armed exactly, overdue ones firing).
   */
  armColdDue(): void {
    const next = this.options.executions.nextColdDue();
    this.coldArmed = next !== null;
    if (next === null) this.timers.delete(COLD_DUE);
    else this.timers.set(COLD_DUE, next);
  }

  /**
   * Before a step waits to be durable: the log length of each execution it touched, as pairs
   * of id and length, flat (nearly always one pair, where a Map cost more).
   */
  logMarks(touched: ReadonlySet<string>): Array<string | number> {
    return this.logs.marks(touched);
  }

  /** Carries out what a durable step calls for: its plan (effect-plan.ts, planEffects), in order. */
  afterDurable(tx: DurableStep, logsUpTo: ReadonlyArray<string | number>, effects: readonly StepEffect[]): void {
    const emitter = this.emitter;
    const listening = {
      lifecycle: emitter.listenerCount('lifecycle') > 0,
      jobs: emitter.listenerCount('jobs') > 0,
      spans: TRACER !== null,
      metrics: this.options.observe !== undefined,
    };
    this.carryOut(planEffects(this.state, this.flows, tx.records, effects, listening, logsUpTo), tx);
  }

  /** Carries out a plan (effect-plan.ts), in its order. `tx`: the durable step it is of. */
  private carryOut(plan: readonly PlannedEffect[], tx: DurableStep | null): void {
    const emitter = this.emitter;
    let byExecution: Map<string, number[]> | undefined;
    let deferred = false;
    let perEntry: boolean | undefined;
    for (const effect of plan) {
      switch (effect.kind) {
        case 'spans':
          if (TRACER !== null) traceRecords(TRACER, this.state, effect.records);
          break;
        case 'logs':
          perEntry ??= emitter.listenerCount('log') > 0;
          this.logs.stream(effect.instanceId, effect.upTo, perEntry, tx !== null && tx.settle !== null);
          break;
        case 'metrics':
          this.options.observe?.durable(this.state, effect.records);
          break;
        case 'lifecycle':
          emitter.emit('lifecycle', effect.event);
          break;
        case 'jobs':
          emitter.emit('jobs', effect.waiting);
          break;
        case 'timer.set':
          this.timers.set(effect.key, effect.at);
          break;
        case 'timer.delete':
          this.timers.delete(effect.key);
          break;
        case 'work.stop':
          this.work.stop(effect.key);
          break;
        case 'finished':
          emitter.emit('finished', effect.instanceId);
          if (!tx) break;
          if (tx.settle) {
            // Already in history (ExecutionArchive.oneStep): it leaves the live state now.
            tx.settle();
            this.archived(effect.instanceId);
          } else {
            byExecution ??= recordsByExecution(tx.records);
            this.archive.enqueue(
              effect.instanceId,
              ownRecordsJson(effect.instanceId, tx.records, tx.serialized, byExecution),
            );
          }
          break;
        case 'work':
          // The records are looked through only in a crash test, never on a daemon's own path.
          if (CRASH_POINT_SET && tx && effect.request.kind === 'ai' && endsToolCalls(tx.records, effect))
            crashPoint('agent:tools-ended');
          this.work.start(effect);
          break;
        case 'defer':
          if (CRASH_POINT_SET && tx && startsTriggered(tx.records, effect.instanceId)) crashPoint('trigger:started');
          this.deferred.add(effect.instanceId);
          deferred = true;
          break;
        case 'claim':
          this.options.claim?.(effect.messageId);
          break;
        case 'pass':
          this.options.pass?.(effect.eventId);
          break;
        case 'deliver':
          this.options.deliver?.(effect.eventId);
          break;
      }
    }
    if (deferred) this.deferred.schedule();
  }

  /** A finished execution has left the live state (moved to history): its log is no longer followed. */
  archived(id: string): void {
    this.logs.drop(id);
    this.emitter.emit('archived', id);
  }

  /**
   * A live execution as recovered after a restart: its whole log counts as streamed, and a
   * finished one is queued for archiving. False for a finished one (nothing else to re-arm).
   */
  recovered(inst: Execution): boolean {
    this.logs.whole(inst);
    if (inst.stateCd === STATE.RUNNING) return true;
    this.archive.enqueue(inst.processInstanceId, null);
    return false;
  }

  /** Re-arms the timer of a recovered waiting node (a due one fires at once). */
  recoveredWait(inst: Execution, ni: NodeInstance): void {
    if (ni.wait?.dueAt) this.timers.set(nodeKey(inst.processInstanceId, ni.id), Date.parse(ni.wait.dueAt));
  }

  /** Arms the timer boundary events of a recovered live node that have not fired (overdue ones fire at once). */
  armBoundaries(inst: Execution, nodeInstanceId: string): void {
    const plan: PlannedEffect[] = [];
    armBoundaries(this.flows, inst, nodeInstanceId, plan);
    this.carryOut(plan, null);
  }

  /**
   * How many log lines of execution `inst` are durable and streamed: a log stream replays up
   * to here, then follows `log` events.
   */
  streamedLogCount(inst: Execution): number {
    return this.logs.count(inst);
  }

  /**
   * Forgets live execution `inst`, about to leave the state (its partition handed to another
   * daemon): its timers disarmed, its work under way aborted (its nodes stay Active, so their
   * next holder runs them again), its log's streaming count dropped.
   */
  forget(inst: Execution): void {
    const id = inst.processInstanceId;
    const plan: PlannedEffect[] = [];
    for (const nid in inst.nodes) {
      const ni = inst.nodes[nid]!;
      if (ni.statusCd !== STATUS.ACTIVE && ni.statusCd !== STATUS.WAITING) continue;
      const key = nodeKey(id, ni.id);
      plan.push({ kind: 'timer.delete', key });
      disarmBoundaries(this.state, this.flows, id, ni.id, plan);
      plan.push({ kind: 'work.stop', key });
    }
    this.carryOut(plan, null);
    this.logs.drop(id);
  }

  /** Re-reads the clock for due timers (after a clock jump; tests moving their clock). */
  pokeTimers(): void {
    this.timers.poke();
  }

  /** Number of armed timers: those armed in memory, and each cold execution's earliest (one timer for them all). */
  get timerCount(): number {
    const cold = this.options.executions.coldStats().due;
    return this.timers.size - (this.coldArmed ? 1 : 0) + cold;
  }

  /** Stops firing timers (the engine stops). */
  close(): void {
    this.timers.close();
  }

  /** A timer is due: a step fires its boundary event, or resumes its waiting node (if they still can). */
  private fireTimer(key: TimerKey): void {
    if (key === COLD_DUE) {
      void this.wakeDue();
      return;
    }
    const target = timerTarget(key);
    const { instanceId, nodeInstanceId, boundaryId } = target;
    this.options
      .step({ kind: 'timer', instanceId, nodeInstanceId, ...(boundaryId !== undefined && { boundaryId }) })
      .catch((err: unknown) =>
        this.options.onError(err, boundaryId !== undefined ? `boundary timer ${key}` : `timer of ${key}`),
      );
  }

  /**
   * The cold timer came: the cold executions due now are read back, a batch at a time (each
   * one's timers armed by the load, overdue ones firing), then the timer is armed for the next.
   */
  private async wakeDue(): Promise<void> {
    const { executions } = this.options;
    this.coldArmed = false;
    const ids = executions.takeColdDue(this.options.now().getTime(), COLD_DUE_BATCH);
    // Each tree read on its own (the store batches the reads of a turn): one that cannot be
    // read keeps its timer, tried again later, and holds back no other.
    const unread: string[] = [];
    let error: unknown = null;
    const read = (id: string) =>
      executions.ensure([id])?.catch((err: unknown) => {
        unread.push(id); // moved away: no longer cold here, nothing to set again
        if (!isWfxError(err, 'PARTITION_MOVING')) error ??= err;
      });
    await Promise.all(ids.map(read));
    if (error !== null)
      this.options.onError(error, `reading back executions whose timers are due (${unread.join(', ')})`);
    if (unread.length > 0) executions.untakeColdDue(unread, this.options.now().getTime() + COLD_DUE_RETRY_MS);
    if (!this.options.closed()) this.armColdDue();
  }

  /** Arms the timers of live execution `inst`'s waiting nodes and its live nodes' boundary events, as at a restart. */
  private armTimersOf(inst: Execution): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    for (const nid in inst.nodes) {
      const ni = inst.nodes[nid]!;
      if (ni.statusCd === STATUS.WAITING) this.recoveredWait(inst, ni);
      else if (ni.statusCd !== STATUS.ACTIVE) continue;
      this.armBoundaries(inst, ni.id);
    }
  }

  /**
   * Live execution `inst` leaves memory, at rest (no Active node, so no work under way): its
   * waits' and boundaries' timers are disarmed (the cold side's due heap holds the earliest)
   * and its streaming count dropped (a read back counts its log as streamed).
   */
  private evicted(inst: Execution): void {
    const id = inst.processInstanceId;
    const plan: PlannedEffect[] = [];
    for (const nid in inst.nodes) {
      const ni = inst.nodes[nid]!;
      if (ni.statusCd !== STATUS.WAITING) continue;
      plan.push({ kind: 'timer.delete', key: nodeKey(id, ni.id) });
      disarmBoundaries(this.state, this.flows, id, ni.id, plan);
    }
    this.carryOut(plan, null);
    this.logs.drop(id);
  }
}

/** Whether `records` start execution `id` by an execution trigger (crash tests only). */
function startsTriggered(records: readonly WfxRecord[], id: string): boolean {
  return records.some(
    (r) => r.type === 'instance.started' && r.instance.processInstanceId === id && r.instance.triggeredBy !== undefined,
  );
}

/**
 * Whether `records` end tool calls of the node that `order` asks a model turn for: a callAgent's
 * tool results are durable and its next turn is about to be asked (a crash test's point).
 */
function endsToolCalls(records: readonly WfxRecord[], order: WorkOrder): boolean {
  return records.some(
    (r) =>
      r.type === 'agent.updated' &&
      r.nodeInstanceId === order.nodeInstanceId &&
      r.instanceId === order.instanceId &&
      (r.ended?.length ?? 0) > 0,
  );
}
