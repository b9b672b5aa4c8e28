/**
 * One engine step's interpreter: it runs nodes (their handlers decide, nodes/) and carries out
 * their outcomes by writing records (each applied at once) until every token of every touched
 * execution waits, ends, or is left for a later step. It decides; it never does I/O: what a
 * step calls for is listed as effects (context.ts) or derived from its records once durable.
 * The inputs it takes (start, answer, event, work result, timer, sweep, job) are in index.ts.
 */
import { ExpressionError } from '../../../shared/expr/juel.js';
import { failureOfThrown, type NodeFailureCode } from '../../../shared/flow/failure-codes.js';
import type { FlowNode } from '../../../shared/flow/types.js';
import { WfxError } from '../../../shared/errors.js';
import { loopProgress } from '../../state/loop-progress.js';
import type { WfxRecord } from '../../state/records.js';
import { nodeRan } from '../../state/records/nodes.js';
import { STATE, STATUS, type BufferedMessage, type Execution, type NodeInstance } from '../../state/state.js';
import { subscriptionsFor, type Subscription } from '../../state/subscriptions.js';
import { handlerOf } from '../nodes/index.js';
import type { Delivery, MemoryWrite, NodeScope, Outcome, ResumeInput } from '../nodes/handler.js';
import { checkedOutcome } from './checks.js';
import { childParams, NodeFailure } from './children.js';
import type { LaunchParams } from './context.js';
import { Scope } from './scope.js';
import { Tokens } from './tokens.js';
import { execution } from '../../state/executions.js';

/** One step (see the top of this file): made per step, its state dropped once it returns. */
export class Step extends Tokens {
  /**
   * Told each execution a thrown event wakes: the one place a step reaches past the trees its
   * input names (touched.ts), through the subscription index. Tests check it (touch-check.ts).
   */
  reach: (instanceId: string) => void = () => undefined;

  /** Resumes a waiting node with `input` (a task, an event, its timer) and runs on. The caller checked it waits. */
  resume(inst: Execution, ni: NodeInstance, input: ResumeInput): void {
    this.wake(inst, ni, input);
    this.drain();
  }

  /** Resumes every subscription in `subs` with the event's data, and runs on. */
  deliver(subs: readonly Subscription[], data: Record<string, unknown>): void {
    this.wakeAll(subs, data);
    this.drain();
  }

  wake(waiting: Execution, waitingNode: NodeInstance, input: ResumeInput): void {
    // The draft's object (a caller's may be the live one, or one a resume has replaced since).
    const inst = execution(this.state, waiting.processInstanceId) ?? waiting;
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

  /** Wakes each live waiting node `subs` names with the event's data (no drain). */
  wakeAll(subs: readonly Subscription[], data: Record<string, unknown>): void {
    for (const sub of subs) {
      const inst = execution(this.state, sub.instanceId);
      const ni = inst?.nodes[sub.nodeInstanceId];
      if (inst && ni && inst.stateCd === STATE.RUNNING && ni.statusCd === STATUS.WAITING)
        this.wake(inst, ni, { kind: 'event', data });
    }
  }

  protected run(inst: Execution, ni: NodeInstance): void {
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
  protected runNew(inst: Execution, nodeId: string): void {
    const node = this.ctx.flowOf(inst).nodes[nodeId]!;
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
      this.emit(nodeRan(inst.processInstanceId, id, nodeId, this.at, next?.variables, next?.output, next?.note));
      for (const w of warnings) this.emit(w);
      this.afterCompleted(inst, inst.nodes[id]!, outcome);
      return;
    }
    const ni = this.emitEntered(inst, nodeId);
    for (const w of warnings) this.emit(w);
    this.carryOut(inst, ni, outcome);
  }

  /** A node's memory writes, in its execution's organization: right before its completion record, in the same step. */
  private emitMemory(inst: Execution, writes: readonly MemoryWrite[]): void {
    for (const w of writes)
      this.emit({
        type: 'memory.written',
        organization: inst.organization,
        namespace: w.namespace,
        key: w.key,
        entry: w.entry,
      });
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

  /** The outcome, or the failure of a limit or depth check it does not pass (checks.ts). */
  private checked(inst: Execution, outcome: Outcome): Outcome {
    return checkedOutcome(this.state, this.ctx.limits, this.ctx.maxJsonDepth, this, inst, outcome);
  }

  /**
   * A `call` outcome starts the other execution now and becomes the node's completion (or
   * its failure when the flow cannot start); every other outcome is carried out as it is.
   */
  private realize(inst: Execution, nodeId: string, outcome: Outcome): Outcome {
    if (outcome.kind !== 'call') return outcome;
    try {
      // Run later, in a step of its own: a flow that calls itself cannot spread through one step.
      const called = this.launch(childParams(this.state, this.ctx, inst, nodeId, outcome.start, null), true);
      return { kind: 'next', variables: { [outcome.variable]: called.processInstanceId } };
    } catch (err) {
      if (err instanceof WfxError || err instanceof NodeFailure) return { kind: 'fail', ...failureOfThrown(err) };
      throw err;
    }
  }

  private carryOut(inst: Execution, ni: NodeInstance, outcome: Outcome): void {
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
          ...(outcome.note !== undefined && { note: outcome.note }),
        });
        this.afterCompleted(inst, ni, outcome);
        return;
      case 'end':
        this.emit({ type: 'node.completed', ...base });
        this.afterCompleted(inst, ni, outcome);
        return;
      case 'wait':
        this.startWaiting(inst, ni, outcome, base);
        return;
      case 'work':
        if (ni.statusCd === STATUS.WAITING) this.emit({ type: 'node.working', ...base });
        this.effects.push({
          kind: 'work',
          instanceId: inst.processInstanceId,
          nodeInstanceId: ni.id,
          request: outcome.work,
        });
        return;
      case 'call':
        this.carryOut(inst, ni, this.realize(inst, ni.nodeId, outcome));
        return;
      case 'fail':
        this.failNode(inst, ni, outcome.code, outcome.message, outcome.variables, outcome.attempts);
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

  /** A node waits: a kept message may answer it at once, and the children it waits for start. */
  private startWaiting(
    inst: Execution,
    ni: NodeInstance,
    outcome: Extract<Outcome, { kind: 'wait' }>,
    base: { instanceId: string; nodeInstanceId: string; at: string },
  ): void {
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
      if (kept && this.ctx.claimsKept) this.effects.push({ kind: 'claim', messageId: kept.id });
      else if (kept) {
        this.emit({ type: 'message.removed', id: kept.id });
        this.wake(inst, ni, { kind: 'event', data: kept.data });
      }
    }
    for (const start of outcome.start ?? []) {
      if (ni.statusCd !== STATUS.WAITING || inst.stateCd !== STATE.RUNNING) return;
      let params: LaunchParams;
      try {
        params = childParams(this.state, this.ctx, inst, ni.nodeId, start, ni);
      } catch (err) {
        if (!(err instanceof WfxError || err instanceof NodeFailure)) throw err;
        const failure = failureOfThrown(err);
        this.failNode(inst, ni, failure.code, failure.message);
        return;
      }
      this.launch(params);
    }
  }

