import { evaluateCondition, ExpressionError } from '../../shared/expr/juel.js';
import { resolveDeep } from '../../shared/expr/template.js';
import type { Edge, FlowGraph } from '../../shared/flow/graph.js';
import type { FlowDefinition, FlowNode } from '../../shared/flow/types.js';
import type { WfxRecord } from '../state/records.js';
import { STATE, STATUS, type BufferedMessage, type Instance, type InstanceError, type NodeInstance, type Subscription, type WfxState } from '../state/state.js';
import type { Delivery, NodeScope, Outcome, ResumeInput } from './nodes/handler.js';
import { HANDLERS } from './nodes/index.js';

/** What a transition needs from the engine: the state, each instance's flow, env values, ids. */
export interface EngineCore {
  readonly state: WfxState;
  flowOf(inst: Instance): { readonly definition: FlowDefinition; readonly graph: FlowGraph; readonly startId: string };
  envOf(inst: Instance): Readonly<Record<string, string>>;
  newInstanceId(now: Date): string;
}

/** Node runs per transaction before the rest is left for a later one (fairness between executions). */
const RUNS_PER_TRANSACTION = 10_000;
/** Node instances one execution may create: a flow looping without a wait fails instead of running forever. */
export const MAX_NODE_INSTANCES = 100_000;

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
  /**
   * Nodes to run: an existing Active node instance (`nodeInstanceId`), or a token that just
   * reached `nodeId` and is not written yet: most nodes complete in the step that reaches
   * them, and are then written as one `node.ran` record instead of entered + completed.
   */
  private readonly queue: Array<{ readonly instanceId: string; readonly nodeId: string; readonly nodeInstanceId: string | null }> = [];
  /** Tokens queued but not written yet, per execution (they count toward MAX_NODE_INSTANCES). */
  private readonly pending = new Map<string, number>();
  private runs = 0;
  private readonly at: string;

  constructor(
    private readonly core: EngineCore,
    private readonly emit: (record: WfxRecord) => void,
    readonly now: Date,
  ) {
    this.at = now.toISOString();
  }

  /** Starts an execution at its startEvent and runs it as far as it goes. */
  start(params: Omit<Instance, 'processInstanceId' | 'stateCd' | 'startTime' | 'endTime' | 'output' | 'error' | 'nodes' | 'nodeCount' | 'joins' | 'logs'>): Instance {
    const id = this.core.newInstanceId(this.now);
    this.emit({
      type: 'instance.started',
      instance: { ...params, processInstanceId: id, stateCd: STATE.RUNNING, startTime: this.at, endTime: null, output: null, error: null },
    });
    const inst = this.core.state.instances[id]!;
    this.touched.add(id);
    this.createNode(inst, this.core.flowOf(inst).startId);
    this.drain();
    return inst;
  }

  /** Resumes a waiting node with `input` (a task, an event, its timer). The caller checked it waits. */
  resume(inst: Instance, ni: NodeInstance, input: ResumeInput): void {
    this.touched.add(inst.processInstanceId);
    const node = this.nodeDef(inst, ni);
    const handler = HANDLERS[node.type] as { resume?: (n: FlowNode, s: NodeScope, i: ResumeInput) => Outcome };
    const warnings: WfxRecord[] = [];
    const outcome = handler.resume
      ? this.guard(() => handler.resume!(node, this.scope(inst, ni.nodeId, warnings), input))
      : ({ kind: 'fail', code: 'NOT_RESUMABLE', message: `${node.type} does not wait` } as const);
    for (const w of warnings) this.emit(w);
    this.carryOut(inst, ni, outcome);
    this.drain();
  }

  /** Runs the nodes of `inst` that are active but not yet run (after a restart, or a deferred step). */
  continue(inst: Instance): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    this.touched.add(inst.processInstanceId);
    for (const ni of Object.values(inst.nodes)) {
      if (ni.statusCd === STATUS.ACTIVE) this.queue.push({ instanceId: inst.processInstanceId, nodeId: ni.nodeId, nodeInstanceId: ni.id });
    }
    this.drain();
  }

  /** Cancels a running execution: every active or waiting node is cancelled. */
  cancel(inst: Instance, reason: string): void {
    this.touched.add(inst.processInstanceId);
    this.finish(inst, STATE.CANCELLED, reason);
  }

  /**
   * The subscriptions an event of `eventType` with `correlationKey` resumes in `organization`:
   * message subscriptions with the same key, and signal subscriptions whatever their key. Pure read.
   */
  matches(organization: string, eventType: string, correlationKey: string | null): Subscription[] {
    const subs = this.core.state.subscriptions[`${organization}|${eventType}`];
    if (!subs) return [];
    return Object.values(subs).filter((s) => s.eventType === 'signal' || s.correlationKey === correlationKey);
  }

  /** Resumes every subscription in `subs` with the event's data. */
  deliver(subs: readonly Subscription[], data: Record<string, unknown>): void {
    for (const sub of subs) {
      const inst = this.core.state.instances[sub.instanceId];
      const ni = inst?.nodes[sub.nodeInstanceId];
      if (inst && ni && inst.stateCd === STATE.RUNNING && ni.statusCd === STATUS.WAITING) this.resume(inst, ni, { kind: 'event', data });
    }
  }

  // --- carrying out outcomes -------------------------------------------------------------

  private drain(): void {
    for (;;) {
      while (this.queue.length > 0) {
        const item = this.queue.shift()!;
        const inst = this.core.state.instances[item.instanceId];
        if (item.nodeInstanceId === null) this.pending.set(item.instanceId, (this.pending.get(item.instanceId) ?? 1) - 1);
        if (!inst || inst.stateCd !== STATE.RUNNING) continue;
        if (this.runs >= RUNS_PER_TRANSACTION) {
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
      for (const iid of this.touched) {
        const inst = this.core.state.instances[iid];
        if (inst && !this.deferred.has(iid) && this.settle(inst)) progressed = true;
      }
      if (!progressed) return;
    }
  }

  /** Runs an existing Active node instance (after a restart, or a deferred step). */
  private run(inst: Instance, ni: NodeInstance): void {
    const node = this.nodeDef(inst, ni);
    const handler = HANDLERS[node.type] as { run: (n: FlowNode, s: NodeScope) => Outcome };
    const warnings: WfxRecord[] = [];
    const outcome = this.guard(() => handler.run(node, this.scope(inst, ni.nodeId, warnings)));
    for (const w of warnings) this.emit(w);
    this.carryOut(inst, ni, outcome);
  }

  /** Runs a token that just reached `nodeId`: written as node.ran when it completes at once. */
  private runNew(inst: Instance, nodeId: string): void {
    const node = this.core.flowOf(inst).definition.nodes[nodeId]!;
    const handler = HANDLERS[node.type] as { run: (n: FlowNode, s: NodeScope) => Outcome };
    const warnings: WfxRecord[] = [];
    const outcome = this.guard(() => handler.run(node, this.scope(inst, nodeId, warnings)));
    if (outcome.kind === 'next' || outcome.kind === 'end') {
      const id = `n${inst.nodeCount + 1}`;
      this.emit({
        type: 'node.ran',
        instanceId: inst.processInstanceId,
        nodeInstanceId: id,
        nodeId,
        at: this.at,
        ...(outcome.kind === 'next' && outcome.variables && { variables: outcome.variables }),
        ...(outcome.kind === 'next' && outcome.output && { output: outcome.output }),
      });
      for (const w of warnings) this.emit(w);
      this.afterCompleted(inst, inst.nodes[id]!, outcome);
      return;
    }
    const ni = this.emitEntered(inst, nodeId);
    for (const w of warnings) this.emit(w);
    this.carryOut(inst, ni, outcome);
  }

  private emitEntered(inst: Instance, nodeId: string): NodeInstance {
    const id = `n${inst.nodeCount + 1}`;
    this.emit({ type: 'node.entered', instanceId: inst.processInstanceId, nodeInstanceId: id, nodeId, at: this.at });
    return inst.nodes[id]!;
  }

  /** A handler's exception becomes a node failure: an expression error, or a bug (INTERNAL_ERROR). */
  private guard(fn: () => Outcome): Outcome {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ExpressionError) return { kind: 'fail', code: 'EXPRESSION_ERROR', message: err.message };
      const code = typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : 'INTERNAL_ERROR';
      return { kind: 'fail', code, message: err instanceof Error ? err.message : String(err) };
    }
  }

  private carryOut(inst: Instance, ni: NodeInstance, outcome: Outcome): void {
    const base = { instanceId: inst.processInstanceId, nodeInstanceId: ni.id, at: this.at };
    switch (outcome.kind) {
      case 'next':
        this.emit({
          type: 'node.completed',
          ...base,
          ...(outcome.variables && { variables: outcome.variables }),
          ...(outcome.output && { output: outcome.output }),
        });
        this.afterCompleted(inst, ni, outcome);
        return;
      case 'end':
        this.emit({ type: 'node.completed', ...base });
        this.afterCompleted(inst, ni, outcome);
        return;
      case 'wait': {
        this.emit({ type: 'node.waiting', ...base, wait: outcome.wait });
        const wait = outcome.wait;
        if (wait.kind === 'event') {
          const kept = this.keptMessage(inst.organization, wait.messageRef, wait.eventType, wait.correlationKey);
          if (kept) {
            this.emit({ type: 'message.removed', id: kept.id });
            this.resume(inst, ni, { kind: 'event', data: kept.data });
          }
        }
        return;
      }
      case 'fail':
        this.emit({ type: 'node.left', ...base, statusCd: STATUS.FAILED, reason: `${outcome.code}: ${outcome.message}` });
        if (!this.follow(inst, ni, 'errorFlow')) this.finish(inst, STATE.FAILED, outcome.message, { code: outcome.code, message: outcome.message, nodeId: ni.nodeId });
        return;
      case 'cancel':
        this.emit({ type: 'node.left', ...base, statusCd: STATUS.CANCELLED, reason: outcome.reason, ...(outcome.variables && { variables: outcome.variables }) });
        if (!this.follow(inst, ni, 'errorFlow')) this.finish(inst, STATE.CANCELLED, outcome.reason);
        return;
      case 'timeout':
        this.emit({ type: 'node.left', ...base, statusCd: STATUS.TIMED_OUT, reason: outcome.reason });
        if (!this.follow(inst, ni, 'timeoutFlow')) {
          this.finish(inst, STATE.FAILED, outcome.reason, { code: 'TIMEOUT', message: outcome.reason, nodeId: ni.nodeId });
        }
        return;
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
    for (const target of to.length > 1 ? new Set(to) : to) this.enter(inst, ways.find((e) => e.to === target)!);
  }

  /** Follows the node's `errorFlow` or `timeoutFlow`, if it has one. */
  private follow(inst: Instance, ni: NodeInstance, kind: 'errorFlow' | 'timeoutFlow'): boolean {
    const edge = this.core.flowOf(inst).graph.outgoing(ni.nodeId).find((e) => e.kind === kind);
    if (!edge) return false;
    this.enter(inst, edge);
    return true;
  }

  /** A token arrives at `edge.to`: a converging parallel or inclusive gateway joins first. */
  private enter(inst: Instance, edge: Edge): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    const { definition, graph } = this.core.flowOf(inst);
    const type = definition.nodes[edge.to]!.type;
    if ((type === 'parallelGateway' || type === 'inclusiveGateway') && graph.incoming(edge.to).length > 1) {
      const arrivals = { ...(inst.joins[edge.to] ?? {}) };
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
        code: 'STEP_LIMIT_EXCEEDED',
        message: `the execution created ${MAX_NODE_INSTANCES} node instances; does the flow loop without waiting?`,
        nodeId,
      });
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
    const { definition, graph } = this.core.flowOf(inst);
    const live = Object.values(inst.nodes).filter((n) => n.statusCd === STATUS.ACTIVE || n.statusCd === STATUS.WAITING);
    for (const [gatewayId, arrivals] of Object.entries(inst.joins)) {
      if (definition.nodes[gatewayId]?.type !== 'inclusiveGateway' || Object.keys(arrivals).length === 0) continue;
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
      this.finish(inst, STATE.FAILED, message, { code: 'JOIN_DEADLOCK', message, nodeId: stuck });
    } else {
      this.finish(inst, STATE.COMPLETED, 'every token reached an end');
    }
    return false;
  }

  /** Ends the execution: every other active or waiting node is cancelled. */
  private finish(inst: Instance, stateCd: 1 | 2 | 3, reason: string, error?: InstanceError): void {
    if (inst.stateCd !== STATE.RUNNING) return;
    for (const n of Object.values(inst.nodes)) {
      if (n.statusCd === STATUS.ACTIVE || n.statusCd === STATUS.WAITING) {
        this.emit({
          type: 'node.left',
          instanceId: inst.processInstanceId,
          nodeInstanceId: n.id,
          statusCd: STATUS.CANCELLED,
          at: this.at,
          reason: stateCd === STATE.CANCELLED ? reason : `the execution ${stateCd === STATE.FAILED ? 'failed' : 'ended'}`,
        });
      }
    }
    this.emit({ type: 'instance.finished', instanceId: inst.processInstanceId, stateCd, at: this.at, ...(error && { error }) });
  }

  /** intermediateThrowEvent: resumes matching subscriptions of the organization now. */
  private throwEvent(inst: Instance, d: Delivery): void {
    this.deliver(this.matches(inst.organization, d.eventType, d.correlationKey), d.data);
  }

  /** The oldest kept message a new subscription consumes, if any. */
  private keptMessage(organization: string, eventType: string, kind: 'message' | 'signal', key: string | null): BufferedMessage | undefined {
    for (const m of Object.values(this.core.state.messages)) {
      if (m.organization !== organization || m.eventType !== eventType || m.expiresAt <= this.at) continue;
      if (kind === 'signal' || m.correlationKey === key) return m;
    }
    return undefined;
  }

  private nodeDef(inst: Instance, ni: NodeInstance): FlowNode {
    return this.core.flowOf(inst).definition.nodes[ni.nodeId]!;
  }

  /** The scope a handler runs in; missing-reference WARN entries go to `warnings`, written after the node's own record. */
  private scope(inst: Instance, nodeId: string, warnings: WfxRecord[]): NodeScope {
    const env = this.core.envOf(inst);
    const node = this.core.flowOf(inst).definition.nodes[nodeId]!;
    return {
      instance: inst,
      nodeId,
      now: this.now,
      resolve: (value) => {
        const r = resolveDeep(value, { vars: inst.variables, env });
        for (const ref of r.missing) {
          warnings.push({
            type: 'instance.logged',
            instanceId: inst.processInstanceId,
            entry: {
              nodeId,
              nodeName: node.name ?? nodeId,
              nodeType: node.type,
              level: 'WARN',
              message: `reference {${ref}} is missing; it resolved to an empty string`,
              timestamp: this.at,
            },
          });
        }
        return r.value;
      },
      condition: (text) => evaluateCondition(text, { env, ...inst.variables }),
    };
  }
}
