/**
 * callAgent: a durable tool-use loop. Each turn is one model call (work outside the step, as
 * aiTask's), offered the node's flows and the tools its MCP servers list for that turn. When the
 * model asks for tools, ONE step records its answer and the calls; MCP calls are made one at a
 * time (work outside the step, engine/work/mcp.ts), then each flow call starts a child execution
 * (arguments checked against the flow's `inputs:`; refused ones go back to the model as a tool
 * error). When they have ended, their results (or errors) are appended and the next turn is
 * asked for. The conversation is the node's journaled state (NodeInstance.agent, appended per
 * turn), so after a crash only the work in flight is redone: no model call whose answer was
 * journaled is made again, no tool flow runs twice, and an MCP call under way is made again only
 * when its tool says that is safe. Limits fail the node (AGENT_MAX_STEPS,
 * AGENT_BUDGET_EXCEEDED), never pass as an answer, and nothing resets them.
 */
import { passOn } from '../../../shared/flow/failure-codes.js';
import type { CallAgentNode } from '../../../shared/flow/types.js';
import type { AgentUpdate } from '../../state/agent.js';
import { STATE, type AgentCall, type AgentMessage, type Execution } from '../../state/state.js';
import type { AiAnswer } from '../../ai/types.js';
import type { McpListedTool } from '../work/mcp.js';
import { chatMemoryWrite, modelCall, openingMessages } from './ai.js';
import { approvalAnswer, approvalWait, needsApproval } from './agent-approval.js';
import {
  checkCall,
  clip,
  flowToolsOf,
  mergeCalls,
  summary,
  mcpOutcome,
  mcpServersOf,
  toolMessage,
  uniqueIds,
  UNKNOWN_OUTCOME,
  whyNot,
  type FlowTool,
} from './agent-calls.js';
import { workResult } from './work.js';
import type { ChildStart, NodeHandler, NodeScope, Outcome, ResumeInput } from './handler.js';

export { TOOL_RESULT_MAX_CHARS } from './agent-calls.js';

/** Model turns at most when `maxSteps` is not given. */
export const DEFAULT_MAX_STEPS = 10;

export const callAgent: NodeHandler<CallAgentNode> = {
  run: (node, scope) => {
    const flows = flowToolsOf(node, scope);
    if (!Array.isArray(flows)) return flows;
    const agent = scope.agent;
    if (agent === null) {
      const opening = openingMessages(node, scope);
      if ('kind' in opening) return opening;
      return nextTurn(node, scope, flows, 0, opening.messages);
    }
    // Active with a journaled conversation. An MCP call was under way when the daemon stopped:
    // made again only when its tool says a second call is safe, else the model hears that its
    // outcome is unknown. Otherwise the turn in flight is asked again (a copy: the state's list
    // grows with the answer while the call may still hold it).
    const open = agent.calls.find((c) => c.ok === null && c.mcp !== undefined);
    if (open?.mcp?.idempotent === true) return mcpWork(node, scope, flows, open, undefined);
    if (open) {
      const update: AgentUpdate = {
        messages: [toolMessage(open, UNKNOWN_OUTCOME)],
        ended: [{ id: open.id, ok: false }],
      };
      return advance(node, scope, flows, update);
    }
    return nextTurn(node, scope, flows, agent.steps, [...agent.messages]);
  },
  resume: (node, scope, input) => {
    const flows = flowToolsOf(node, scope);
    if (!Array.isArray(flows)) return flows;
    if (input.kind === 'work')
      return input.request?.kind === 'mcp' ? mcpDone(node, scope, flows, input) : answered(node, scope, flows, input);
    if (input.kind === 'child') return toolEnded(node, scope, flows, input.child);
    if (input.kind === 'task') {
      // A person answered the approval of the first call waiting for one.
      const pending = scope.agent?.calls.find((c) => c.approval === 'pending');
      if (!pending)
        return { kind: 'fail', code: 'INTERNAL_ERROR', message: 'UNEXPECTED_ANSWER: no call waits for approval' };
      return advance(node, scope, flows, approvalAnswer(pending, input.action, input.data));
    }
    return { kind: 'fail', code: 'INTERNAL_ERROR', message: `NOT_RESUMABLE: a callAgent resumed by ${input.kind}` };
  },
};

