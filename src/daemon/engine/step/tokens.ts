/**
 * How tokens move: the queue run until every token waits or ends, and the moves that follow a
 * node (routes, joins, failures, an execution's end), over the step's bookkeeping (ledger.ts).
 * Running a node and carrying out what it decided is the subclass's (step.ts); every part of
 * the step shares this in-flight state and its invariant: nothing throws once a record is applied.
 */
import type { NodeFailureCode, PassedOnFailureCode } from '../../../shared/flow/failure-codes.js';
import type { Edge } from '../../../shared/flow/graph.js';
import { resolveSearch, updatedSearch } from '../../../shared/flow/search-attributes.js';
import type { BoundaryEventNode } from '../../../shared/flow/types.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import { startedInstance, type ExecutionStart } from '../../state/records/execution.js';
import { LiveCounts } from '../../state/live-counts.js';
import { liveNodes, logSize } from '../../state/sizes.js';
import {
  STATE,
  STATUS,
  type Execution,
  type ExecutionError,
  type NodeInstance,
  type Writable,
} from '../../state/state.js';
import type { Delivery, Outcome, ResumeInput } from '../nodes/handler.js';
import type { FlowScope, LaunchParams } from './context.js';
import { StepLedger } from './ledger.js';
import { fireExecutionTriggers } from './execution-triggers.js';
import { passSlotOn } from './concurrency.js';
import { execution } from '../../state/executions.js';

/** Node instances one execution may create: a flow looping without a wait fails instead of running forever. */
export const MAX_NODE_INSTANCES = 100_000;

/** The key of a join's arrivals by connection `e` (`Execution.joins`): `<from>><path in the node>`. Pure. */
export const edgeKey = (e: Edge): string => `${e.from}>${e.path.join('.')}`;

/** How tokens move (see the top of this file), over the step's bookkeeping (ledger.ts). */
export abstract class Tokens extends StepLedger {
  /** Runs an existing Active node instance. */
  protected abstract run(inst: Execution, ni: NodeInstance): void;
  /** Runs a token that just reached `nodeId`. */
  protected abstract runNew(inst: Execution, nodeId: string): void;
  /** Resumes a waiting node without draining (the caller drains). */
  abstract wake(waiting: Execution, waitingNode: NodeInstance, input: ResumeInput): void;
  /** intermediateThrowEvent: resumes matching subscriptions of the organization now. */
  protected abstract throwEvent(inst: Execution, d: Delivery): void;
  /** Told each execution the step reaches past the trees its input names (Step.reach). */
  abstract reach: (instanceId: string) => void;

  /** The record of a new execution: with its trace while tracing is on. */
  private started(params: LaunchParams, id: string): ExecutionStart {
    const started = startedInstance(params, id, this.at);
    const tracing = this.ctx.tracing;
    if (tracing !== null)
      (started as Writable<ExecutionStart>).trace = tracing.forStart(
        this.state,
        params.parentInstanceId,
        params.parentNodeInstanceId,
        params.trace,
      );
    return started;
  }

  /**
   * Writes a new execution and queues its start node (`later`: written Active, run by a step of
   * its own). `near`: an execution whose partition the new one's id is drawn in (default: its parent's).
   */
  launch(params: LaunchParams, later = false, near?: string): Execution {
    const id = this.ctx.newInstanceId(this.now, near ?? params.parentInstanceId);
    this.emit({ type: 'instance.started', instance: this.started(params, id) });
    const inst = execution(this.state, id)!;
    this.touched.add(id);
    const startId = this.ctx.flowOf(inst).startId;
    if (!later) this.createNode(inst, startId);
    else {
      // Its start node written Active and run by a step of its own (deferred).
      this.emitEntered(inst, startId);
      this.defer(id);
    }
    return inst;
  }

  /**
   * Writes a new execution queued for a slot of its flow's concurrency limit (concurrency.ts):
   * its start event waits, a `queue` wait, until an ending holder gives it the slot.
   */
  launchQueued(params: LaunchParams, near?: string): Execution {
    const id = this.ctx.newInstanceId(this.now, near ?? null);
    this.emit({ type: 'instance.started', instance: this.started(params, id) });
    const inst = execution(this.state, id)!;
    this.touched.add(id);
    const ni = this.emitEntered(inst, this.ctx.flowOf(inst).startId);
    const wait = { kind: 'queue', dueAt: null } as const;
    this.emit({ type: 'node.waiting', instanceId: id, nodeInstanceId: ni.id, wait, at: this.at });
    return inst;
  }

