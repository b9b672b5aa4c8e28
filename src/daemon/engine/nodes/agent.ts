/**
 * callAgent: a durable tool-use loop. Each turn is one model call (work outside the step, as
 * aiTask's). When the model asks for tools, ONE step records its answer and starts a child
 * execution of each tool's flow (arguments checked against the flow's `inputs:`; refused ones
 * go back to the model as a tool error, with no child); when the children end, their outputs
 * (or errors) are appended and the next turn is asked for. The conversation is the node's
 * journaled state (NodeInstance.agent, appended per turn), so after a crash only the turn in
 * flight is redone: no model call whose answer was journaled is made again, and no tool flow
 * runs twice. Limits fail the node (AGENT_MAX_STEPS, AGENT_BUDGET_EXCEEDED), never pass as an
 * answer, and nothing resets them.
 */
import { passOn } from '../../../shared/flow/failure-codes.js';
import { toolNameFor, toolProcessId } from '../../../shared/flow/agent-tools.js';
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
import type { AiAnswer, AiTool } from '../../ai/types.js';
import { chatMemoryWrite, modelCall, openingMessages } from './ai.js';
import { workResult } from './work.js';
import type { ChildStart, NodeHandler, NodeScope, Outcome, ResumeInput } from './handler.js';

/** Model turns at most when `maxSteps` is not given. */
export const DEFAULT_MAX_STEPS = 10;
/** A tool's result as the model reads it is clipped to this many characters of JSON. */
export const TOOL_RESULT_MAX_CHARS = 16_384;

/** A tool as this run offers it: what the model sees, and the flow it starts. */
interface Tool extends AiTool {
  readonly processId: string;
  readonly definition: FlowDefinition;
}

