/**
 * How a callAgent's `tools` become the tools a model is offered: each a published flow, named
 * for the model (its own `name`, or one made from the flow's name), described by the flow, its
 * parameters the flow's `inputs:`. Shared by the validator, publish and the engine, so that a
 * name checked at publish is the name the model sees.
 */
import type { AgentToolSpec, FlowToolSpec, McpToolsSpec } from './types.js';

/** What model APIs accept as a function name. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether a tool entry is an MCP server's tools (else a flow). Pure. */
export const isMcpTools = (spec: AgentToolSpec): spec is McpToolsSpec => typeof spec !== 'string' && 'mcp' in spec;

/** The flow entries of a callAgent's tools, with their index among all its entries. Pure. */
export function flowToolSpecs(tools: readonly AgentToolSpec[]): Array<{ spec: FlowToolSpec; index: number }> {
  const out: Array<{ spec: FlowToolSpec; index: number }> = [];
  tools.forEach((spec, index) => {
    if (!isMcpTools(spec)) out.push({ spec, index });
  });
  return out;
}

/** The processId a flow tool entry names. Pure. */
export const toolProcessId = (spec: FlowToolSpec): string => (typeof spec === 'string' ? spec : spec.processId);

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
export const toolNameFor = (spec: FlowToolSpec, flowName: string): string =>
  typeof spec !== 'string' && spec.name !== undefined ? spec.name : toolNameOf(flowName);
