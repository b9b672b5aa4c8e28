import { endEvent, outputNode, setVariable, startEvent, task } from './flow-nodes.js';
import { exclusiveGateway, ifElse, inclusiveGateway, parallelGateway } from './gateways.js';
import type { HandlerRegistry, NodeHandler } from './handler.js';
import type { NodeByType, NodeType } from '../../../shared/flow/types.js';
import { intermediateCatchEvent, intermediateThrowEvent } from './events.js';
import { inputNode, userTask } from './input.js';
import { boundaryEvent, callProcess, loopNode, subProcess } from './composite.js';
import { scriptTask, serviceTask } from './work.js';
import { aiTask } from './ai.js';
import { callAgent } from './agent.js';
import { memoryAction } from './memory.js';
import { voiceTask } from './voice.js';
import { domainTask } from './domain.js';

/** The handler of every node type the engine runs. A type missing here does not compile. */
export const HANDLERS: HandlerRegistry = {
  startEvent,
  endEvent,
  task,
  setVariable,
  outputNode,
  ifElse,
  exclusiveGateway,
  inclusiveGateway,
  parallelGateway,
  inputNode,
  userTask,
  intermediateCatchEvent,
  intermediateThrowEvent,
  loopNode,
  subProcess,
  callProcess,
  boundaryEvent,
  serviceTask,
  scriptTask,
  aiTask,
  callAgent,
  memoryAction,
  voiceTask,
  domainTask,
};

/**
 * The handler of node type `type`, typed by it: HANDLERS is a mapped type over the node types,
 * so the lookup needs no cast. Given a FlowNode's `type`, it takes that FlowNode. Pure.
 */
export function handlerOf<T extends NodeType>(type: T): NodeHandler<NodeByType[T]> {
  return HANDLERS[type];
}
