/**
 * A callAgent's journaled state (NodeInstance.agent): how `agent.updated` records append to
 * it, and how a tool call learns the child execution that runs it. Pure functions over the
 * state, called by the reducer (records.ts); the log lines they return are the execution log's
 * account of each turn and tool call.
 */
import type { AgentCall, AgentMessage, Execution, LiveAgentState, NodeInstance } from './state.js';

/** The tokens a model call took in and gave out, as its provider counted them. */
export interface AiUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** What one `agent.updated` record appends to a callAgent's state. */
export interface AgentUpdate {
  /** Messages appended to the conversation (the first turn's include what was sent). */
  readonly messages?: readonly AgentMessage[];
  /** A model turn was answered: steps + 1, its tokens added (to the node's and the execution's usage). */
  readonly turn?: { readonly usage: AiUsage };
  /** Tool calls the turn asked for, appended (a refused one already has ok false). */
  readonly calls?: readonly AgentCall[];
  /** Calls that ended, by id: their flow completed (ok) or did not. */
  readonly ended?: ReadonlyArray<{ readonly id: string; readonly ok: boolean }>;
  /** Calls a person approved (with the arguments as they edited them, if they did) or refused. */
  readonly approvals?: ReadonlyArray<{ readonly id: string; readonly approved: boolean; readonly arguments?: string }>;
}

/** An empty state, for the first update. */
function emptyState(): LiveAgentState {
  return { messages: [], steps: 0, calls: [], usage: { inputTokens: 0, outputTokens: 0 } };
}

/**
 * Applies an update to `node.agent` (created by the first) and to the execution's usage.
 * Returns the lines the execution log gets for it.
 */
export function applyAgentUpdate(inst: Execution, node: NodeInstance, u: AgentUpdate): string[] {
  const agent = (node.agent ??= emptyState());
  const lines: string[] = [];
  if (u.messages) for (const m of u.messages) agent.messages.push(m);
  if (u.turn) {
    agent.steps++;
    agent.usage = {
      inputTokens: agent.usage.inputTokens + u.turn.usage.inputTokens,
      outputTokens: agent.usage.outputTokens + u.turn.usage.outputTokens,
    };
    const usage = inst.usage;
    inst.usage = {
      inputTokens: (usage?.inputTokens ?? 0) + u.turn.usage.inputTokens,
      outputTokens: (usage?.outputTokens ?? 0) + u.turn.usage.outputTokens,
      calls: (usage?.calls ?? 0) + 1,
    };
    const asked = u.calls ?? [];
    lines.push(
      asked.length === 0
        ? `turn ${agent.steps}: answered`
        : `turn ${agent.steps}: asks for ${asked.length === 1 ? 'tool' : `${asked.length} tools`} ${asked.map((c) => c.name).join(', ')}`,
    );
  }
  for (const c of u.calls ?? []) {
    agent.calls.push(c);
    if (c.ok === false) lines.push(`tool ${c.name} (${c.id}): refused: ${refusal(u.messages, c.id)}`);
    else if (c.approval === 'pending') lines.push(`tool ${c.name} (${c.id}): waits for a person's approval`);
  }
  for (const a of u.approvals ?? []) {
    const i = agent.calls.findIndex((c) => c.id === a.id);
    if (i < 0) continue;
    const call = agent.calls[i]!;
    agent.calls[i] = {
      ...call,
      approval: a.approved ? 'approved' : 'refused',
      ...(a.arguments !== undefined && { arguments: a.arguments }),
    };
    const edited = a.arguments !== undefined ? ', with its arguments edited' : '';
    lines.push(`tool ${call.name} (${call.id}): ${a.approved ? `approved${edited}` : 'refused by a person'}`);
  }
  for (const e of u.ended ?? []) {
    const i = agent.calls.findIndex((c) => c.id === e.id);
    if (i < 0) continue;
    const call = agent.calls[i]!;
    agent.calls[i] = { ...call, ok: e.ok };
    lines.push(
      `tool ${call.name} (${call.id}): ${e.ok ? 'done' : 'failed'}${call.childInstanceId ? ` in ${call.childInstanceId}` : ''}`,
    );
  }
  return lines;
}

/**
 * A child execution started for tool call `toolCallId` of `node`: the call learns its id.
 * Returns the log line, or null when the node has no such call.
 */
export function linkToolChild(node: NodeInstance, toolCallId: string, childInstanceId: string): string | null {
  const calls = node.agent?.calls;
  const i = calls?.findIndex((c) => c.id === toolCallId) ?? -1;
  if (!calls || i < 0) return null;
  const call = calls[i]!;
  calls[i] = { ...call, childInstanceId };
  return `tool ${call.name} (${call.id}): runs as execution ${childInstanceId}`;
}

/** Why a refused call was refused: the error its tool message carries. */
function refusal(messages: readonly AgentMessage[] | undefined, id: string): string {
  const m = messages?.find((x) => x.role === 'tool' && x.toolCallId === id);
  if (!m) return 'no reason given';
  try {
    const parsed = JSON.parse(m.content) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : m.content;
  } catch {
    return m.content;
  }
}
