import type { GatewayNode, IfElseNode, NodeByType, ParallelGatewayNode } from '../../../shared/flow/types.js';
import type { NodeHandler, NodeScope, Outcome } from './handler.js';

/** ifElse: `then` when the condition holds, else `else`. */
export const ifElse: NodeHandler<IfElseNode> = {
  run: (node, scope) => ({ kind: 'next', to: [scope.condition(node.condition) ? node.then : node.else] }),
};

function branch(node: GatewayNode, scope: NodeScope, all: boolean): Outcome {
  if (!node.branches) return { kind: 'next' }; // purely converging: on along `next`
  const to: string[] = [];
  for (const b of node.branches) {
    if (scope.condition(b.condition)) {
      to.push(b.next);
      if (!all) break;
    }
  }
  if (to.length === 0 && node.default) to.push(node.default);
  if (to.length === 0) {
    return {
      kind: 'fail',
      code: 'NO_BRANCH_MATCHED',
      message: `no branch condition of ${scope.nodeId} is true and it has no default`,
    };
  }
  return { kind: 'next', to };
}

/** exclusiveGateway: the first true branch, else default; converging, it passes each token on. */
export const exclusiveGateway: NodeHandler<NodeByType['exclusiveGateway']> = {
  run: (node, scope) => branch(node, scope, false),
};

/** inclusiveGateway: every true branch, else default; converging, the engine joins first. */
export const inclusiveGateway: NodeHandler<NodeByType['inclusiveGateway']> = {
  run: (node, scope) => branch(node, scope, true),
};

/** parallelGateway: forks along every `next`; converging, the engine joins first. */
export const parallelGateway: NodeHandler<ParallelGatewayNode> = { run: () => ({ kind: 'next' }) };
