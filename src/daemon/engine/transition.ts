/**
 * Long file: one engine step is one state machine. Launching, running nodes, carrying out their
 * outcomes, boundary events, joins and child executions share the step's in-flight state and its
 * invariant (nothing throws once a record is applied), so they are read together. What a node
 * decides lives in nodes/, what a durable step causes in effects.ts.
 */
import { evaluateCondition, ExpressionError } from '../../shared/expr/juel.js';
import { resolveDeep } from '../../shared/expr/template.js';
import { failureOfThrown, type NodeFailureCode, type PassedOnFailureCode } from '../../shared/flow/failure-codes.js';
import type { Edge, FlowGraph } from '../../shared/flow/graph.js';
import { WfxError } from '../../shared/errors.js';
import { extensibleCopy, ownEntry } from '../../shared/json-object.js';
import { describeDepthExcess, jsonDepthExcess } from '../../shared/json-shape.js';
import type { BoundaryEventNode, FlowDefinition, FlowNode } from '../../shared/flow/types.js';
import type { WfxRecord } from '../state/records.js';
import { startedInstance } from '../state/records/execution.js';
import { nodeRan } from '../state/records/nodes.js';
import { youngCopy } from '../state/object-shapes.js';
import { MEMORY_MAX_ENTRY_BYTES, memoryEntry, type MemoryEntry } from '../state/memory.js';
import {
  STATE,
  STATUS,
  type AgentState,
  type BufferedMessage,
  type PendingThrow,
  type StoredFile,
  type DomainAction,
  type Instance,
  type InstanceError,
  type NodeInstance,
  type WfxState,
} from '../state/state.js';
import { subscriptionsFor, type Subscription } from '../state/subscriptions.js';
import type {
  ChildStart,
  Delivery,
  MemoryWrite,
  NodeScope,
  Outcome,
  ResumeInput,
  WorkRequest,
} from './nodes/handler.js';
import { uuidv7 } from './ids.js';
import { nodeKey, type NodeKey } from './keys.js';
import { handlerOf } from './nodes/index.js';
import type { WorkResult } from './work/result.js';
import type { DomainSchemas } from '../jobs/schemas.js';
import { LiveCounts } from '../state/live-counts.js';
import { loopProgress } from '../state/loop-progress.js';
import { liveNodes, logSize } from '../state/sizes.js';
import { childrenFailure, overLimits, stepBytes, variablesFailure, type ExecutionLimits } from './limits.js';

/** The parameters of a new execution, as Transition.launch takes them. */
export type LaunchParams = Omit<
  Instance,
  | 'processInstanceId'
  | 'stateCd'
  | 'startTime'
  | 'endTime'
  | 'output'
  | 'error'
  | 'nodes'
  | 'nodeCount'
  | 'joins'
  | 'logs'
>;

/** What a transition needs from the engine: the state, each instance's flow, env values, ids. */
export interface EngineCore {
  readonly state: WfxState;
  /** The nodes an execution runs: its flow version's, or the body its `scope` names. */
  flowOf(inst: Instance): {
    readonly definition: FlowDefinition;
    readonly nodes: Readonly<Record<string, FlowNode>>;
    readonly graph: FlowGraph;
    readonly startId: string;
  };
  envOf(inst: Instance): Readonly<Record<string, string>>;
  newInstanceId(now: Date, parentInstanceId: string | null): string;
  /**
   * A start of a published flow resolved to its version. Throws PROCESS_NOT_FOUND,
   * PROCESS_NOT_PUBLISHED, VERSION_NOT_FOUND.
   */
  startParams(req: {
    organization: string;
    processId: string;
    environment: Instance['environment'];
    versionNumber?: string;
    correlationKey: string | null;
    data: Record<string, unknown>;
  }): LaunchParams;
  /** True while the work of node instance `key` (keys.ts) is under way (it must not be started again). */
  isWorking(key: NodeKey): boolean;
  /** How deep the variables, output and data a node sets may nest (json-shape.ts); deeper fails the node with DATA_TOO_DEEP. */
  readonly maxJsonDepth: number;
  /** Domain actions' schemas, compiled once (domainTask inputs, workers' outputs). */
  readonly schemas: DomainSchemas;
  /** What one execution, tree and organization may hold (limits.ts). */
  readonly limits: ExecutionLimits;
  /**
   * Whether a kept message is consumed only under a claim won in the database (daemons sharing
   * it, kept-claims.ts): a node that starts waiting then leaves it in `kept`, and waits.
   */
  readonly claimsKept: boolean;
  /**
   * Whether an event thrown is kept until the other daemons sharing the database have it
   * (thrown-outbox.ts): the step then writes it (`event.thrown`) and lists it in `thrown`.
   */
  readonly keepsThrown: boolean;
}

/** A node fails with `code` (not an API error: documented with the node failure codes in docs/flows.md). */
class NodeFailure extends Error {
  constructor(
    readonly code: NodeFailureCode,
    message: string,
  ) {
    super(message);
  }
}

/** Work a step asks for: carried out once the step is durable. */
export interface WorkOrder {
  readonly instanceId: string;
  readonly nodeInstanceId: string;
  readonly request: WorkRequest;
}

/** How deep subProcess children may nest (a flow that starts itself as a subprocess fails instead of growing for ever). */
export const MAX_CHILD_DEPTH = 32;

/** Node runs per transaction before the rest is left for a later one (fairness between executions). */
const RUNS_PER_TRANSACTION = 10_000;
/** Node instances one execution may create: a flow looping without a wait fails instead of running forever. */
export const MAX_NODE_INSTANCES = 100_000;

let lastAt = { ms: NaN, iso: '' };
/** `now.toISOString()`, made once per millisecond: under load a dozen steps share one. */
function isoAt(now: Date): string {
  const ms = now.getTime();
  if (ms !== lastAt.ms) lastAt = { ms, iso: now.toISOString() };
  return lastAt.iso;
}

