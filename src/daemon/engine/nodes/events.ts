import { parseDuration } from '../../../shared/duration.js';
import type { CatchEventNode, ThrowEventNode } from '../../../shared/flow/types.js';
import { asText, type NodeHandler, type NodeScope } from './handler.js';

function correlationKey(value: string | undefined, scope: NodeScope): string | null {
  return value === undefined ? scope.instance.correlationKey : asText(scope.resolve(value));
}

/**
 * intermediateCatchEvent: a message or signal writes a subscription and waits (the engine
 * first looks for a kept message); a timer waits until `duration` from now or `until`.
 * On resume each key of the event's data becomes a variable.
 */
export const intermediateCatchEvent: NodeHandler<CatchEventNode> = {
  run: (node, scope) => {
    if (node.eventType === 'timer') {
      const due =
        node.duration !== undefined
          ? scope.now.getTime() + parseDuration(node.duration)
          : Date.parse(asText(scope.resolve(node.until)));
      if (Number.isNaN(due)) {
        return {
          kind: 'fail',
          code: 'INVALID_TIMER',
          message: `until does not resolve to an ISO 8601 instant: ${asText(scope.resolve(node.until))}`,
        };
      }
      return { kind: 'wait', wait: { kind: 'timer', dueAt: new Date(due).toISOString() } };
    }
    return {
      kind: 'wait',
      wait: {
        kind: 'event',
        eventType: node.eventType,
        messageRef: asText(scope.resolve(node.messageRef)),
        correlationKey: correlationKey(node.correlationKey, scope),
        dueAt: null,
      },
    };
  },
  resume: (_node, _scope, input) => {
    if (input.kind === 'event') return { kind: 'next', variables: input.data };
    if (input.kind === 'timer') return { kind: 'next' };
    return { kind: 'fail', code: 'INTERNAL_ERROR', message: `UNEXPECTED_TASK: a catch event resumed by ${input.kind}` };
  },
};

/** intermediateThrowEvent: delivers like POST /process/event inside the organization, then passes on. */
export const intermediateThrowEvent: NodeHandler<ThrowEventNode> = {
  run: (node, scope) => ({
    kind: 'next',
    deliver: {
      eventType: asText(scope.resolve(node.messageRef)),
      correlationKey: correlationKey(node.correlationKey, scope),
      data: (scope.resolve(node.data ?? {}) ?? {}) as Record<string, unknown>,
    },
  }),
};
