import type { GatewayNode, IfElseNode, NodeByType, ParallelGatewayNode } from '../../../shared/flow/types.js';
import type { NodeHandler, NodeScope, Outcome } from './handler.js';

/** What a gateway's `completed` log line says it took: `"<condition>" to <target>`, or `default to <target>`. */
const took = (via: string, to: string): string =>
  `${via === 'default' || via === 'else' ? via : JSON.stringify(via)} to ${to}`;

/** What a gateway took, read back from its `completed` log line (`completed: took ...`, as `took` writes it). */
export interface Took {
  /** `else`, `default`, or the condition of the branch taken. */
  readonly via: string;
  readonly to: string;
}

/**
 * The branches a gateway's log message says it took (flow tests' coverage reads executions
 * this way, so that a recorded execution shows its branches as a test's does); [] for any
 * other message. The inverse of `took`, comma-separated as `branch` joins them.
 */
export function tookOf(message: string): Took[] {
  const prefix = 'completed: took ';
  if (!message.startsWith(prefix)) return [];
  const out: Took[] = [];
  let i = prefix.length;
  while (i < message.length) {
    let via: string;
    if (message[i] === '"') {
      // A JSON string: up to the first quote no backslash escapes.
      let j = i + 1;
      while (j < message.length && message[j] !== '"') j += message[j] === '\\' ? 2 : 1;
      via = JSON.parse(message.slice(i, j + 1)) as string;
      i = j + 1;
    } else {
      const space = message.indexOf(' ', i);
      if (space < 0) return out;
      via = message.slice(i, space);
      i = space;
    }
    if (!message.startsWith(' to ', i)) return out;
    i += 4;
    const comma = message.indexOf(', ', i);
    const end = comma < 0 ? message.length : comma;
    out.push({ via, to: message.slice(i, end) });
    i = end + 2;
  }
  return out;
}

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