const edgeKey = (e: Edge): string => `${e.from}>${e.path.join('.')}`;

/**
 * One engine step, run synchronously inside a store transaction: it carries out node outcomes
 * by emitting records (each applied to the state at once) until every token of every touched
 * execution waits, ends, or is left for a later step. It decides; it never does I/O: timers,
 * lifecycle events and archiving are derived from the records once they are durable.
 */
export class Transition {
  /** Executions this step changed. */
  readonly touched = new Set<string>();
  /** Executions with runnable nodes left over (the run budget ran out). */
  readonly deferred = new Set<string>();
  /** Work (HTTP calls, scripts) to start once this step is durable. */
  readonly work: WorkOrder[] = [];
  /** Events thrown in this step (delivered here already) and kept for the other daemons (EngineCore.keepsThrown). */
  readonly thrown: PendingThrow[] = [];
  /** Kept messages nodes started waiting for in this step, to claim (EngineCore.claimsKept). */
  readonly kept: string[] = [];
  /**
   * Nodes to run: an existing Active node instance (`nodeInstanceId`), or a token that just
   * reached `nodeId` and is not written yet: most nodes complete in the step that reaches
   * them, and are then written as one `node.ran` record instead of entered + completed.
   */
  private readonly queue: Array<{
    readonly instanceId: string;
    readonly nodeId: string;
    readonly nodeInstanceId: string | null;
  }> = [];
  /** Tokens queued but not written yet, per execution (they count toward MAX_NODE_INSTANCES). */
  private readonly pending = new Map<string, number>();
  private runs = 0;
  private maxRuns = RUNS_PER_TRANSACTION;
  /** The JSON size of the data this step's nodes set and started executions with (limits.ts, stepBytes). */
  private bytes = 0;
  private readonly maxBytes: number;
  /** Records emitted so far: a settle pass that emitted any may have woken a parent, so drain goes round again. */
  private emitted = 0;
  private readonly emit: (record: WfxRecord) => void;
  private readonly at: string;

  constructor(
    private readonly core: EngineCore,
    emit: (record: WfxRecord) => void,
    readonly now: Date,
  ) {
    this.emit = (record) => {
      this.emitted++;
      emit(record);
    };
    this.at = isoAt(now);
    this.maxBytes = stepBytes(core.limits);
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

  /** Starts an execution at its startEvent and runs it as far as it goes. */
  start(params: LaunchParams): Instance {
    const inst = this.launch(params);
    this.drain();
    return inst;
  }

  /** Resumes a waiting node with `input` (a task, an event, its timer). The caller checked it waits. */
  resume(inst: Instance, ni: NodeInstance, input: ResumeInput): void {
    this.wake(inst, ni, input);
    this.drain();
  }

  /**
   * A node's work (`request`) is done: resumes it if it still waits for that (it may have been
   * cancelled meanwhile).
   */
  workDone(inst: Instance, ni: NodeInstance, result: WorkResult, request?: WorkRequest): void {
    if (inst.stateCd !== STATE.RUNNING || ni.statusCd !== STATUS.ACTIVE) return;
    for (const line of result.logs ?? []) {
      this.emit({
        type: 'instance.logged',
        instanceId: inst.processInstanceId,
        entry: {
          nodeId: ni.nodeId,
          nodeName: ni.nodeName,
          nodeType: ni.nodeType,
          level: result.ok ? 'INFO' : 'WARN',
          message: line,
          timestamp: this.at,
        },
      });
    }
    this.resume(inst, ni, request ? { kind: 'work', result, request } : { kind: 'work', result });
  }

  /** A node's work cannot be handled (its result made the step throw): the node fails with `code`, if it is still Active. */
  failWork(inst: Instance, ni: NodeInstance, code: NodeFailureCode, message: string): void {
    if (inst.stateCd !== STATE.RUNNING || ni.statusCd !== STATUS.ACTIVE) return;
    this.touched.add(inst.processInstanceId);
    this.failNode(inst, ni, code, message);
    this.drain();
  }

  /**
   * A timer boundary event of a live node fired: with cancelActivity (the default) the node,
   * and any child under it, is cancelled; either way the boundary path runs.
   */
  fireBoundary(inst: Instance, ni: NodeInstance, boundaryId: string): void {
    if (
      inst.stateCd !== STATE.RUNNING ||
      (ni.statusCd !== STATUS.ACTIVE && ni.statusCd !== STATUS.WAITING) ||
      ni.fired?.includes(boundaryId)
    )
      return;
    this.touched.add(inst.processInstanceId);
    const b = this.core.flowOf(inst).nodes[boundaryId] as BoundaryEventNode;
    if (b.cancelActivity === false) {
      this.emit({
        type: 'boundary.fired',
        instanceId: inst.processInstanceId,
        nodeInstanceId: ni.id,
        boundaryId,
        at: this.at,
      });
    } else {
      this.leave(inst, ni, STATUS.CANCELLED, `cancelled by boundary event ${boundaryId} (timer ${b.duration})`);
    }
    this.createNode(inst, boundaryId);
    this.drain();
  }

  /** Runs the nodes of `inst` that are active but not yet run (after a restart, or a deferred step). */
  continue(inst: Instance): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    this.touched.add(inst.processInstanceId);
    // An execution that holds more than its limits allow (left so by an earlier version, or
    // by limits lowered since) fails here rather than run on.
    const over = overLimits(inst, this.core.limits, LiveCounts.of(this.core.state));
    if (over) {
      this.finish(inst, STATE.FAILED, over.message, { code: over.code, message: over.message, nodeId: null });
      this.drain();
      return;
    }
    for (const ni of Object.values(inst.nodes)) {
      if (ni.statusCd === STATUS.ACTIVE && !this.core.isWorking(nodeKey(inst.processInstanceId, ni.id))) {
        this.queue.push({ instanceId: inst.processInstanceId, nodeId: ni.nodeId, nodeInstanceId: ni.id });
      }
    }
    this.drain();
  }