/**
 * Asks the model for turn `done + 1` with `messages` sent (the update, if any, recorded first).
 * The node's MCP servers go with the call: the work lists their tools for this turn. With a
 * `seed`, each turn gets `seed + done`: every turn reproducible, yet not one draw repeated (the
 * same seed over a similar conversation would pick as the turn before did).
 */
function nextTurn(
  node: CallAgentNode,
  scope: NodeScope,
  flows: readonly FlowTool[],
  done: number,
  messages: readonly AgentMessage[],
  agent?: AgentUpdate,
): Outcome {
  const call = modelCall(node, scope, messages);
  const mcp = mcpServersOf(node, scope);
  return {
    kind: 'work',
    work: {
      kind: 'ai',
      call: {
        ...call,
        ...(node.seed !== undefined && { seed: node.seed + done }),
        tools: flows.map(({ name, description, parameters }) => ({ name, description, parameters })),
        parallelToolCalls: node.parallelToolCalls !== false,
      },
      ...(mcp && { mcp }),
    },
    ...(agent && { agent }),
  };
}

/** A model turn came back: the final answer, tool calls to make, or the node's failure. */
function answered(
  node: CallAgentNode,
  scope: NodeScope,
  flows: readonly FlowTool[],
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
  const answer = result.value as AiAnswer & { readonly mcpTools?: readonly McpListedTool[] };
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

  const servers = mcpServersOf(node, scope) ?? [];
  const calls: AgentCall[] = [];
  const refusals: AgentMessage[] = [];
  for (const c of asked) {
    const checked = checkCall(flows, answer.mcpTools ?? [], c);
    const base = { ...c, step: steps, childInstanceId: null };
    if ('error' in checked) {
      calls.push({ ...base, processId: checked.processId, ok: false });
      refusals.push(toolMessage(c, JSON.stringify({ error: checked.error })));
    } else if ('mcp' in checked) {
      const { entry, tool, idempotent } = checked.mcp;
      const url = servers.find((s) => s.entry === entry)?.url ?? '';
      const approval = needsApproval(node, { processId: '', mcpEntry: entry }) && { approval: 'pending' as const };
      calls.push({ ...base, processId: '', ok: null, ...approval, mcp: { url, tool, entry, idempotent } });
    } else {
      const processId = checked.flow.processId;
      const approval = needsApproval(node, { processId }) && { approval: 'pending' as const };
      calls.push({ ...base, processId, ok: null, ...approval });
    }
  }
  return advance(node, scope, flows, { ...turn, messages: [...turn.messages!, ...refusals], calls });
}

/**
 * What the agent does once `update` is recorded: it asks the next approval (agent-approval.ts),
 * else makes the next MCP call (one at a time, in the order the model asked for them), else waits
 * for the tool flows running, else starts those queued (all at once, or the next with
 * `parallelToolCalls: false`), else asks for the next turn.
 */
