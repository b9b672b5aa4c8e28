/**
 * How a callAgent's `tools` become the tools a model is offered: each a published flow, named
 * for the model (its own `name`, or one made from the flow's name), described by the flow, its
 * parameters the flow's `inputs:`. Shared by the validator, publish and the engine, so that a
 * name checked at publish is the name the model sees.
 */
import type { AgentToolSpec } from './types.js';

/** What model APIs accept as a function name. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The processId a tool entry names. Pure. */
export const toolProcessId = (spec: AgentToolSpec): string => (typeof spec === 'string' ? spec : spec.processId);

/**
 * A tool name made from a flow's display name: lower case, runs of anything but letters,
 * digits, `_` and `-` as one `_`, at most 64 characters (`Look up order #` -> `look_up_order`).
 * Pure.
 */
export function toolNameOf(flowName: string): string {
  const name = flowName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return name === '' ? 'tool' : name;
}

/** The name the model knows the tool by: the entry's own, else made from the flow's name. Pure. */
export const toolNameFor = (spec: AgentToolSpec, flowName: string): string =>
  typeof spec !== 'string' && spec.name !== undefined ? spec.name : toolNameOf(flowName);