  /**
   * Fails execution `id`, if it runs, with INTERNAL_ERROR and `message`: a restart's step that
   * could not run it threw before it changed anything (Engine.continueSafely).
   */
  setAside(id: string, message: string): void {
    const inst = this.core.state.instances[id];
    if (!inst || inst.stateCd !== STATE.RUNNING) return;
    this.touched.add(id);
    this.finish(inst, STATE.FAILED, message, { code: 'INTERNAL_ERROR', message, nodeId: null });
    this.drain();
  }

  /** Writes a new execution and queues its start node (run by the next drain). */
  private launch(params: LaunchParams, later = false): Instance {
    const id = this.core.newInstanceId(this.now, params.parentInstanceId);
    this.emit({
      type: 'instance.started',
      instance: startedInstance(params, id, this.at),
    });
    const inst = this.core.state.instances[id]!;
    this.touched.add(id);
    const startId = this.core.flowOf(inst).startId;
    if (!later) this.createNode(inst, startId);
    else {
      // Its start node written Active and run by a step of its own (deferred).
      this.emitEntered(inst, startId);
      this.deferred.add(id);
    }
    return inst;
  }

  /** Resumes a waiting node without draining (the caller drains). */
  private wake(waiting: Instance, waitingNode: NodeInstance, input: ResumeInput): void {
    // The live object (a caller's may be one a resume has replaced since), resumed from rest in
    // a copy (youngCopy: why). Not once this transition has touched it: its callers may still
    // hold the objects they changed.
    const live = this.core.state.instances[waiting.processInstanceId] ?? waiting;
    const inst = this.touched.has(live.processInstanceId) ? live : youngCopy(this.core.state, live);
    const ni = inst.nodes[waitingNode.id]!;
    this.touched.add(inst.processInstanceId);
    const node = this.nodeDef(inst, ni);
    const handler = handlerOf(node.type);
    const warnings: WfxRecord[] = [];
    const outcome = handler.resume
      ? this.checked(
          inst,
          this.guard(() => handler.resume!(node, this.scope(inst, ni.nodeId, warnings, ni), input)),
        )
      : ({ kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: ${node.type} does not wait` } as const);
    for (const w of warnings) this.emit(w);
    this.carryOut(inst, ni, this.realize(inst, ni.nodeId, outcome));
  }

  /** Cancels a running execution: every active or waiting node is cancelled. */
  cancel(inst: Instance, reason: string): void {
    this.touched.add(inst.processInstanceId);
    this.finish(inst, STATE.CANCELLED, reason);
  }

  /** Resumes every subscription in `subs` with the event's data. */
  deliver(subs: readonly Subscription[], data: Record<string, unknown>): void {
    this.wakeAll(subs, data);
    this.drain();
  }

  /**
   * Consumes kept message `id` for the node `sub` names, under the claim won for it
   * (kept-claims.ts). False, changing nothing, when the message is gone or that node no longer
   * waits for it.
   */
  consumeKept(id: string, sub: Subscription): boolean {
    const message = this.core.state.messages[id];
    const inst = this.core.state.instances[sub.instanceId];
    const ni = inst?.nodes[sub.nodeInstanceId];
    if (!message || !inst || !ni || inst.stateCd !== STATE.RUNNING || ni.statusCd !== STATUS.WAITING) return false;
    const wait = ni.wait;
    if (wait?.kind !== 'event') return false;
    const { messageRef: eventType, eventType: kind, correlationKey: key } = wait;
    if (!this.consumes(message, { organization: inst.organization, eventType, kind, key })) return false;
    this.emit({ type: 'message.removed', id });
    this.wake(inst, ni, { kind: 'event', data: message.data });
    this.drain();
    return true;
  }

  private wakeAll(subs: readonly Subscription[], data: Record<string, unknown>): void {
    for (const sub of subs) {
      const inst = this.core.state.instances[sub.instanceId];
      const ni = inst?.nodes[sub.nodeInstanceId];
      if (inst && ni && inst.stateCd === STATE.RUNNING && ni.statusCd === STATUS.WAITING)
        this.wake(inst, ni, { kind: 'event', data });
    }
  }

  // --- carrying out outcomes -------------------------------------------------------------

  private drain(): void {
    for (;;) {
      while (this.queue.length > 0) {
        const item = this.queue.shift()!;
        const inst = this.core.state.instances[item.instanceId];
        if (item.nodeInstanceId === null)
          this.pending.set(item.instanceId, (this.pending.get(item.instanceId) ?? 1) - 1);
        if (!inst || inst.stateCd !== STATE.RUNNING) continue;
        if (logSize(inst) > this.core.limits.logBytes) {
          const message = `the execution's log passed the log-size limit (${this.core.limits.logBytes} bytes of JSON)`;
          this.finish(inst, STATE.FAILED, message, { code: 'LOG_LIMIT_EXCEEDED', message, nodeId: item.nodeId });
          continue;
        }
        if (this.spent) {
          // Out of budget: a token not written yet is written as an Active node, run by a later step.
          if (item.nodeInstanceId === null) this.emitEntered(inst, item.nodeId);
          this.deferred.add(item.instanceId);
          continue;
        }
        if (item.nodeInstanceId === null) {
          this.runs++;
          this.runNew(inst, item.nodeId);
          continue;
        }
        const ni = inst.nodes[item.nodeInstanceId];
        if (!ni || ni.statusCd !== STATUS.ACTIVE) continue;
        this.runs++;
        this.run(inst, ni);
      }
      let progressed = false;
      const before = this.emitted;
      for (const iid of this.touched) {
        const inst = this.core.state.instances[iid];
        if (inst && !this.deferred.has(iid) && this.settle(inst)) progressed = true;
      }
      // Settling may have finished a child, which resumed its parent (queued its next nodes, or
      // left it with nothing live): go round until a pass changes nothing.
      if (!progressed && this.queue.length === 0 && this.emitted === before) return;
    }
  }

  /** Runs an existing Active node instance (after a restart, or a deferred step). */
  private run(inst: Instance, ni: NodeInstance): void {
    const node = this.nodeDef(inst, ni);
    const handler = handlerOf(node.type);
    const warnings: WfxRecord[] = [];
    const outcome = this.checked(
      inst,
      this.guard(() => handler.run(node, this.scope(inst, ni.nodeId, warnings, ni))),
    );
    for (const w of warnings) this.emit(w);
    this.carryOut(inst, ni, this.realize(inst, ni.nodeId, outcome));
  }

  /** Runs a token that just reached `nodeId`: written as node.ran when it completes at once. */
  private runNew(inst: Instance, nodeId: string): void {
    const node = this.core.flowOf(inst).nodes[nodeId]!;
    const handler = handlerOf(node.type);
    const warnings: WfxRecord[] = [];
    const outcome = this.realize(
      inst,
      nodeId,
      this.checked(
        inst,
        this.guard(() => handler.run(node, this.scope(inst, nodeId, warnings, null))),
      ),
    );
    // A completion with usage needs node.completed (node.ran has no usage): only work nodes have any.
    if (outcome.kind === 'end' || (outcome.kind === 'next' && outcome.usage === undefined)) {
      const id = `n${inst.nodeCount + 1}`;
      const next = outcome.kind === 'next' ? outcome : null;
      if (next?.memory) this.emitMemory(inst, next.memory);
      this.emit(nodeRan(inst.processInstanceId, id, nodeId, this.at, next?.variables, next?.output));
      for (const w of warnings) this.emit(w);
      this.afterCompleted(inst, inst.nodes[id]!, outcome);
      return;
    }
    const ni = this.emitEntered(inst, nodeId);
    for (const w of warnings) this.emit(w);
    this.carryOut(inst, ni, outcome);
  }

  /** A node's memory writes, in its execution's organization: right before its completion record, in the same step. */
  private emitMemory(inst: Instance, writes: readonly MemoryWrite[]): void {
    for (const w of writes)
      this.emit({
        type: 'memory.written',
        organization: inst.organization,
        namespace: w.namespace,
        key: w.key,
        entry: w.entry,
      });
  }

  private emitEntered(inst: Instance, nodeId: string): NodeInstance {
    const id = `n${inst.nodeCount + 1}`;
    this.emit({ type: 'node.entered', instanceId: inst.processInstanceId, nodeInstanceId: id, nodeId, at: this.at });
    return inst.nodes[id]!;
  }

  /**
   * A handler's exception becomes a node failure: an expression error, a node failure code
   * thrown on purpose, or a bug (INTERNAL_ERROR: an ENOENT or a TypeError never reaches a flow).
   */
  private guard(fn: () => Outcome): Outcome {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ExpressionError) return { kind: 'fail', code: 'EXPRESSION_ERROR', message: err.message };
      return { kind: 'fail', ...failureOfThrown(err) };
    }
  }

  /**
   * The outcome, or a DATA_TOO_DEEP failure when what it would write (variables, output, data it
   * delivers or starts a child with) nests deeper than maxJsonDepth: checked before any record
   * of it is emitted, so nothing recursive over the state (the journal's JSON.stringify) can
   * overflow after a record is applied. Variables grow deeper inside a flow (a setVariable that
   * nests a reference to itself, in a loop).
   */
  private checked(inst: Instance, outcome: Outcome): Outcome {
    // Sizes first: their walk stops at the limit, so the depth walk after it is bounded too.
    const limited = this.limited(inst, outcome);
    return limited === outcome ? this.deepChecked(outcome) : limited;
  }

  /**
   * The outcome, or the failure of a limit it would pass (limits.ts): the variables it sets,
   * the executions it starts (their number, the data they carry), checked before any record of
   * it is emitted. What passes counts toward the step's bytes.
   */
  private limited(inst: Instance, outcome: Outcome): Outcome {
    const limits = this.core.limits;
    const variables = 'variables' in outcome ? outcome.variables : undefined;
    if (variables) {
      const failure = variablesFailure(inst, variables, limits);
      if (typeof failure !== 'number') return failure;
      this.bytes += failure;
    }
    if (outcome.kind !== 'call' && (outcome.kind !== 'wait' || outcome.start === undefined)) return outcome;
    const starts = outcome.kind === 'wait' ? outcome.start! : [outcome.start];
    if (starts.length === 0) return outcome;
    const failure = childrenFailure(inst, starts, outcome.kind === 'wait', {
      limits,
      counts: LiveCounts.of(this.core.state),
      room: this.maxBytes,
    });
    if (typeof failure !== 'number') return failure;
    this.bytes += failure;
    return outcome;
  }

  /** The outcome, or DATA_TOO_DEEP when what it writes nests deeper than maxJsonDepth (see checked). */
  private deepChecked(outcome: Outcome): Outcome {
    const max = this.core.maxJsonDepth;
    const fail = (value: unknown, what: string): Outcome | null => {
      const excess = jsonDepthExcess(value, max);
      return excess === null
        ? null
        : { kind: 'fail', code: 'DATA_TOO_DEEP', message: `${what} ${describeDepthExcess(excess)}` };
    };
    switch (outcome.kind) {
      case 'next':
        return (
          (outcome.variables && fail(outcome.variables, 'the variables the node sets are')) ??
          (outcome.output && fail(outcome.output, 'the output the node sets is')) ??
          (outcome.deliver && fail(outcome.deliver.data, 'the data the node sends is')) ??
          (outcome.memory && memoryFailure(outcome.memory, max)) ??
          outcome
        );
      case 'wait':
        return (
          (outcome.variables && fail(outcome.variables, 'the variables the node sets are')) ??
          outcome.start?.reduce<Outcome | null>(
            (found, child) => found ?? fail(child.variables, 'the variables of the execution the node starts are'),
            null,
          ) ??
          outcome
        );
      case 'call':
        return fail(outcome.start.variables, 'the data of the execution the node starts is') ?? outcome;
      case 'cancel':
      case 'fail':
        return (outcome.variables && fail(outcome.variables, 'the variables the node sets are')) ?? outcome;
      default:
        return outcome;
    }
  }

  /**
   * A `call` outcome starts the other execution now and becomes the node's completion (or
   * its failure when the flow cannot start); every other outcome is carried out as it is.
   */
  private realize(inst: Instance, nodeId: string, outcome: Outcome): Outcome {
    if (outcome.kind !== 'call') return outcome;
    try {
      // Run later, in a step of its own: a flow that calls itself cannot spread through one step.
      const called = this.launch(this.childParams(inst, nodeId, outcome.start, null), true);
      return { kind: 'next', variables: { [outcome.variable]: called.processInstanceId } };
    } catch (err) {
      if (err instanceof WfxError || err instanceof NodeFailure) return { kind: 'fail', ...failureOfThrown(err) };
      throw err;
    }
  }

  /** What a child (or called) execution of `inst` starts with. Throws WfxError when a named flow cannot start. */
  private childParams(inst: Instance, nodeId: string, start: ChildStart, parent: NodeInstance | null): LaunchParams {
    if (parent) {
      let depth = 1;
      for (let p = inst; p.parentInstanceId !== null && p.parentNodeInstanceId !== undefined; depth++) {
        const up = this.core.state.instances[p.parentInstanceId];
        if (!up) break;
        p = up;
      }
      if (depth > MAX_CHILD_DEPTH)
        throw new NodeFailure(
          'CHILD_DEPTH_EXCEEDED',
          `child executions nest more than ${MAX_CHILD_DEPTH} deep; does the flow start itself?`,
        );
    }
    // Executions started by callProcess carry how deep such calls chain (children inherit it).
    const callDepth = parent ? inst.callDepth : (inst.callDepth ?? 0) + 1;
    if (callDepth !== undefined && callDepth > MAX_CHILD_DEPTH) {
      throw new NodeFailure(
        'CHILD_DEPTH_EXCEEDED',
        `callProcess chains more than ${MAX_CHILD_DEPTH} executions deep; does the flow call itself?`,
      );
    }
    const link = {
      ...(parent
        ? { parentInstanceId: inst.processInstanceId, parentNodeInstanceId: parent.id }
        : { parentInstanceId: null }),
      ...(callDepth !== undefined && { callDepth }),
      root: inst.root ?? inst.processInstanceId,
    };
    const iteration = start.iteration === undefined ? {} : { iteration: start.iteration };
    const correlationKey = start.correlationKey === undefined ? inst.correlationKey : start.correlationKey;
    if (start.processId === undefined) {
      // The node's own body: same flow and version, one level deeper.
      return {
        processId: inst.processId,
        processName: inst.processName,
        processVersion: inst.processVersion,
        organization: inst.organization,
        environment: inst.environment,
        correlationKey,
        ...link,
        scope: [...(inst.scope ?? []), nodeId],
        ...iteration,
        variables: start.variables,
      };
    }
    let params: LaunchParams;
    try {
      params = this.core.startParams({
        organization: inst.organization,
        processId: start.processId,
        environment: inst.environment,
        ...(start.versionNumber !== undefined && { versionNumber: start.versionNumber }),
        correlationKey,
        data: start.variables,
      });
    } catch (err) {
      // Start data that does not match the flow's inputs: the node's failure, in the catalogue's words.
      if (err instanceof WfxError && err.code === 'VALIDATION_ERROR')
        throw new NodeFailure('INPUT_INVALID', err.message);
      throw err;
    }
    return extensibleCopy(
      params,
      link,
      iteration,
      start.toolCallId === undefined ? {} : { toolCallId: start.toolCallId },
    );
  }

  private carryOut(inst: Instance, ni: NodeInstance, outcome: Outcome): void {
    const base = { instanceId: inst.processInstanceId, nodeInstanceId: ni.id, at: this.at };
    // A callAgent's turn is recorded before what it leads to, in the same step.
    const agent = 'agent' in outcome ? outcome.agent : undefined;
    if (agent) this.emit({ type: 'agent.updated', ...base, ...agent });
    switch (outcome.kind) {
      case 'next':
        if (outcome.memory) this.emitMemory(inst, outcome.memory);
        for (const file of outcome.files ?? []) this.emit({ type: 'file.stored', file });
        this.emit({
          type: 'node.completed',
          ...base,
          ...(outcome.variables && { variables: outcome.variables }),
          ...(outcome.output && { output: outcome.output }),
          ...(outcome.usage && { usage: outcome.usage }),
        });
        this.afterCompleted(inst, ni, outcome);
        return;
      case 'end':
        this.emit({ type: 'node.completed', ...base });
        this.afterCompleted(inst, ni, outcome);
        return;
      case 'wait': {
        // A loop going on writes its progress, not its whole wait again (loop-progress.ts).
        const before = ni.wait;
        const progress =
          before?.kind === 'loop' && outcome.wait.kind === 'loop'
            ? loopProgress(before.state, outcome.wait.state, outcome.variables)
            : null;
        if (progress) this.emit({ type: 'loop.progressed', ...base, ...progress });
        else
          this.emit({
            type: 'node.waiting',
            ...base,
            wait: outcome.wait,
            ...(outcome.variables && { variables: outcome.variables }),
          });
        const wait = outcome.wait;
        if (wait.kind === 'event') {
          const kept = this.keptMessage(inst.organization, wait.messageRef, wait.eventType, wait.correlationKey);
          if (kept && this.core.claimsKept) this.kept.push(kept.id);
          else if (kept) {
            this.emit({ type: 'message.removed', id: kept.id });
            this.wake(inst, ni, { kind: 'event', data: kept.data });
          }
        }
        for (const start of outcome.start ?? []) {
          if (ni.statusCd !== STATUS.WAITING || inst.stateCd !== STATE.RUNNING) return;
          let params: LaunchParams;
          try {
            params = this.childParams(inst, ni.nodeId, start, ni);
          } catch (err) {
            if (!(err instanceof WfxError || err instanceof NodeFailure)) throw err;
            const failure = failureOfThrown(err);
            this.failNode(inst, ni, failure.code, failure.message);
            return;
          }
          this.launch(params);
        }
        return;
      }
      case 'work':
        if (ni.statusCd === STATUS.WAITING) this.emit({ type: 'node.working', ...base });
        this.work.push({ instanceId: inst.processInstanceId, nodeInstanceId: ni.id, request: outcome.work });
        return;
      case 'call':
        this.carryOut(inst, ni, this.realize(inst, ni.nodeId, outcome));
        return;
      case 'fail':
        this.failNode(inst, ni, outcome.code, outcome.message, outcome.variables);
        return;
      case 'cancel':
        this.leave(inst, ni, STATUS.CANCELLED, outcome.reason, outcome.variables);
        if (!this.follow(inst, ni, 'errorFlow')) this.finish(inst, STATE.CANCELLED, outcome.reason);
        return;
      case 'timeout':
        this.leave(inst, ni, STATUS.TIMED_OUT, outcome.reason);
        if (!this.follow(inst, ni, 'timeoutFlow')) {
          this.finish(inst, STATE.FAILED, outcome.reason, {
            code: 'TIMEOUT' satisfies NodeFailureCode,
            message: outcome.reason,
            nodeId: ni.nodeId,
          });
        }
        return;
    }
  }

  /**
   * The failure rule: the node fails; an error boundary event attached to it (matching the
   * code) takes over, else its errorFlow, else the execution fails with the error. A path
   * that takes over gets the error as the variable `error`.
   */
  private failNode(
    inst: Instance,
    ni: NodeInstance,
    code: NodeFailureCode | PassedOnFailureCode,
    message: string,
    variables?: Record<string, unknown>,
  ): void {
    const error = { code, message, nodeId: ni.nodeId };
    const { nodes, graph } = this.core.flowOf(inst);
    const boundary = graph.boundaries(ni.nodeId).find((id) => {
      const b = nodes[id] as BoundaryEventNode;
      return b.event === 'error' && (b.errorCode === undefined || b.errorCode === code);
    });
    const handled = boundary !== undefined || graph.outgoing(ni.nodeId).some((e) => e.kind === 'errorFlow');
    const set = handled ? extensibleCopy(variables ?? {}, { error }) : variables;
    this.leave(inst, ni, STATUS.FAILED, `${code}: ${message}`, set);
    if (boundary !== undefined) this.createNode(inst, boundary);
    else if (!this.follow(inst, ni, 'errorFlow')) this.finish(inst, STATE.FAILED, message, error);
  }

  /**
   * A node stops without completing (failed, cancelled, timed out): its child executions
   * still running are cancelled with it, and work under way is abandoned (the engine aborts it).
   */
  private leave(
    inst: Instance,
    ni: NodeInstance,
    statusCd: 3 | 4 | 5,
    reason: string,
    variables?: Record<string, unknown>,
  ): void {
    this.emit({
      type: 'node.left',
      instanceId: inst.processInstanceId,
      nodeInstanceId: ni.id,
      statusCd,
      at: this.at,
      reason,
      ...(variables && { variables }),
    });
    for (const childId of ni.children ?? []) {
      const child = this.core.state.instances[childId];
      if (child && child.stateCd === STATE.RUNNING) {
        this.touched.add(childId);
        this.finish(child, STATE.CANCELLED, `its parent node ${ni.nodeId} of ${inst.processInstanceId} stopped`);
      }
    }
  }

  /** After a node completed: deliver what it throws and move on, or end its token. */
  private afterCompleted(inst: Instance, ni: NodeInstance, outcome: Extract<Outcome, { kind: 'next' | 'end' }>): void {
    if (outcome.kind === 'end') {
      if (outcome.terminate) this.finish(inst, STATE.COMPLETED, `terminated by ${ni.nodeId}`);
      return;
    }
    if (outcome.deliver) this.throwEvent(inst, outcome.deliver);
    this.route(inst, ni, outcome.to);
  }

  /** Moves the token along the edges to `to` (default: every `next`). */
  private route(inst: Instance, ni: NodeInstance, to: readonly string[] | undefined): void {
    const { ways, next } = this.core.flowOf(inst).graph.routes(ni.nodeId);
    if (to === undefined) {
      for (const edge of next) this.enter(inst, edge);
      return;
    }
    for (const target of to.length > 1 ? new Set(to) : to)
      this.enter(
        inst,
        ways.find((e) => e.to === target)!,
      );
  }

  /** Follows the node's `errorFlow` or `timeoutFlow`, if it has one. */
  private follow(inst: Instance, ni: NodeInstance, kind: 'errorFlow' | 'timeoutFlow'): boolean {
    const edge = this.core
      .flowOf(inst)
      .graph.outgoing(ni.nodeId)
      .find((e) => e.kind === kind);
    if (!edge) return false;
    this.enter(inst, edge);
    return true;
  }

  /** A token arrives at `edge.to`: a converging parallel or inclusive gateway joins first. */
  private enter(inst: Instance, edge: Edge): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    const { nodes, graph } = this.core.flowOf(inst);
    const type = nodes[edge.to]!.type;
    if ((type === 'parallelGateway' || type === 'inclusiveGateway') && graph.incoming(edge.to).length > 1) {
      const arrivals = extensibleCopy(inst.joins[edge.to] ?? {});
      arrivals[edgeKey(edge)] = (arrivals[edgeKey(edge)] ?? 0) + 1;
      this.emit({ type: 'join.updated', instanceId: inst.processInstanceId, nodeId: edge.to, arrivals });
      if (type === 'parallelGateway') this.fireParallel(inst, edge.to);
      return; // an inclusive join fires in settle(), once no token can still reach it
    }
    this.createNode(inst, edge.to);
  }

  /** A parallel join fires once a token has arrived on every incoming connection. */
  private fireParallel(inst: Instance, gatewayId: string): void {
    const incoming = this.core.flowOf(inst).graph.incoming(gatewayId);
    const arrivals = inst.joins[gatewayId] ?? {};
    if (!incoming.every((e) => (arrivals[edgeKey(e)] ?? 0) > 0)) return;
    const left: Record<string, number> = {};
    for (const [key, n] of Object.entries(arrivals)) if (n > 1) left[key] = n - 1;
    this.emit({ type: 'join.updated', instanceId: inst.processInstanceId, nodeId: gatewayId, arrivals: left });
    this.createNode(inst, gatewayId);
  }

  /** Queues a token that reached `nodeId`; it is written when it runs (see `queue`). */
  private createNode(inst: Instance, nodeId: string): void {
    const pending = this.pending.get(inst.processInstanceId) ?? 0;
    if (inst.nodeCount + pending >= MAX_NODE_INSTANCES) {
      this.finish(inst, STATE.FAILED, 'step limit', {
        code: 'STEP_LIMIT_EXCEEDED' satisfies NodeFailureCode,
        message: `the execution created ${MAX_NODE_INSTANCES} node instances; does the flow loop without waiting?`,
        nodeId,
      });
      return;
    }
    const branches = this.core.limits.branches;
    if (liveNodes(inst) + pending >= branches) {
      const message = `the execution would have more than ${branches} active or waiting nodes at once (the branches limit)`;
      this.finish(inst, STATE.FAILED, message, { code: 'BRANCH_LIMIT_EXCEEDED', message, nodeId });
      return;
    }
    this.pending.set(inst.processInstanceId, pending + 1);
    this.queue.push({ instanceId: inst.processInstanceId, nodeId, nodeInstanceId: null });
  }

  /**
   * After the queue drains: fires inclusive joins no token can reach any more, and finishes an
   * execution with no active or waiting node left. Returns true when it created work.
   */
  private settle(inst: Instance): boolean {
    if (inst.stateCd !== STATE.RUNNING) return false;
    // Tokens queued and not written yet (a child started while settling its sibling) are live too.
    if ((this.pending.get(inst.processInstanceId) ?? 0) > 0) return false;
    const { nodes, graph } = this.core.flowOf(inst);
    const live = Object.values(inst.nodes).filter((n) => n.statusCd === STATUS.ACTIVE || n.statusCd === STATUS.WAITING);
    for (const [gatewayId, arrivals] of Object.entries(inst.joins)) {
      if (nodes[gatewayId]?.type !== 'inclusiveGateway' || Object.keys(arrivals).length === 0) continue;
      const tokensAt = [...live.map((n) => n.nodeId), ...Object.keys(inst.joins).filter((g) => g !== gatewayId)];
      if (tokensAt.some((at) => at === gatewayId || graph.canReach(at, gatewayId))) continue;
      this.emit({ type: 'join.updated', instanceId: inst.processInstanceId, nodeId: gatewayId, arrivals: {} });
      this.createNode(inst, gatewayId);
      return true;
    }
    if (live.length > 0) return false;
    const stuck = Object.keys(inst.joins)[0];
    if (stuck !== undefined) {
      const message = `gateway ${stuck} waits for tokens that can no longer arrive`;
      this.finish(inst, STATE.FAILED, message, {
        code: 'JOIN_DEADLOCK' satisfies NodeFailureCode,
        message,
        nodeId: stuck,
      });
    } else {
      this.finish(inst, STATE.COMPLETED, 'every token reached an end');
    }
    return false;
  }

  /**
   * Ends the execution: every other active or waiting node is cancelled (their children
   * too). A child execution then resumes the parent node waiting for it.
   */
  private finish(inst: Instance, stateCd: 1 | 2 | 3, reason: string, error?: InstanceError): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    for (const n of Object.values(inst.nodes)) {
      if (n.statusCd === STATUS.ACTIVE || n.statusCd === STATUS.WAITING) {
        this.leave(
          inst,
          n,
          STATUS.CANCELLED,
          stateCd === STATE.CANCELLED ? reason : `the execution ${stateCd === STATE.FAILED ? 'failed' : 'ended'}`,
        );
      }
    }
    this.emit({
      type: 'instance.finished',
      instanceId: inst.processInstanceId,
      stateCd,
      at: this.at,
      ...(error && { error }),
    });
    if (inst.parentInstanceId === null || inst.parentNodeInstanceId === undefined) return;
    const parent = this.core.state.instances[inst.parentInstanceId];
    const pni = parent?.nodes[inst.parentNodeInstanceId];
    if (parent && pni && parent.stateCd === STATE.RUNNING && pni.statusCd === STATUS.WAITING)
      this.wake(parent, pni, { kind: 'child', child: inst });
  }

  /** intermediateThrowEvent: resumes matching subscriptions of the organization now. */
  private throwEvent(inst: Instance, d: Delivery): void {
    this.wakeAll(subscriptionsFor(this.core.state, inst.organization, d.eventType, d.correlationKey), d.data);
    if (!this.core.keepsThrown) return;
    const event = {
      id: uuidv7(this.now),
      instanceId: inst.processInstanceId,
      organization: inst.organization,
      ...d,
      thrownAt: this.at,
    };
    this.emit({ type: 'event.thrown', event });
    this.thrown.push(event);
  }

  /** The oldest kept message a new subscription consumes, if any. */
  private keptMessage(
    organization: string,
    eventType: string,
    kind: 'message' | 'signal',
    key: string | null,
  ): BufferedMessage | undefined {
    for (const m of Object.values(this.core.state.messages))
      if (this.consumes(m, { organization, eventType, kind, key })) return m;
    return undefined;
  }

  /** Whether a new subscription in `organization` for `eventType` consumes kept message `m`. */
  private consumes(
    m: BufferedMessage,
    wait: { organization: string; eventType: string; kind: 'message' | 'signal'; key: string | null },
  ): boolean {
    if (m.organization !== wait.organization || m.eventType !== wait.eventType || m.expiresAt <= this.at) return false;
    return wait.kind === 'signal' || m.correlationKey === wait.key;
  }

  private nodeDef(inst: Instance, ni: NodeInstance): FlowNode {
    return this.core.flowOf(inst).nodes[ni.nodeId]!;
  }

  /** The scope a handler runs in; missing-reference WARN entries go to `warnings`, written after the node's own record. */
  private scope(inst: Instance, nodeId: string, warnings: WfxRecord[], ni: NodeInstance | null): NodeScope {
    return new Scope(
      inst,
      nodeId,
      this.now,
      this.at,
      ni?.wait ?? null,
      ni?.agent ?? null,
      this.core.envOf(inst),
      this.core.flowOf(inst).nodes[nodeId]!,
      warnings,
      this.core.state,
      this.core.schemas,
      this.core.limits.loopIterations,
    );
  }
}

