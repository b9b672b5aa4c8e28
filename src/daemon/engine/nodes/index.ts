import { endEvent, outputNode, setVariable, startEvent, task } from './flow-nodes.js';
import { exclusiveGateway, ifElse, inclusiveGateway, parallelGateway } from './gateways.js';
import type { HandlerRegistry } from './handler.js';
import { intermediateCatchEvent, intermediateThrowEvent } from './events.js';
import { inputNode, userTask } from './input.js';
import { boundaryEvent, callProcess, loopNode, subProcess } from './composite.js';
import { scriptTask, serviceTask } from './work.js';

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
};