  /** Writes a new execution whose first token is at `nodeId` (a replay), not at its start event. */
  launchAt(params: LaunchParams, nodeId: string): Execution {
    const id = this.ctx.newInstanceId(this.now, params.parentInstanceId);
    this.emit({ type: 'instance.started', instance: this.started(params, id) });
    const inst = execution(this.state, id)!;
    this.touched.add(id);
    this.createNode(inst, nodeId);
    return inst;
  }

  /** Runs the queue, then settles every touched execution, until a pass changes nothing. */
  drain(): void {
    for (;;) {
      while (this.queue.length > 0) {
        const item = this.queue.shift()!;
        const inst = execution(this.state, item.instanceId);
        if (item.nodeInstanceId === null)
          this.pending.set(item.instanceId, (this.pending.get(item.instanceId) ?? 1) - 1);
        if (!inst || inst.stateCd !== STATE.RUNNING) continue;
        if (logSize(inst) > this.ctx.limits.logBytes) {
          const message = `the execution's log passed the log-size limit (${this.ctx.limits.logBytes} bytes of JSON)`;
          this.finish(inst, STATE.FAILED, message, { code: 'LOG_LIMIT_EXCEEDED', message, nodeId: item.nodeId });
          continue;
        }
        if (this.spent) {
          // Out of budget: a token not written yet is written as an Active node, run by a later step.
          if (item.nodeInstanceId === null) this.emitEntered(inst, item.nodeId);
          this.defer(item.instanceId);
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
      const before = this.records.length;
      for (const iid of this.touched) {
        const inst = execution(this.state, iid);
        if (inst && !this.deferred.has(iid) && this.settle(inst)) progressed = true;
      }
      // Settling may have finished a child, which resumed its parent (queued its next nodes, or
      // left it with nothing live): go round until a pass changes nothing.
      if (!progressed && this.queue.length === 0 && this.records.length === before) return;
    }
  }

  protected emitEntered(inst: Execution, nodeId: string): NodeInstance {
    const id = `n${inst.nodeCount + 1}`;
    this.emit({ type: 'node.entered', instanceId: inst.processInstanceId, nodeInstanceId: id, nodeId, at: this.at });
    return inst.nodes[id]!;
  }

  /**
   * The failure rule: the node fails; an error boundary event attached to it (matching the
   * code) takes over, else its errorFlow, else the execution fails with the error. A path
   * that takes over gets the error as the variable `error`. `attempts`: the tries the node made
   * (its work's retries), recorded on the node instance when more than one.
   */
  failNode(
    inst: Execution,
    ni: NodeInstance,
    code: NodeFailureCode | PassedOnFailureCode,
    message: string,
    variables?: Record<string, unknown>,
    attempts?: number,
  ): void {
    const error = { code, message, nodeId: ni.nodeId };
    const { nodes, graph } = this.ctx.flowOf(inst);
    const boundary = graph.boundaries(ni.nodeId).find((id) => {
      const b = nodes[id] as BoundaryEventNode;
      return b.event === 'error' && (b.errorCode === undefined || b.errorCode === code);
    });
    const handled = boundary !== undefined || graph.outgoing(ni.nodeId).some((e) => e.kind === 'errorFlow');
    const set = handled ? extensibleCopy(variables ?? {}, { error }) : variables;
    this.leave(inst, ni, STATUS.FAILED, `${code}: ${message}`, set, attempts);
    if (boundary !== undefined) this.createNode(inst, boundary);
    else if (!this.follow(inst, ni, 'errorFlow')) this.finish(inst, STATE.FAILED, message, error);
  }

  /**
   * A node stops without completing (failed, cancelled, timed out): its child executions
   * still running are cancelled with it, and work under way is abandoned (the engine aborts it).
   */
  leave(
    inst: Execution,
    ni: NodeInstance,
    statusCd: 3 | 4 | 5,
    reason: string,
    variables?: Record<string, unknown>,
    attempts?: number,
  ): void {
    this.emit({
      type: 'node.left',
      instanceId: inst.processInstanceId,
      nodeInstanceId: ni.id,
      statusCd,
      at: this.at,
      reason,
      ...(variables && { variables }),
      ...(attempts !== undefined && attempts > 1 && { attempts }),
    });
    for (const childId of ni.children ?? []) {
      const child = execution(this.state, childId);
      if (child && child.stateCd === STATE.RUNNING) {
        this.touched.add(childId);
        this.finish(child, STATE.CANCELLED, `its parent node ${ni.nodeId} of ${inst.processInstanceId} stopped`);
      }
    }
  }

  /** After a node completed: deliver what it throws and move on, or end its token. */
  protected afterCompleted(
    inst: Execution,
    ni: NodeInstance,
    outcome: Extract<Outcome, { kind: 'next' | 'end' }>,
  ): void {
    const flow = this.ctx.flowOf(inst);
    const search = flow.nodes[ni.nodeId]?.search;
    if (search !== undefined) this.updateSearch(inst, search);
    if (outcome.kind === 'end') {
      if (outcome.terminate) this.finish(inst, STATE.COMPLETED, `terminated by ${ni.nodeId}`);
      return;
    }
    if (outcome.deliver) this.throwEvent(inst, outcome.deliver);
    this.route(inst, ni, outcome.to, flow);
  }

  /** A completed node's `search:` over the variables now, written when it changes its execution's attributes. */
  private updateSearch(inst: Execution, templates: Readonly<Record<string, string>>): void {
    const next = updatedSearch(inst.search, resolveSearch(templates, inst.variables));
    if (next !== null) this.emit({ type: 'instance.searched', instanceId: inst.processInstanceId, search: next });
  }

  /** Moves the token along the edges of `flow` (its execution's) to `to` (default: every `next`). */
  private route(inst: Execution, ni: NodeInstance, to: readonly string[] | undefined, flow: FlowScope): void {
    const { ways, next } = flow.graph.routes(ni.nodeId);
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
  protected follow(inst: Execution, ni: NodeInstance, kind: 'errorFlow' | 'timeoutFlow'): boolean {
    const edge = this.ctx
      .flowOf(inst)
      .graph.outgoing(ni.nodeId)
      .find((e) => e.kind === kind);
    if (!edge) return false;
    this.enter(inst, edge);
    return true;
  }

  /** A token arrives at `edge.to`: a converging parallel or inclusive gateway joins first. */
  private enter(inst: Execution, edge: Edge): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    const { nodes, graph } = this.ctx.flowOf(inst);
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
  private fireParallel(inst: Execution, gatewayId: string): void {
    const incoming = this.ctx.flowOf(inst).graph.incoming(gatewayId);
    const arrivals = inst.joins[gatewayId] ?? {};
    if (!incoming.every((e) => (arrivals[edgeKey(e)] ?? 0) > 0)) return;
    const left: Record<string, number> = {};
    for (const [key, n] of Object.entries(arrivals)) if (n > 1) left[key] = n - 1;
    this.emit({ type: 'join.updated', instanceId: inst.processInstanceId, nodeId: gatewayId, arrivals: left });
    this.createNode(inst, gatewayId);
  }

  /** Queues a token that reached `nodeId`; it is written when it runs (see `queue`). */
  createNode(inst: Execution, nodeId: string): void {
    const pending = this.pending.get(inst.processInstanceId) ?? 0;
    if (inst.nodeCount + pending >= MAX_NODE_INSTANCES) {
      this.finish(inst, STATE.FAILED, 'step limit', {
        code: 'STEP_LIMIT_EXCEEDED' satisfies NodeFailureCode,
        message: `the execution created ${MAX_NODE_INSTANCES} node instances; does the flow loop without waiting?`,
        nodeId,
      });
      return;
    }
    const branches = this.ctx.limits.branches;
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
  private settle(inst: Execution): boolean {
    if (inst.stateCd !== STATE.RUNNING) return false;
    // Tokens queued and not written yet (a child started while settling its sibling) are live too.
    if ((this.pending.get(inst.processInstanceId) ?? 0) > 0) return false;
    const { nodes, graph } = this.ctx.flowOf(inst);
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
   * Forgets the tally of `inst`'s tree (state.treeCreated) once `inst` ended and nothing of the
   * tree runs: written as a record, so that a replay forgets it where the live state did.
   */
  private endTree(inst: Execution): void {
    const root = inst.root ?? inst.processInstanceId;
    if (!Object.hasOwn(this.state.treeCreated, root) || LiveCounts.of(this.state).treeRuns(root)) return;
    this.emit({ type: 'tree.ended', instanceId: inst.processInstanceId, root });
  }

  /**
   * Ends the execution: every other active or waiting node is cancelled (their children
   * too). A child execution then resumes the parent node waiting for it.
   */
  finish(inst: Execution, stateCd: 1 | 2 | 3, reason: string, error?: ExecutionError): void {
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
    this.endTree(inst);
    passSlotOn(this, inst);
    fireExecutionTriggers(this, inst, reason);
    if (inst.parentInstanceId === null || inst.parentNodeInstanceId === undefined) return;
    const parent = execution(this.state, inst.parentInstanceId);
    const pni = parent?.nodes[inst.parentNodeInstanceId];
    if (parent && pni && parent.stateCd === STATE.RUNNING && pni.statusCd === STATUS.WAITING)
      this.wake(parent, pni, { kind: 'child', child: inst });
  }
}