/**
 * A memory write that would nest deeper than `max` (DATA_TOO_DEEP) or hold more than an entry
 * may (MEMORY_TOO_LARGE), as the node's failure; null when every write may go. Depth first:
 * measuring the size serializes the value, which must not recurse too deep.
 */
function memoryFailure(writes: readonly MemoryWrite[], max: number): Outcome | null {
  for (const w of writes) {
    if (!w.entry) continue;
    const excess = jsonDepthExcess(w.entry.value, max);
    if (excess !== null)
      return {
        kind: 'fail',
        code: 'DATA_TOO_DEEP',
        message: `the value for memory ${w.namespace}/${w.key} is ${describeDepthExcess(excess)}`,
      };
    const bytes = Buffer.byteLength(JSON.stringify(w.entry.value) ?? 'null');
    if (bytes > MEMORY_MAX_ENTRY_BYTES)
      return {
        kind: 'fail',
        code: 'MEMORY_TOO_LARGE',
        message: `the value for memory ${w.namespace}/${w.key} is ${bytes} bytes of JSON, more than ${MEMORY_MAX_ENTRY_BYTES}`,
      };
  }
  return null;
}

/** What a node handler sees of its execution: one object per run, its methods on the prototype. */
class Scope implements NodeScope {
  constructor(
    readonly instance: Instance,
    readonly nodeId: string,
    readonly now: Date,
    private readonly at: string,
    readonly wait: NodeInstance['wait'],
    readonly agent: AgentState | null,
    private readonly env: Readonly<Record<string, string>>,
    private readonly node: FlowNode,
    /** WARN lines for missing references, written after the node's own record. */
    private readonly warnings: WfxRecord[],
    private readonly state: WfxState,
    private readonly schemas: DomainSchemas,
    readonly maxLoopIterations: number,
  ) {}

