import type { BoundaryEventNode, CallProcessNode, LoopNode, SubProcessNode } from '../../../shared/flow/types.js';
import { passOn } from '../../../shared/flow/failure-codes.js';
import { extensibleCopy } from '../../../shared/json-object.js';
import { STATE, type Execution, type LoopState } from '../../state/state.js';
import { asText, type ChildStart, type NodeHandler, type NodeScope, type Outcome } from './handler.js';

const DEFAULT_MAX_ITERATIONS = 1000;
const DEFAULT_CONCURRENCY = 10;

/** The failure a node takes on when its child execution did not complete. */
function childFailure(child: Readonly<Execution>): Outcome {
  if (child.stateCd === STATE.CANCELLED) {
    return {
      kind: 'fail',
      code: 'CHILD_CANCELLED',
      message: `child execution ${child.processInstanceId} was cancelled`,
    };
  }
  const e = child.error;
  // A failed execution always records its error; one without is a bug.
  return {
    kind: 'fail',
    code: e ? passOn(e.code) : 'INTERNAL_ERROR',
    message: `child execution ${child.processInstanceId} failed${e ? ` at ${e.nodeId ?? '?'}: ${e.message}` : ' without an error (CHILD_FAILED)'}`,
  };
}

/**
 * subProcess: starts a child execution of its body (`nodes:`) or of a published flow
 * (`processId`) and waits; the child's variables (`output`, default all) come back when it
 * completes; a child that fails or is cancelled fails the node.
 */
export const subProcess: NodeHandler<SubProcessNode> = {
  run: (node, scope) => {
    const variables =
      node.input === undefined
        ? extensibleCopy(scope.instance.variables)
        : (scope.resolve(node.input) as Record<string, unknown>);
    const start: ChildStart =
      node.processId === undefined
        ? { variables }
        : {
            processId: asText(scope.resolve(node.processId)),
            ...(node.versionNumber !== undefined && { versionNumber: node.versionNumber }),
            variables,
          };
    return { kind: 'wait', wait: { kind: 'child', dueAt: null }, start: [start] };
  },
  resume: (node, _scope, input) => {
    if (input.kind !== 'child')
      return { kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: a subProcess resumed by ${input.kind}` };
    const child = input.child;
    if (child.stateCd !== STATE.COMPLETED) return childFailure(child);
    if (node.output === undefined) return { kind: 'next', variables: { ...child.variables } };
    const variables: Record<string, unknown> = {};
    for (const name of node.output) if (Object.hasOwn(child.variables, name)) variables[name] = child.variables[name];
    return { kind: 'next', variables };
  },
};

/** callProcess: starts another execution and passes on at once, setting `{calledProcessInstanceId}`. */
export const callProcess: NodeHandler<CallProcessNode> = {
  run: (node, scope) => ({
    kind: 'call',
    variable: 'calledProcessInstanceId',
    start: {
      processId: asText(scope.resolve(node.processId)),
      ...(node.versionNumber !== undefined && { versionNumber: node.versionNumber }),
      variables: (scope.resolve(node.data ?? {}) ?? {}) as Record<string, unknown>,
      correlationKey:
        node.correlationKey === undefined ? scope.instance.correlationKey : asText(scope.resolve(node.correlationKey)),
    },
  }),
};

/** boundaryEvent: the engine reaches it when it fires (timer, error); then it passes on. */
export const boundaryEvent: NodeHandler<BoundaryEventNode> = { run: () => ({ kind: 'next' }) };

/**
 * loopNode: each iteration is a child execution of the body. A collection loop runs one per
 * item (in order, or `parallel` up to `concurrency` at once, each with its own copy of the
 * variables); a condition loop runs while its condition holds over the variables, which a
 * sequential iteration hands on to the next. `collect` gathers one value per iteration.
 */
export const loopNode: NodeHandler<LoopNode> = {
  run: (node, scope) => {
    const max = maxIterations(node, scope);
    let items: unknown[] | null = null;
    if (node.collection !== undefined) {
      const resolved = scope.resolve(node.collection);
      if (!Array.isArray(resolved)) {
        return {
          kind: 'fail',
          code: 'LOOP_COLLECTION',
          message: `collection is not an array (it resolved to ${resolved === '' ? 'an empty string' : typeof resolved})`,
        };
      }
      if (resolved.length > max) {
        return {
          kind: 'fail',
          code: 'LOOP_LIMIT',
          message: `the collection has ${resolved.length} items; ${iterationsLimit(node, scope)}`,
        };
      }
      items = resolved;
    }
    const state: LoopState = { items, started: 0, done: 0, running: 0, collected: [] };
    return advance(node, scope, state, scope.instance.variables, undefined);
  },
  resume: (node, scope, input) => {
    const wait = scope.wait;
    if (input.kind !== 'child' || wait?.kind !== 'loop')
      return { kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: a loopNode resumed by ${input.kind}` };
    const child = input.child;
    if (child.stateCd !== STATE.COMPLETED) return childFailure(child);
    const collected = [...wait.state.collected];
    if (node.collect !== undefined)
      collected[child.iteration ?? wait.state.done] = child.variables[node.collect] ?? null;
    const state: LoopState = { ...wait.state, done: wait.state.done + 1, running: wait.state.running - 1, collected };
    // A sequential iteration hands its variables on (to the next iteration, the condition, and the
    // flow): those it changed, since the rest are the very values it was started with.
    const merged = node.parallel === true ? undefined : changedVariables(child.variables, scope.instance.variables);
    return advance(
      node,
      scope,
      state,
      merged ? extensibleCopy(scope.instance.variables, merged) : scope.instance.variables,
      merged,
    );
  },
};