export const callAgent: NodeHandler<CallAgentNode> = {
  run: (node, scope) => {
    const tools = toolsOf(node, scope);
    if (!Array.isArray(tools)) return tools;
    const agent = scope.agent;
    if (agent === null) {
      const opening = openingMessages(node, scope);
      if ('kind' in opening) return opening;
      return nextTurn(node, scope, tools, 0, opening.messages);
    }
    // Active with a journaled conversation: the turn in flight when the daemon stopped, asked
    // again (a copy: the state's list grows with the answer while the call may still hold it).
    return nextTurn(node, scope, tools, agent.steps, [...agent.messages]);
  },
  resume: (node, scope, input) => {
    const tools = toolsOf(node, scope);
    if (!Array.isArray(tools)) return tools;
    if (input.kind === 'work') return answered(node, scope, tools, input);
    if (input.kind === 'child') return toolEnded(node, scope, tools, input.child);
    return { kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: a callAgent resumed by ${input.kind}` };
  },
};

/** The node's tools as published now in the execution's environment, or the node's failure. */
function toolsOf(node: CallAgentNode, scope: NodeScope): Tool[] | Outcome {
  const tools: Tool[] = [];
  for (const spec of node.tools) {
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

/**
 * Asks the model for turn `done + 1` with `messages` sent (the update, if any, recorded first).
 * With a `seed`, each turn gets `seed + done`: every turn reproducible, yet not one draw
 * repeated (the same seed over a similar conversation would pick as the turn before did).
 */
function nextTurn(
  node: CallAgentNode,
  scope: NodeScope,
  tools: readonly Tool[],
  done: number,
  messages: readonly AgentMessage[],
  agent?: AgentUpdate,
): Outcome {
  const call = modelCall(node, scope, messages);
  return {
    kind: 'work',
    work: {
      kind: 'ai',
      call: {
        ...call,
        ...(node.seed !== undefined && { seed: node.seed + done }),
        tools: tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
        parallelToolCalls: node.parallelToolCalls !== false,
      },
    },
    ...(agent && { agent }),
  };
}

/** A model turn came back: the final answer, tool calls to start, or the node's failure. */
function answered(
  node: CallAgentNode,
  scope: NodeScope,
  tools: readonly Tool[],
  input: Extract<ResumeInput, { kind: 'work' }>,
): Outcome {
  const before = scope.agent;
  // The first turn's conversation is journaled with its answer: what the call sent.
  const opening = before === null ? openingOf(node, scope, input) : [];
  if (!isMessageList(opening)) return opening;
  const result = input.result;
  if (!result.ok) {
    const update: AgentUpdate | undefined = opening.length > 0 ? { messages: opening } : undefined;
    // The engine drops the result of cancelled work; one reaching a node is a bug.
    if (result.code === 'CANCELLED') return workResult(input, () => ({ kind: 'next' }));
    return failed(node, scope, result.code, result.message, update);
  }
  const answer = result.value as AiAnswer;
  const steps = (before?.steps ?? 0) + 1;
  const used = {
    inputTokens: (before?.usage.inputTokens ?? 0) + answer.usage.inputTokens,
    outputTokens: (before?.usage.outputTokens ?? 0) + answer.usage.outputTokens,
  };
  const asked = uniqueIds(answer.toolCalls ?? [], before?.calls ?? []);
  const assistant: AgentMessage =
    asked.length > 0
      ? { role: 'assistant', content: answer.text, toolCalls: asked }
      : { role: 'assistant', content: answer.text };
  const turn: AgentUpdate = {
    messages: [...opening, assistant],
    turn: { usage: { inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens } },
  };
  if (node.maxTotalTokens !== undefined && used.inputTokens + used.outputTokens > node.maxTotalTokens)
    return failed(
      node,
      scope,
      'AGENT_BUDGET_EXCEEDED',
      `${used.inputTokens + used.outputTokens} tokens used in ${steps} turns; maxTotalTokens is ${node.maxTotalTokens}`,
      turn,
    );
  if (asked.length === 0) {
    const after = { steps, calls: before?.calls ?? [], usage: used };
    const value = {
      text: answer.text,
      ...(answer.data !== undefined && { data: answer.data }),
      model: answer.model,
      finishReason: answer.finishReason,
      ...summary(after),
    };
    const write = chatMemoryWrite(node, scope, undefined, answer.text);
    if (write && 'kind' in write) return write;
    return {
      kind: 'next',
      variables: { [node.resultVariable ?? scope.nodeId]: value },
      agent: turn,
      ...(write && { memory: [write] }),
    };
  }
  const maxSteps = node.maxSteps ?? DEFAULT_MAX_STEPS;
  if (steps >= maxSteps)
    return failed(
      node,
      scope,
      'AGENT_MAX_STEPS',
      `the model still asks for tools after ${steps} turns (maxSteps ${maxSteps})`,
      turn,
    );
  const callsBefore = before?.calls.length ?? 0;
  if (node.maxToolCalls !== undefined && callsBefore + asked.length > node.maxToolCalls)
    return failed(
      node,
      scope,
      'AGENT_BUDGET_EXCEEDED',
      `the model asks for ${callsBefore + asked.length} tool calls; maxToolCalls is ${node.maxToolCalls}`,
      turn,
    );

  const parallel = node.parallelToolCalls !== false;
  const calls: AgentCall[] = [];
  const refusals: AgentMessage[] = [];
  const start: ChildStart[] = [];
  for (const c of asked) {
    const checked = checkCall(tools, c);
    if ('error' in checked) {
      calls.push({ ...c, processId: checked.processId, step: steps, childInstanceId: null, ok: false });
      refusals.push(toolMessage(c, JSON.stringify({ error: checked.error })));
      continue;
    }
    calls.push({ ...c, processId: checked.tool.processId, step: steps, childInstanceId: null, ok: null });
    if (parallel || start.length === 0)
      start.push({ processId: checked.tool.processId, variables: checked.args, toolCallId: c.id });
  }
  const update: AgentUpdate = { ...turn, messages: [...turn.messages!, ...refusals], calls };
  if (start.length === 0) {
    // Every call was refused: the refusals go back to the model at once.
    return nextTurn(node, scope, tools, steps, [...(before?.messages ?? []), ...update.messages!], update);
  }
  return { kind: 'wait', wait: { kind: 'tools', dueAt: null }, start, agent: update };
}

/** A tool's child execution ended: its result is appended; the next one starts, or the next turn. */
function toolEnded(node: CallAgentNode, scope: NodeScope, tools: readonly Tool[], child: Readonly<Execution>): Outcome {
  const agent = scope.agent;
  const call = agent?.calls.find((c) => c.id === child.toolCallId && c.childInstanceId === child.processInstanceId);
  if (!agent || !call || call.ok !== null)
    return { kind: 'fail', code: 'INTERNAL_ERROR', message: `UNEXPECTED_CHILD: ${child.processInstanceId}` };
  const ok = child.stateCd === STATE.COMPLETED;
  const content = ok ? clip(JSON.stringify(child.output ?? child.variables)) : JSON.stringify({ error: whyNot(child) });
  const update: AgentUpdate = { messages: [toolMessage(call, content)], ended: [{ id: call.id, ok }] };
  if (!ok && node.failOnToolError === true) {
    const e = child.error;
    return failed(
      node,
      scope,
      child.stateCd === STATE.CANCELLED ? 'CHILD_CANCELLED' : e ? passOn(e.code) : 'INTERNAL_ERROR',
      `tool ${call.name} (${call.id}): ${whyNot(child)}`,
      update,
    );
  }
  const open = agent.calls.filter((c) => c.ok === null && c.id !== call.id);
  if (open.some((c) => c.childInstanceId !== null))
    return { kind: 'wait', wait: { kind: 'tools', dueAt: null }, agent: update };
  const queued = open[0];
  if (queued) {
    // One at a time (parallelToolCalls false): the next call's flow starts now.
    const checked = checkCall(tools, queued);
    if ('error' in checked) {
      // Its flow was published again, with other inputs, since the call was accepted.
      return failed(node, scope, 'INPUT_INVALID', `tool ${queued.name} (${queued.id}): ${checked.error}`, update);
    }
    return {
      kind: 'wait',
      wait: { kind: 'tools', dueAt: null },
      agent: update,
      start: [{ processId: checked.tool.processId, variables: checked.args, toolCallId: queued.id }],
    };
  }
  return nextTurn(node, scope, tools, agent.steps, [...agent.messages, ...update.messages!], update);
}

/** The node fails with `code`; its partial result (the transcript included) is kept in its result variable. */
function failed(
  node: CallAgentNode,
  scope: NodeScope,
  code: Extract<Outcome, { kind: 'fail' }>['code'],
  message: string,
  update: AgentUpdate | undefined,
): Outcome {
  const before = scope.agent;
  const messages = [...(before?.messages ?? []), ...(update?.messages ?? [])];
  const calls = mergeCalls(before?.calls ?? [], update);
  const usage = {
    inputTokens: (before?.usage.inputTokens ?? 0) + (update?.turn?.usage.inputTokens ?? 0),
    outputTokens: (before?.usage.outputTokens ?? 0) + (update?.turn?.usage.outputTokens ?? 0),
  };
  const steps = (before?.steps ?? 0) + (update?.turn ? 1 : 0);
  const value = { text: null, ...summary({ steps, calls, usage }), transcript: messages };
  return {
    kind: 'fail',
    code,
    message,
    variables: { [node.resultVariable ?? scope.nodeId]: value },
    ...(update && { agent: update }),
  };
}

/** The result's account of the run: turns, every tool call with its child and outcome, tokens. */
function summary(agent: Pick<AgentState, 'steps' | 'calls' | 'usage'>) {
  return {
    steps: agent.steps,
    toolCalls: agent.calls.map((c) => ({
      name: c.name,
      arguments: jsonOrText(c.arguments),
      childInstanceId: c.childInstanceId,
      ok: c.ok,
    })),
    usage: { inputTokens: agent.usage.inputTokens, outputTokens: agent.usage.outputTokens },
  };
}

function mergeCalls(calls: readonly AgentCall[], update: AgentUpdate | undefined): AgentCall[] {
  const out = [...calls, ...(update?.calls ?? [])];
  for (const e of update?.ended ?? []) {
    const i = out.findIndex((c) => c.id === e.id);
    if (i >= 0) out[i] = { ...out[i]!, ok: e.ok };
  }
  return out;
}

/** The conversation the first turn sent: the call's own, or made again when the result came without it. */
function openingOf(
  node: CallAgentNode,
  scope: NodeScope,
  input: Extract<ResumeInput, { kind: 'work' }>,
): readonly AgentMessage[] | Outcome {
  if (input.request?.kind === 'ai') return input.request.call.messages;
  const opening = openingMessages(node, scope);
  return 'kind' in opening ? opening : opening.messages;
}

/** A call's arguments checked against its tool's inputs (defaults filled in), or why it is refused. */
function checkCall(
  tools: readonly Tool[],
  call: AgentToolCall,
):
  | { readonly tool: Tool; readonly args: Record<string, unknown> }
  | { readonly error: string; readonly processId: string } {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool)
    return {
      error: `there is no tool named ${JSON.stringify(call.name)}; the tools are: ${tools.map((t) => t.name).join(', ')}`,
      processId: '',
    };
  let args: unknown;
  try {
    args = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
  } catch (err) {
    // Said without quoting them: the refusal is a line of the execution log too.
    return { error: `the arguments are ${notJson(err)}`, processId: tool.processId };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return { error: 'the arguments must be a JSON object', processId: tool.processId };
  const data = args as Record<string, unknown>;
  const violation = checkInputs(tool.definition, data);
  if (violation)
    return {
      error: `invalid arguments: ${violation.path.replace(/^data/, 'arguments')} ${violation.message}`,
      processId: tool.processId,
    };
  return { tool, args: data };
}

/**
 * The calls with ids unique in the conversation: a model that repeats an id (some local
 * servers number each answer's calls from 1) gets `_2`, `_3`... so every result names one call.
 */
function uniqueIds(asked: readonly AgentToolCall[], earlier: readonly AgentCall[]): AgentToolCall[] {
  const seen = new Set(earlier.map((c) => c.id));
  return asked.map((c, i) => {
    let id = c.id === '' ? `call_${earlier.length + i + 1}` : c.id;
    for (let n = 2; seen.has(id); n++) id = `${c.id}_${n}`;
    seen.add(id);
    return { id, name: c.name, arguments: c.arguments };
  });
}

function toolMessage(call: Pick<AgentToolCall, 'id' | 'name'>, content: string): AgentMessage {
  return { role: 'tool', toolCallId: call.id, name: call.name, content };
}

/** Why a tool's execution did not complete, in a sentence for the model. */
function whyNot(child: Readonly<Execution>): string {
  if (child.stateCd === STATE.CANCELLED) return `the tool's execution ${child.processInstanceId} was cancelled`;
  const e = child.error;
  return e ? `${e.code}: ${e.message}` : `the tool's execution ${child.processInstanceId} failed`;
}

function clip(json: string | undefined): string {
  const text = json ?? 'null';
  return text.length > TOOL_RESULT_MAX_CHARS
    ? `${text.slice(0, TOOL_RESULT_MAX_CHARS)}… (clipped: ${text.length} characters in all)`
    : text;
}

const isMessageList = (v: readonly AgentMessage[] | Outcome): v is readonly AgentMessage[] => Array.isArray(v);
