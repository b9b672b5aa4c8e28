/**
 * callAgent's approvals: a tool entry with `approve: true` makes each of its calls wait, before
 * it runs, as an input task on the agent's node (a form with the call's arguments, which the
 * person may edit; `approval` on the wait says which tool and why the model asked). COMPLETE
 * approves it, CANCEL refuses it: the model reads the refusal as the call's result and goes on.
 * The wait is journaled like any input node's: it outlives a restart.
 */
import type { CallAgentNode } from '../../../shared/flow/types.js';
import type { AgentUpdate } from '../../state/agent.js';
import type { AgentCall, AgentState, Wait } from '../../state/state.js';
import { jsonOrText } from '../../ai/structured-output.js';
import { toolMessage } from './agent-calls.js';

/** The model's text before a call, as the task shows it, is clipped to this many characters. */
const REASONING_MAX_CHARS = 2_000;
/** The form field that holds the call's arguments, as JSON text. */
export const ARGUMENTS_FIELD = 'arguments';

/** Whether the entry of the tool `call` names says `approve: true`. */
export function needsApproval(node: CallAgentNode, call: { processId: string; mcpEntry?: number }): boolean {
  if (call.mcpEntry !== undefined) {
    const spec = node.tools[call.mcpEntry];
    return typeof spec !== 'string' && spec !== undefined && spec.approve === true;
  }
  return node.tools.some(
    (spec) =>
      typeof spec !== 'string' && 'processId' in spec && spec.processId === call.processId && spec.approve === true,
  );
}

/** The wait of `call` for its approval, with what the model said in the turn that asked for it. */
export function approvalWait(call: AgentCall, messages: AgentState['messages']): Wait {
  const asked = messages.findLast((m) => m.role === 'assistant' && m.toolCalls?.some((tc) => tc.id === call.id));
  const text = asked?.content.trim() ?? '';
  const args = jsonOrText(call.arguments);
  return {
    kind: 'input',
    inputType: 'form',
    formTitle: `Approve the call of ${call.name}`,
    options: null,
    fields: [
      {
        name: ARGUMENTS_FIELD,
        type: 'text',
        label: 'Arguments (JSON): edit them to change the call',
        default: JSON.stringify(args, null, 2),
      },
    ],
    assignee: null,
    dueAt: null,
    approval: {
      callId: call.id,
      tool: call.name,
      arguments: args,
      reasoning: text === '' ? null : text.slice(0, REASONING_MAX_CHARS),
      ...(call.mcp ? { server: call.mcp.url } : { processId: call.processId }),
    },
  };
}

/**
 * A person's answer to the approval of `call`: COMPLETE approves it (with `data.arguments`, when
 * it is JSON text other than the call's, as its new arguments: answers.ts checked it is an
 * object), CANCEL refuses it and the model reads why.
 */
export function approvalAnswer(
  call: AgentCall,
  action: 'COMPLETE' | 'CANCEL',
  data: Record<string, unknown>,
): AgentUpdate {
  if (action === 'CANCEL') {
    const reason = typeof data.reason === 'string' && data.reason.trim() !== '' ? `: ${data.reason.trim()}` : '';
    return {
      approvals: [{ id: call.id, approved: false }],
      messages: [toolMessage(call, JSON.stringify({ error: `a person refused this call${reason}` }))],
      ended: [{ id: call.id, ok: false }],
    };
  }
  const given = data[ARGUMENTS_FIELD];
  const edited = typeof given === 'string' ? JSON.stringify(JSON.parse(given)) : undefined;
  const changed = edited !== undefined && edited !== JSON.stringify(jsonOrText(call.arguments));
  return { approvals: [{ id: call.id, approved: true, ...(changed && { arguments: edited }) }] };
}
