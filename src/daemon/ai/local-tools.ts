/**
 * Tools for a local model: node-llama-cpp's function calling needs a chat template that knows
 * functions, which a small GGUF model often lacks. So a local model with tools answers in a JSON
 * envelope (`{"tool_calls": [...]}` or `{"answer": ...}`) that a grammar enforces token by token,
 * and is told its tools in a system message; its envelope is turned back into tool calls here.
 */
import type { ModelOutcome } from './provider-kind.js';
import type { AiMessage, AiTool } from './types.js';

/**
 * The JSON a local model answers in when it has tools: `{"tool_calls": [{name, arguments}]}`
 * (one of the tools, its arguments of its parameters' schema; at most one call unless
 * parallel) or `{"answer": ...}` (the final answer: text, or of `answerSchema`). A grammar of
 * it constrains every token, so even a tiny model writes a well-formed call.
 */
export function toolEnvelope(
  tools: readonly AiTool[],
  answerSchema: Readonly<Record<string, unknown>> | undefined,
  parallel: boolean,
): Record<string, unknown> {
  return {
    oneOf: [
      {
        type: 'object',
        properties: {
          tool_calls: {
            type: 'array',
            minItems: 1,
            ...(parallel ? {} : { maxItems: 1 }),
            items: {
              oneOf: tools.map((t) => ({
                type: 'object',
                properties: { name: { const: t.name }, arguments: t.parameters },
                required: ['name', 'arguments'],
                additionalProperties: false,
              })),
            },
          },
        },
        required: ['tool_calls'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { answer: answerSchema ?? { type: 'string' } },
        required: ['answer'],
        additionalProperties: false,
      },
    ],
  };
}

/** The system message that tells a local model its tools and the envelope to answer in. Pure. */
export function toolInstruction(tools: readonly AiTool[]): AiMessage {
  const list = tools
    .map((t) => `- ${t.name}: ${t.description}\n  arguments (JSON Schema): ${JSON.stringify(t.parameters)}`)
    .join('\n');
  return {
    role: 'system',
    content:
      'You may call tools. To call tools, reply with JSON {"tool_calls": [{"name": <tool>, "arguments": {...}}]}; ' +
      'the results come back in the next messages. To answer, reply with JSON {"answer": <your answer>}.\n' +
      `Tools:\n${list}`,
  };
}

/**
 * A local model's envelope as an answer: its tool calls (ids `call_<turn>_<n>`, unique in the
 * conversation and the same when the turn is asked again), or the answer inside it as text
 * (JSON text when it is not a string). Text that is no envelope is passed on as it is, for the
 * runner to judge.
 */
export function unwrapEnvelope(
  answer: Extract<ModelOutcome, { kind: 'answer' }>,
  messages: readonly AiMessage[],
): ModelOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    return answer;
  }
  if (typeof parsed !== 'object' || parsed === null) return answer;
  const env = parsed as { tool_calls?: unknown; answer?: unknown };
  if (Array.isArray(env.tool_calls) && env.tool_calls.length > 0) {
    const turn = messages.filter((m) => m.role === 'assistant').length + 1;
    const toolCalls = env.tool_calls.map((c: { name?: unknown; arguments?: unknown }, i) => ({
      id: `call_${turn}_${i + 1}`,
      name: String(c?.name ?? ''),
      arguments: JSON.stringify(c?.arguments ?? {}),
    }));
    return { ...answer, text: '', finishReason: 'tool_calls', toolCalls };
  }
  if (Object.hasOwn(env, 'answer'))
    return { ...answer, text: typeof env.answer === 'string' ? env.answer : JSON.stringify(env.answer) };
  return answer;
}
