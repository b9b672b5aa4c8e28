import type { GatewayNode, IfElseNode, NodeByType, ParallelGatewayNode } from '../../../shared/flow/types.js';
import type { NodeHandler, NodeScope, Outcome } from './handler.js';

/** What a gateway's `completed` log line says it took: `"<condition>" to <target>`, or `default to <target>`. */
const took = (via: string, to: string): string =>
  `${via === 'default' || via === 'else' ? via : JSON.stringify(via)} to ${to}`;

/** ifElse: `then` when the condition holds, else `else`. */
export const ifElse: NodeHandler<IfElseNode> = {
  run: (node, scope) => {
    const holds = scope.condition(node.condition);
    const to = holds ? node.then : node.else;
    return { kind: 'next', to: [to], note: `took ${took(holds ? node.condition : 'else', to)}` };
  },
};

function branch(node: GatewayNode, scope: NodeScope, all: boolean): Outcome {
  if (!node.branches) return { kind: 'next' }; // purely converging: on along `next`
  const to: string[] = [];
  const taken: string[] = [];
  for (const b of node.branches) {
    if (scope.condition(b.condition)) {
      to.push(b.next);
      taken.push(took(b.condition, b.next));
      if (!all) break;
    }
  }
  if (to.length === 0 && node.default) {
    to.push(node.default);
    taken.push(took('default', node.default));
  }
  if (to.length === 0) {
    return {
      kind: 'fail',
      code: 'NO_BRANCH_MATCHED',
      message: `no branch condition of ${scope.nodeId} is true and it has no default`,
    };
  }
  return { kind: 'next', to, note: `took ${taken.join(', ')}` };
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