  domainAction(domain: string, action: string): DomainAction | undefined {
    const org = ownEntry(this.state.domains, this.instance.organization);
    const d = org && ownEntry(org, domain);
    return d && ownEntry(d.actions, action);
  }

  schemaProblem(schema: Record<string, unknown>, value: unknown, what: string): string | null {
    return this.schemas.problem(schema, value, what);
  }

  memory(namespace: string, key: string): MemoryEntry | undefined {
    return memoryEntry(this.state.memory, { organization: this.instance.organization, namespace, key }, this.now);
  }

  file(fileId: string): StoredFile | undefined {
    const file = Object.hasOwn(this.state.files, fileId) ? this.state.files[fileId] : undefined;
    return file?.organization === this.instance.organization ? file : undefined;
  }

  publishedFlow(processId: string): { readonly version: string; readonly definition: FlowDefinition } | undefined {
    const flow = ownEntry(this.state.flows, processId);
    if (!flow || flow.organization !== this.instance.organization) return undefined;
    const version = flow.active[this.instance.environment];
    const published = version === undefined ? undefined : flow.versions[version];
    return published && { version: published.version, definition: published.definition };
  }

  memoryEntries(namespace: string): Array<[string, MemoryEntry]> {
    const orgName = this.instance.organization;
    const store = this.state.memory;
    const org = Object.hasOwn(store, orgName) ? store[orgName]! : {};
    const ns = Object.hasOwn(org, namespace) ? org[namespace]! : {};
    const now = this.now.getTime();
    return Object.entries(ns).filter(([, e]) => e.expiresAt === null || Date.parse(e.expiresAt) > now);
  }

  resolveChecked(
    value: unknown,
    fallback?: Readonly<Record<string, unknown>>,
  ): { readonly value: unknown; readonly missing: readonly string[] } {
    const vars = fallback ? extensibleCopy(fallback, this.instance.variables) : this.instance.variables;
    return resolveDeep(value, { vars, env: this.env });
  }

  resolve(value: unknown, fallback?: Readonly<Record<string, unknown>>): unknown {
    const r = this.resolveChecked(value, fallback);
    for (const ref of r.missing) {
      this.warnings.push({
        type: 'instance.logged',
        instanceId: this.instance.processInstanceId,
        entry: {
          nodeId: this.nodeId,
          nodeName: this.node.name ?? this.nodeId,
          nodeType: this.node.type,
          level: 'WARN',
          message: `reference {${ref}} is missing; it resolved to an empty string`,
          timestamp: this.at,
        },
      });
    }
    return r.value;
  }

  condition(text: string, variables: Readonly<Record<string, unknown>> = this.instance.variables): boolean {
    return evaluateCondition(text, { env: this.env, ...variables });
  }
}