/** The variables of `after` whose value is not the very one `before` holds under that name. */
function changedVariables(
  after: Readonly<Record<string, unknown>>,
  before: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(after))
    if (!Object.hasOwn(before, key) || after[key] !== before[key]) changed[key] = after[key];
  return changed;
}

/** The iterations a loop may run: its `maxIterations` (default 1000), never more than the daemon allows. */
function maxIterations(node: LoopNode, scope: NodeScope): number {
  return Math.min(node.maxIterations ?? DEFAULT_MAX_ITERATIONS, scope.maxLoopIterations);
}

/** Which bound `maxIterations` is, in words. */
function iterationsLimit(node: LoopNode, scope: NodeScope): string {
  const own = node.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  return own <= scope.maxLoopIterations
    ? `maxIterations is ${own}`
    : `the daemon's loop-iterations limit is ${scope.maxLoopIterations}`;
}

/** Starts what may start now, or completes the loop when nothing is left. */
function advance(
  node: LoopNode,
  scope: NodeScope,
  state: LoopState,
  variables: Readonly<Record<string, unknown>>,
  handedOn: Record<string, unknown> | undefined,
): Outcome {
  const max = maxIterations(node, scope);
  const width = node.parallel === true ? (node.concurrency ?? DEFAULT_CONCURRENCY) : 1;
  const itemVariable = node.itemVariable ?? 'item';
  const indexVariable = node.indexVariable ?? 'index';
  const start: ChildStart[] = [];
  let { started, running } = state;
  while (running < width) {
    if (state.items !== null) {
      if (started >= state.items.length) break;
    } else {
      if (!scope.condition(node.condition!, variables)) break;
      if (started >= max)
        return {
          kind: 'fail',
          code: 'LOOP_LIMIT',
          message: `the condition still holds after ${max} iterations; ${iterationsLimit(node, scope)}`,
        };
    }
    const iterationVars = extensibleCopy(
      variables,
      state.items !== null ? { [itemVariable]: state.items[started] } : {},
      { [indexVariable]: started },
    );
    start.push({ variables: iterationVars, iteration: started });
    started++;
    running++;
  }
  if (running === 0) {
    const out: Record<string, unknown> = extensibleCopy(handedOn ?? {});
    if (node.collect !== undefined) out[node.collect] = [...state.collected];
    return { kind: 'next', ...(Object.keys(out).length > 0 && { variables: out }) };
  }
  return {
    kind: 'wait',
    wait: { kind: 'loop', dueAt: null, state: { ...state, started, running } },
    ...(handedOn && { variables: handedOn }),
    start,
  };
}