function advance(node: CallAgentNode, scope: NodeScope, flows: readonly FlowTool[], update: AgentUpdate): Outcome {
  const before = scope.agent;
  const calls = mergeCalls(before?.calls ?? [], update);
  const open = calls.filter((c) => c.ok === null);
  // Approvals are asked first, one at a time; nothing of the turn runs before they are given.
  const pending = open.find((c) => c.approval === 'pending');
  if (pending) {
    const messages = [...(before?.messages ?? []), ...(update.messages ?? [])];
    return { kind: 'wait', wait: approvalWait(pending, messages), agent: update };
  }
  const mcp = open.find((c) => c.mcp !== undefined);
  if (mcp) return mcpWork(node, scope, flows, mcp, update);
  if (open.some((c) => c.childInstanceId !== null))
    return { kind: 'wait', wait: { kind: 'tools', dueAt: null }, agent: update };
  const queued = node.parallelToolCalls === false ? open.slice(0, 1) : open;
  if (queued.length > 0) {
    const start: ChildStart[] = [];
    for (const c of queued) {
      const checked = checkCall(flows, [], c);
      // Arguments a person edited that its inputs refuse: the model reads why, as for its own.
      if (!('flow' in checked) && c.approval === 'approved') {
        const error = 'error' in checked ? checked.error : 'not a flow';
        const refused: AgentUpdate = {
          ...update,
          messages: [...(update.messages ?? []), toolMessage(c, JSON.stringify({ error }))],
          ended: [...(update.ended ?? []), { id: c.id, ok: false }],
        };
        return advance(node, scope, flows, refused);
      }
      // Its flow was published again, with other inputs, since the call was accepted.
      if (!('flow' in checked))
        return failed(
          node,
          scope,
          'INPUT_INVALID',
          `tool ${c.name} (${c.id}): ${'error' in checked ? checked.error : 'not a flow'}`,
          update,
        );
      start.push({ processId: checked.flow.processId, variables: checked.args, toolCallId: c.id });
    }
    return { kind: 'wait', wait: { kind: 'tools', dueAt: null }, start, agent: update };
  }
  const steps = (before?.steps ?? 0) + (update.turn ? 1 : 0);
  return nextTurn(node, scope, flows, steps, [...(before?.messages ?? []), ...(update.messages ?? [])], update);
}

/** The work of MCP call `call` (its server as the node names it now). */
function mcpWork(
  node: CallAgentNode,
  scope: NodeScope,
  flows: readonly FlowTool[],
  call: AgentCall,
  update: AgentUpdate | undefined,
): Outcome {
  const server = mcpServersOf(node, scope)?.find((s) => s.entry === call.mcp!.entry);
  if (!server) {
    // The execution moved to a version without that server.
    const gone: AgentUpdate = {
      messages: [
        ...(update?.messages ?? []),
        toolMessage(call, JSON.stringify({ error: 'this tool is no longer offered' })),
      ],
      ...(update?.turn && { turn: update.turn }),
      ...(update?.calls && { calls: update.calls }),
      ended: [...(update?.ended ?? []), { id: call.id, ok: false }],
    };
    return advance(node, scope, flows, gone);
  }
  return {
    kind: 'work',
    work: {
      kind: 'mcp',
      call: {
        server,
        callId: call.id,
        tool: call.mcp!.tool,
        arguments: JSON.parse(call.arguments || '{}') as Record<string, unknown>,
      },
    },
    ...(update && { agent: update }),
  };
}

/** An MCP call came back: its result is appended, and the agent goes on. */
function mcpDone(
  node: CallAgentNode,
  scope: NodeScope,
  flows: readonly FlowTool[],
  input: Extract<ResumeInput, { kind: 'work' }>,
): Outcome {
  const request = input.request;
  const callId = request?.kind === 'mcp' ? request.call.callId : '';
  const call = scope.agent?.calls.find((c) => c.id === callId);
  if (!call || call.ok !== null)
    return { kind: 'fail', code: 'INTERNAL_ERROR', message: `UNEXPECTED_RESULT: MCP call ${callId}` };
  const result = input.result;
  if (!result.ok && result.code === 'CANCELLED') return workResult(input, () => ({ kind: 'next' }));
  const outcome = mcpOutcome(result);
  const update: AgentUpdate = {
    messages: [toolMessage(call, outcome.content)],
    ended: [{ id: call.id, ok: outcome.ok }],
  };
  if (!outcome.ok && node.failOnToolError === true) {
    const code = !result.ok && result.code === 'MCP_UNAVAILABLE' ? 'MCP_UNAVAILABLE' : 'MCP_TOOL_FAILED';
    return failed(node, scope, code, `tool ${call.name} (${call.id}): ${outcome.failure}`, update);
  }
  return advance(node, scope, flows, update);
}

/** A tool's child execution ended: its result is appended, and the agent goes on. */
function toolEnded(
  node: CallAgentNode,
  scope: NodeScope,
  flows: readonly FlowTool[],
  child: Readonly<Execution>,
): Outcome {
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
  return advance(node, scope, flows, update);
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

const isMessageList = (v: readonly AgentMessage[] | Outcome): v is readonly AgentMessage[] => Array.isArray(v);
