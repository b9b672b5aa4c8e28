import { parseDuration } from '../../../shared/duration.js';
import { MAX_CALL_TIMEOUT_MS } from '../../../shared/flow/timeouts.js';
import type { AiTaskNode, CallAgentNode } from '../../../shared/flow/types.js';
import type { AiAnswer, AiCall, AiMessage } from '../../ai/types.js';
import { MEMORY_MAX_ENTRY_BYTES } from '../../state/memory.js';
import { asText, type ChatTurn, type MemoryWrite, type NodeHandler, type NodeScope, type Outcome } from './handler.js';
import { lastItems, memoryName, notAList } from './memory.js';
import { retryPolicy, workResult } from './work.js';

const AI_TIMEOUT = '2m';
/** Remembered messages sent before the prompt when `memory.window` is not given. */
export const CHAT_MEMORY_WINDOW = 20;
/**
 * The most messages a chat memory keeps: far more than a window sends, so a later, larger
 * window still finds them, yet bounded; the oldest go first, and also while the list is over
 * an entry's size limit.
 */
export const CHAT_MEMORY_MAX_ITEMS = 200;

const ROLES: ReadonlySet<unknown> = new Set(['system', 'user', 'assistant']);
/** A remembered message: system, user or assistant text (tool calls and results are an agent's own, never remembered). */
export const isMessage = (m: unknown): m is { role: 'system' | 'user' | 'assistant'; content: string } =>
  typeof m === 'object' &&
  m !== null &&
  ROLES.has((m as AiMessage).role) &&
  typeof (m as AiMessage).content === 'string';

/** The model properties aiTask and callAgent share. */
type ModelNode = AiTaskNode | CallAgentNode;

/** The node's own messages: its prompt, or its `messages`, each resolved. */
export function ownMessages(node: ModelNode, scope: NodeScope): AiMessage[] {
  return node.prompt !== undefined
    ? [{ role: 'user', content: asText(scope.resolve(node.prompt) ?? '') }]
    : (node.messages ?? []).map((m) => ({ role: m.role, content: asText(scope.resolve(m.content) ?? '') }));
}

/** The node's turn in its chat memory (null without `memory:`), or the node's failure (MEMORY_KEY_INVALID). */
export function chatTurn(node: ModelNode, scope: NodeScope, own: readonly AiMessage[]): ChatTurn | Outcome | null {
  if (!node.memory) return null;
  const namespace = memoryName(scope, node.memory.namespace, 'namespace');
  if (typeof namespace !== 'string') return namespace;
  const key = memoryName(scope, node.memory.key, 'key');
  if (typeof key !== 'string') return key;
  // A system message is the flow's, not the conversation's: sent each time, never remembered.
  return { namespace, key, messages: own.filter((m) => m.role !== 'system') };
}

/**
 * The conversation a model node opens with: `systemPrompt`, the last `memory.window`
 * remembered messages, then `prompt` (or `messages`), every `{ref}` resolved; with the chat
 * turn to remember. Or the node's failure (a memory key that does not resolve, not a list).
 */
export function openingMessages(
  node: ModelNode,
  scope: NodeScope,
): { readonly messages: AiMessage[]; readonly chat: ChatTurn | null } | Outcome {
  const messages: AiMessage[] = [];
  if (node.systemPrompt !== undefined)
    messages.push({ role: 'system', content: asText(scope.resolve(node.systemPrompt) ?? '') });
  const own = ownMessages(node, scope);
  const chat = chatTurn(node, scope, own);
  if (chat && 'kind' in chat) return chat;
  if (chat) {
    const remembered = scope.memory(chat.namespace, chat.key)?.value;
    if (remembered !== undefined && !Array.isArray(remembered)) return notAList(chat.namespace, chat.key);
    for (const m of lastItems(remembered ?? [], node.memory!.window ?? CHAT_MEMORY_WINDOW))
      if (isMessage(m)) messages.push({ role: m.role, content: m.content });
  }
  messages.push(...own);
  return { messages, chat };
}

