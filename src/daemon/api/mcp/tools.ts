/**
 * The MCP tools a credential is offered: every flow of its organization (every organization's
 * for a system credential) with `inputs:` and an active version in the environment. A tool is
 * named from the flow's display name as callAgent names flow tools (shared/flow/agent-tools.ts),
 * described by the flow, its parameters the flow's `inputs:`. Two flows whose names make the
 * same tool name are both named with their processId's first 8 characters after it, so that no
 * name depends on which of them was published first.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { toolNameOf } from '../../../shared/flow/agent-tools.js';
import type { FlowDefinition } from '../../../shared/flow/types.js';
import type { Environment } from '../../../shared/api/index.js';
import type { WfxState } from '../../state/state.js';

/** A tool as a call needs it: what the client sees, and the flow it starts. */
export interface FlowTool {
  readonly name: string;
  readonly processId: string;
  readonly definition: FlowDefinition;
}

/** The tools offered to a caller of `organization` (null: every organization's), sorted by name. */
export function flowTools(state: WfxState, organization: string | null, environment: Environment): FlowTool[] {
  const found: Array<{ base: string; processId: string; definition: FlowDefinition }> = [];
  const counts = new Map<string, number>();
  for (const processId in state.flows) {
    const flow = state.flows[processId]!;
    if (organization !== null && flow.organization !== organization) continue;
    const version = flow.active[environment];
    const definition = version === undefined ? undefined : flow.versions[version]?.definition;
    if (definition?.inputs === undefined) continue;
    const base = toolNameOf(definition.name);
    found.push({ base, processId, definition });
    counts.set(base, (counts.get(base) ?? 0) + 1);
  }
  return found
    .map(({ base, processId, definition }) => ({
      name: counts.get(base)! > 1 ? `${base.slice(0, 55)}_${processId.slice(0, 8)}` : base,
      processId,
      definition,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The tool named `name` among `organization`'s, or undefined. */
export function findTool(
  state: WfxState,
  organization: string | null,
  environment: Environment,
  name: string,
): FlowTool | undefined {
  return flowTools(state, organization, environment).find((t) => t.name === name);
}

/** What tools/list says of a tool: its name, the flow's name as its title, description and inputs. */
export function toolListing(tool: FlowTool): Tool {
  const d = tool.definition;
  return {
    name: tool.name,
    title: d.name,
    description: d.description ?? `Runs the flow ${d.name} and answers with its result.`,
    // MCP asks for an object schema; a flow's inputs describe an object already.
    inputSchema: { ...d.inputs, type: 'object' } as Tool['inputSchema'],
    annotations: { title: d.name, openWorldHint: true },
    _meta: { 'wfx.dev/processId': tool.processId },
  };
}
