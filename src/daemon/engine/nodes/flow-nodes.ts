import type {
  EndEventNode,
  OutputNode,
  SetVariableNode,
  StartEventNode,
  TaskNode,
} from '../../../shared/flow/types.js';
import type { NodeHandler } from './handler.js';

/**
 * startEvent: where a token begins. A start queued by its flow's concurrency limit waits here
 * (engine/step/concurrency.ts) and passes on once given its slot.
 */
export const startEvent: NodeHandler<StartEventNode> = {
  run: () => ({ kind: 'next' }),
  resume: (_node, _scope, input) =>
    input.kind === 'slot'
      ? { kind: 'next' }
      : { kind: 'fail', code: 'INTERNAL_ERROR', message: `a start event waits for a slot, not ${input.kind}` },
};

/** endEvent: ends its token; `terminate` ends the whole execution. */
export const endEvent: NodeHandler<EndEventNode> = {
  run: (node) => ({ kind: 'end', terminate: node.terminate === true }),
};

/** task: does nothing, passes on. */
export const task: NodeHandler<TaskNode> = { run: () => ({ kind: 'next' }) };

/** setVariable: sets each variable to its resolved value (a lone `{ref}` keeps its type). */
export const setVariable: NodeHandler<SetVariableNode> = {
  run: (node, scope) => ({ kind: 'next', variables: scope.resolve(node.variables) as Record<string, unknown> }),
};

/** outputNode: sets variables and records them as the execution's output. */
export const outputNode: NodeHandler<OutputNode> = {
  run: (node, scope) => {
    const outputs = scope.resolve(node.outputs) as Record<string, unknown>;
    return { kind: 'next', variables: outputs, output: outputs };
  },
};