/** One model call of the node with `messages` sent, its properties resolved. */
export function modelCall(node: ModelNode, scope: NodeScope, messages: readonly AiMessage[]): AiCall {
  return {
    organization: scope.instance.organization,
    provider: node.provider === undefined ? null : asText(scope.resolve(node.provider)),
    ...(node.model !== undefined && { model: asText(scope.resolve(node.model)) }),
    messages,
    responseFormat: node.schema !== undefined ? 'json' : (node.responseFormat ?? 'text'),
    ...(node.schema !== undefined && { schema: node.schema }),
    ...(node.temperature !== undefined && { temperature: node.temperature }),
    ...(node.maxTokens !== undefined && { maxTokens: node.maxTokens }),
    ...(node.seed !== undefined && { seed: node.seed }),
    timeoutMs: Math.min(parseDuration(node.timeout ?? AI_TIMEOUT), MAX_CALL_TIMEOUT_MS),
    retry: retryPolicy(node.retry),
    repairs: node.repairs ?? 1,
  };
}

/**
 * The chat memory write that appends `added` to the node's remembered list (null without
 * `memory:`), or the node's failure. `chat` is the turn as resolved for the call, when known.
 */
export function chatMemoryWrite(
  node: ModelNode,
  scope: NodeScope,
  chat: ChatTurn | null | undefined,
  answer: string,
): MemoryWrite | Outcome | null {
  if (!node.memory) return null;
  const turn = chat ?? chatTurn(node, scope, ownMessages(node, scope));
  if (!turn) return null;
  if ('kind' in turn) return turn;
  const live = scope.memory(turn.namespace, turn.key);
  if (live && !Array.isArray(live.value)) return notAList(turn.namespace, turn.key);
  const list = chatWindow((live?.value as unknown[] | undefined) ?? [], [
    ...turn.messages,
    { role: 'assistant', content: answer },
  ]);
  const entry = { value: list, updatedAt: scope.now.toISOString(), expiresAt: live?.expiresAt ?? null };
  return { namespace: turn.namespace, key: turn.key, entry };
}

/**
 * aiTask: one model call, work outside the step (at least once; never again once its result
 * is journaled). The conversation sent: `systemPrompt`, the last `memory.window` remembered
 * messages, then `prompt` (or `messages`), every `{ref}` resolved. The result `{text, data,
 * model, finishReason, usage}` goes to `resultVariable` (default the node id); with `memory:`,
 * the prompt and the answer are appended to the remembered list in the same step.
 */
export const aiTask: NodeHandler<AiTaskNode> = {
  run: (node, scope) => {
    const opening = openingMessages(node, scope);
    if ('kind' in opening) return opening;
    return {
      kind: 'work',
      work: { kind: 'ai', call: modelCall(node, scope, opening.messages), ...(opening.chat && { chat: opening.chat }) },
    };
  },
  resume: (node, scope, input) =>
    workResult(input, (value) => {
      const answer = value as AiAnswer;
      const result = {
        text: answer.text,
        ...(answer.data !== undefined && { data: answer.data }),
        model: answer.model,
        finishReason: answer.finishReason,
        usage: { inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens },
      };
      const outcome: Outcome = {
        kind: 'next',
        variables: { [node.resultVariable ?? scope.nodeId]: result },
        usage: result.usage,
      };
      // The turn as resolved for the call; resolved again only for a result without its request.
      const request = input.kind === 'work' && input.request?.kind === 'ai' ? input.request : undefined;
      const write = chatMemoryWrite(node, scope, request?.chat, answer.text);
      if (!write) return outcome;
      if ('kind' in write) return write;
      return { ...outcome, memory: [write] };
    }),
};

/**
 * The remembered list with `added` appended, the oldest dropped beyond CHAT_MEMORY_MAX_ITEMS
 * and while its JSON is over an entry's size limit (never `added` itself: a turn too large
 * alone fails the node with MEMORY_TOO_LARGE). Pure.
 */
export function chatWindow(old: readonly unknown[], added: readonly AiMessage[]): unknown[] {
  const list = lastItems([...old, ...added], CHAT_MEMORY_MAX_ITEMS);
  const sizes = list.map((m) => Buffer.byteLength(JSON.stringify(m) ?? 'null') + 1); // with its comma
  let total = sizes.reduce((a, b) => a + b, 1);
  let drop = 0;
  while (total > MEMORY_MAX_ENTRY_BYTES && list.length - drop > added.length) total -= sizes[drop++]!;
  return drop === 0 ? list : list.slice(drop);
}
