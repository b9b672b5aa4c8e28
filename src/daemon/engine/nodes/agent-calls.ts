/**
 * callAgent's tools and calls: the flows it offers (as published now), its MCP servers (their
 * tools are listed by the turn's work, engine/work/mcp.ts), a call checked against the tool it
 * names, and the messages a call's end appends. Used by agent.ts.
 */
import { flowToolSpecs, isMcpTools, toolNameFor, toolProcessId } from '../../../shared/flow/agent-tools.js';
import { checkInputs } from '../../../shared/flow/inputs.js';
import type { CallAgentNode, FlowDefinition } from '../../../shared/flow/types.js';
import type { AgentUpdate } from '../../state/agent.js';
import {
  STATE,
  type AgentCall,
  type AgentMessage,
  type AgentState,
  type AgentToolCall,
  type Execution,
} from '../../state/state.js';
import { jsonOrText, notJson } from '../../ai/structured-output.js';
import type { AiTool } from '../../ai/types.js';
import type { McpCallValue, McpListedTool, McpServer } from '../work/mcp.js';
import { SecretRefs } from '../work/secret-refs.js';
import { asText, type NodeScope, type Outcome } from './handler.js';

/** A tool's result as the model reads it is clipped to this many characters of JSON. */
export const TOOL_RESULT_MAX_CHARS = 16_384;

/** A flow tool as this run offers it: what the model sees, and the flow it starts. */
export interface FlowTool extends AiTool {
  readonly processId: string;
  readonly definition: FlowDefinition;
}

/** The node's flow tools as published now in the execution's environment, or the node's failure. */
export function flowToolsOf(node: CallAgentNode, scope: NodeScope): FlowTool[] | Outcome {
  const tools: FlowTool[] = [];
  for (const { spec } of flowToolSpecs(node.tools)) {
    const processId = toolProcessId(spec);
    const flow = scope.publishedFlow(processId);
    if (!flow)
      return {
        kind: 'fail',
        code: 'PROCESS_NOT_PUBLISHED',
        message: `tool flow ${processId} has no active version in ${scope.instance.environment}`,
      };
    const d = flow.definition;
    tools.push({
      name: toolNameFor(spec, d.name),
      description: (typeof spec !== 'string' && spec.description) || d.description || d.name,
      parameters: d.inputs ?? { type: 'object' },
      processId,
      definition: d,
    });
  }
  return tools;
}

/** The node's MCP servers, their headers resolved (`{secret.NAME}` as stand-ins); undefined: none. */
export function mcpServersOf(node: CallAgentNode, scope: NodeScope): McpServer[] | undefined {
  const servers: McpServer[] = [];
  node.tools.forEach((spec, entry) => {
    if (!isMcpTools(spec)) return;
    const secrets = new SecretRefs();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(spec.mcp.headers ?? {}))
      headers[name] = asText(scope.resolve(value, undefined, secrets.token));
    servers.push({
      url: spec.mcp.url,
      headers,
      entry,
      ...(secrets.used && { secrets: secrets.byToken }),
      ...(spec.allow !== undefined && { allow: spec.allow }),
    });
  });
  return servers.length > 0 ? servers : undefined;
}

/** A call checked: the flow to start with its arguments, the MCP tool to call, or why it is refused. */
export type CheckedCall =
  | { readonly flow: FlowTool; readonly args: Record<string, unknown> }
  | { readonly mcp: McpListedTool; readonly args: Record<string, unknown> }
  | { readonly error: string; readonly processId: string };

/**
 * `call` checked against the tool it names: a flow's arguments against its inputs (defaults
 * filled in); an MCP tool's are the server's to check. Or why it is refused.
 */