  /**
   * Wakes what waits here for an event thrown by `inst`: resident executions in this step; those
   * not in memory (at-rest/execution-cache.ts) by a step of its own once they are read back, the
   * event kept until then (PendingThrow.here), so a crash between the two loses nothing.
   */
  protected throwEvent(inst: Execution, d: Delivery): void {
    const subs = subscriptionsFor(this.state, inst.organization, d.eventType, d.correlationKey);
    const resident = subs.filter((sub) => execution(this.state, sub.instanceId) !== undefined);
    for (const sub of resident) this.reach(sub.instanceId);
    this.wakeAll(resident, d.data);
    const cold = resident.length < subs.length;
    if (!this.ctx.keepsThrown && !cold) return;
    const event = {
      id: this.ctx.newId(this.now),
      instanceId: inst.processInstanceId,
      organization: inst.organization,
      ...d,
      thrownAt: this.at,
      ...(cold && { here: true as const }),
    };
    this.emit({ type: 'event.thrown', event });
    // Sharing a database, the outbox gives it on, to what is cold here too (one settles it).
    if (this.ctx.keepsThrown) this.effects.push({ kind: 'pass', eventId: event.id });
    else this.effects.push({ kind: 'deliver', eventId: event.id });
  }

  /** The oldest kept message a new subscription consumes, if any. */
  private keptMessage(
    organization: string,
    eventType: string,
    kind: 'message' | 'signal',
    key: string | null,
  ): BufferedMessage | undefined {
    for (const m of Object.values(this.state.messages))
      if (this.consumes(m, { organization, eventType, kind, key })) return m;
    return undefined;
  }

  /** Whether a new subscription in `organization` for `eventType` consumes kept message `m`. */
  consumes(
    m: BufferedMessage,
    wait: { organization: string; eventType: string; kind: 'message' | 'signal'; key: string | null },
  ): boolean {
    if (m.organization !== wait.organization || m.eventType !== wait.eventType || m.expiresAt <= this.at) return false;
    return wait.kind === 'signal' || m.correlationKey === wait.key;
  }

  private nodeDef(inst: Execution, ni: NodeInstance): FlowNode {
    return this.ctx.flowOf(inst).nodes[ni.nodeId]!;
  }

  /** The scope a handler runs in; missing-reference WARN entries go to `warnings`, written after the node's own record. */
  private scope(inst: Execution, nodeId: string, warnings: WfxRecord[], ni: NodeInstance | null): NodeScope {
    return new Scope(
      inst,
      nodeId,
      this.now,
      this.at,
      ni?.wait ?? null,
      ni?.agent ?? null,
      this.ctx.envOf(inst),
      this.ctx.flowOf(inst).nodes[nodeId]!,
      warnings,
      this.state,
      this.ctx.schemas,
      this.ctx.limits.loopIterations,
    );
  }
}