export function checkCall(
  flows: readonly FlowTool[],
  mcp: readonly McpListedTool[],
  call: Pick<AgentToolCall, 'name' | 'arguments'>,
): CheckedCall {
  const flow = flows.find((t) => t.name === call.name);
  const server = flow ? undefined : mcp.find((t) => t.name === call.name);
  if (!flow && !server)
    return {
      error: `there is no tool named ${JSON.stringify(call.name)}; the tools are: ${[...flows, ...mcp].map((t) => t.name).join(', ')}`,
      processId: '',
    };
  const processId = flow?.processId ?? '';
  let args: unknown;
  try {
    args = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
  } catch (err) {
    // Said without quoting them: the refusal is a line of the execution log too.
    return { error: `the arguments are ${notJson(err)}`, processId };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return { error: 'the arguments must be a JSON object', processId };
  const data = args as Record<string, unknown>;
  if (server) return { mcp: server, args: data };
  const violation = checkInputs(flow!.definition, data);
  if (violation)
    return {
      error: `invalid arguments: ${violation.path.replace(/^data/, 'arguments')} ${violation.message}`,
      processId,
    };
  return { flow: flow!, args: data };
}

/**
 * The calls with ids unique in the conversation: a model that repeats an id (some local
 * servers number each answer's calls from 1) gets `_2`, `_3`... so every result names one call.
 */
export function uniqueIds(asked: readonly AgentToolCall[], earlier: readonly AgentCall[]): AgentToolCall[] {
  const seen = new Set(earlier.map((c) => c.id));
  return asked.map((c, i) => {
    let id = c.id === '' ? `call_${earlier.length + i + 1}` : c.id;
    for (let n = 2; seen.has(id); n++) id = `${c.id}_${n}`;
    seen.add(id);
    return { id, name: c.name, arguments: c.arguments };
  });
}

export function toolMessage(call: Pick<AgentToolCall, 'id' | 'name'>, content: string): AgentMessage {
  return { role: 'tool', toolCallId: call.id, name: call.name, content };
}

/** Why a tool's execution did not complete, in a sentence for the model. */
export function whyNot(child: Readonly<Execution>): string {
  if (child.stateCd === STATE.CANCELLED) return `the tool's execution ${child.processInstanceId} was cancelled`;
  const e = child.error;
  return e ? `${e.code}: ${e.message}` : `the tool's execution ${child.processInstanceId} failed`;
}

export function clip(json: string | undefined): string {
  const text = json ?? 'null';
  return text.length > TOOL_RESULT_MAX_CHARS
    ? `${text.slice(0, TOOL_RESULT_MAX_CHARS)}… (clipped: ${text.length} characters in all)`
    : text;
}

/** What an MCP call's work came back with, as the tool message's content and the call's outcome. */
export function mcpOutcome(result: { ok: true; value: unknown } | { ok: false; code: string; message: string }): {
  content: string;
  ok: boolean;
  failure?: string;
} {
  if (!result.ok) {
    const failure = `${result.code}: ${result.message}`;
    return { content: JSON.stringify({ error: failure }), ok: false, failure };
  }
  const v = result.value as McpCallValue;
  if (v.isError) return { content: JSON.stringify({ error: clip(v.text) }), ok: false, failure: v.text.slice(0, 500) };
  return { content: clip(v.text), ok: true };
}

/** The tool message of an MCP call that was under way when the daemon stopped, and not repeated. */
export const UNKNOWN_OUTCOME = JSON.stringify({
  error:
    'the daemon stopped while this call ran, so whether it took effect is unknown; it was not repeated (the tool does not say a second call is safe)',
});

/** The result's account of the run: turns, every tool call with its child and outcome, tokens. */
export function summary(agent: Pick<AgentState, 'steps' | 'calls' | 'usage'>) {
  return {
    steps: agent.steps,
    toolCalls: agent.calls.map((c) => ({
      name: c.name,
      arguments: jsonOrText(c.arguments),
      childInstanceId: c.childInstanceId,
      ...(c.mcp && { server: c.mcp.url }),
      ...(c.approval && { approval: c.approval }),
      ok: c.ok,
    })),
    usage: { inputTokens: agent.usage.inputTokens, outputTokens: agent.usage.outputTokens },
  };
}

/** `calls` as `update` leaves them: its calls appended, its approvals and ends applied. */
export function mergeCalls(calls: readonly AgentCall[], update: AgentUpdate | undefined): AgentCall[] {
  const out = [...calls, ...(update?.calls ?? [])];
  for (const a of update?.approvals ?? []) {
    const i = out.findIndex((c) => c.id === a.id);
    if (i >= 0)
      out[i] = {
        ...out[i]!,
        approval: a.approved ? 'approved' : 'refused',
        ...(a.arguments !== undefined && { arguments: a.arguments }),
      };
  }
  for (const e of update?.ended ?? []) {
    const i = out.findIndex((c) => c.id === e.id);
    if (i >= 0) out[i] = { ...out[i]!, ok: e.ok };
  }
  return out;
}
