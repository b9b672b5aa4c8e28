/**
 * The `openai-compatible` kind: one chat completion over HTTP with the `openai` package (OpenAI,
 * Ollama, llama.cpp's server, vLLM, LM Studio, gateways), streamed so the answer's text reaches
 * the live log as it arrives. The package is imported on first use; its own retries are off (the
 * runner's policy applies) and it reads nothing from the environment (no OPENAI_API_KEY sent to a
 * server it was not meant for). The API key is scrubbed from every message this file makes.
 */
import type { OpenAI } from 'openai';
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { AiProvider } from '../state/state.js';
import { errorMessage } from '../../shared/errors.js';
import { MAX_TIMER_MS } from '../outbound/http-request.js';
import { forbiddenIn, NetworkPolicy } from '../outbound/network-policy.js';
import { parseRetryAfter } from '../outbound/retry.js';
import { NO_USAGE, type ModelOutcome, type ModelRequest, type ProviderKind } from './provider-kind.js';
import type { AiMessage, AiUsage } from './types.js';

type OpenAiModule = typeof import('openai');

const DETAIL_CHARS = 300;
/** A 400 whose message says this refuses what response_format asked for. */
const RESPONSE_FORMAT_REFUSAL = /response_format|json_schema|json_object|structured output/i;
/** A 400 that asks for max_completion_tokens instead of max_tokens (OpenAI's reasoning models). */
const MAX_TOKENS_REFUSAL = /max_completion_tokens/i;

/**
 * Speaks the OpenAI chat completions protocol. One client per provider record (a changed
 * provider is a new record, so a new client), created on first use.
 */
export class OpenAiCompatibleKind implements ProviderKind {
  private module: Promise<OpenAiModule> | null = null;
  /** Every connection goes through the daemon's network policy, as a serviceTask's does. */
  private readonly network: NetworkPolicy;

  constructor(network?: NetworkPolicy) {
    this.network = network ?? new NetworkPolicy();
  }

  private readonly clients = new WeakMap<AiProvider, OpenAI>();
  /** Providers that refused max_tokens and want max_completion_tokens, by providerId. */
  private readonly wantsMaxCompletionTokens = new Set<string>();

  async request(req: ModelRequest): Promise<ModelOutcome> {
    const key = req.provider.apiKey;
    try {
      const client = await this.clientFor(req.provider);
      let outcome = await this.complete(client, req);
      if (
        outcome.kind === 'status' &&
        outcome.status === 400 &&
        req.maxTokens !== undefined &&
        !this.wantsMaxCompletionTokens.has(req.provider.providerId) &&
        MAX_TOKENS_REFUSAL.test(outcome.detail)
      ) {
        this.wantsMaxCompletionTokens.add(req.provider.providerId);
        outcome = await this.complete(client, req);
      }
      return outcome;
    } catch (err) {
      // Only the import or the client's construction can throw here.
      return {
        kind: 'fatal',
        code: 'AI_NETWORK',
        message: scrub(`cannot reach the provider: ${errorMessage(err)}`, key),
      };
    }
  }

  async close(): Promise<void> {
    // Clients hold no connections of their own beyond fetch's pool.
  }

  /** The client of `provider` (one per provider record, made on first use; the package imported then). */
  async clientFor(provider: AiProvider): Promise<OpenAI> {
    const existing = this.clients.get(provider);
    if (existing) return existing;
    const { OpenAI } = await (this.module ??= import('openai'));
    const url = new URL(provider.baseUrl ?? '');
    const defaultQuery: Record<string, string> = {};
    for (const [k, v] of url.searchParams) defaultQuery[k] = v;
    const defaultHeaders: Record<string, string | null> = {};
    if (provider.apiKey === undefined || provider.apiKey === '') {
      // A URL's user:password becomes basic auth (fetch refuses credentials in a URL); else no Authorization at all.
      defaultHeaders.authorization =
        url.username !== '' || url.password !== ''
          ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
          : null;
    }
    url.username = '';
    url.password = '';
    url.search = '';
    const client = new OpenAI({
      apiKey: provider.apiKey || 'unused',
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      baseURL: url.href.replace(/\/+$/, ''),
      defaultHeaders,
      ...(Object.keys(defaultQuery).length > 0 && { defaultQuery }),
      maxRetries: 0,
      timeout: MAX_TIMER_MS,
      logLevel: 'off',
      fetch: policed(this.network),
    });
    this.clients.set(provider, client);
    return client;
  }

  private async complete(client: OpenAI, req: ModelRequest): Promise<ModelOutcome> {
    const key = req.provider.apiKey;
    const tools = req.tools ?? [];
    const body: ChatCompletionCreateParamsStreaming = {
      model: req.model,
      messages: req.messages.map(toOpenAi),
      ...(tools.length > 0 && {
        tools: tools.map((t) => ({
          type: 'function' as const,
          function: { name: t.name, description: t.description, parameters: t.parameters as Record<string, unknown> },
        })),
        // Sent only to turn parallel calls off: some servers refuse the parameter altogether.
        ...(req.parallelToolCalls === false && { parallel_tool_calls: false }),
      }),
      stream: true,
      stream_options: { include_usage: true },
      ...(req.temperature !== undefined && { temperature: req.temperature }),
      ...(req.seed !== undefined && { seed: req.seed }),
      ...(req.maxTokens !== undefined &&
        (this.wantsMaxCompletionTokens.has(req.provider.providerId)
          ? { max_completion_tokens: req.maxTokens }
          : { max_tokens: req.maxTokens })),
      ...(req.jsonMode === 'schema' && {
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'answer', schema: req.schema as Record<string, unknown>, strict: true },
        },
      }),
      ...(req.jsonMode === 'object' && { response_format: { type: 'json_object' } }),
    };
    let text = '';
    let model = req.model;
    let finishReason: string | null = null;
    let usage: AiUsage = NO_USAGE;
    // Tool calls stream in pieces by index: the id and name first, the arguments' text in parts.
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    try {
      const stream = await client.chat.completions.create(body, {
        signal: req.signal,
        maxRetries: 0,
        ...(req.traceparent !== undefined && { headers: { traceparent: req.traceparent } }),
      });
      for await (const chunk of stream) {
        if (chunk.model) model = chunk.model;
        if (chunk.usage) {
          usage = { inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 };
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta?.content;
        if (typeof delta === 'string' && delta !== '') {
          text += delta;
          req.onDelta?.(delta);
        }
        for (const part of choice.delta?.tool_calls ?? []) {
          const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
          if (part.id) call.id = part.id;
          if (part.function?.name) call.name += part.function.name;
          if (part.function?.arguments) call.arguments += part.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
    } catch (err) {
      return this.failure(err, req, key);
    }
    if (req.signal.aborted) return { kind: 'aborted' };
    if (finishReason === null) {
      // The stream ended without a finish reason: the connection was cut mid-answer.
      return { kind: 'network', detail: 'the answer stream ended before the answer was complete' };
    }
    const toolCalls = calls
      .filter((c) => c !== undefined)
      .map((c, i) => ({ id: c.id || `call_${i + 1}`, name: c.name, arguments: c.arguments || '{}' }));
    return { kind: 'answer', text, model, finishReason, usage, ...(toolCalls.length > 0 && { toolCalls }) };
  }

  /** A failed request as an outcome (status, network, forbidden, aborted), its messages scrubbed of `key`. */
  async failure(err: unknown, req: Pick<ModelRequest, 'signal'>, key: string | undefined): Promise<ModelOutcome> {
    if (req.signal.aborted) return { kind: 'aborted' };
    const { APIError, APIConnectionError, APIUserAbortError } = await this.module!;
    if (err instanceof APIUserAbortError) return { kind: 'aborted' };
    if (err instanceof APIConnectionError) {
      const forbidden = forbiddenIn(err);
      if (forbidden) return { kind: 'forbidden', detail: scrub(clip(forbidden.message), key) };
      return { kind: 'network', detail: scrub(clip(connectionDetail(err)), key) };
    }
    if (err instanceof APIError && typeof err.status === 'number') {
      const detail = scrub(clip(apiErrorDetail(err)), key);
      const retryAfterMs = parseRetryAfter(err.headers?.get('retry-after'));
      return {
        kind: 'status',
        status: err.status,
        detail,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
        ...(err.status === 400 && RESPONSE_FORMAT_REFUSAL.test(detail) && { refusesResponseFormat: true }),
      };
    }
    // An error event inside the stream, a malformed chunk, a cut connection.
    return { kind: 'network', detail: scrub(clip(errorMessage(err)), key) };
  }
}

/** fetch through the policy's dispatcher: each connection checked on the address it is about to use. */
function policed(network: NetworkPolicy): typeof fetch {
  return (input, init) => fetch(input, { ...init, dispatcher: network.dispatcher() } as RequestInit);
}

/** A conversation's message in the chat completions protocol. Pure. */
function toOpenAi(m: AiMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    case 'assistant':
      return m.toolCalls && m.toolCalls.length > 0
        ? {
            role: 'assistant',
            content: m.content === '' ? null : m.content,
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : { role: 'assistant', content: m.content };
    default:
      return { role: m.role, content: m.content };
  }
}

/** The error's own message without the status the package puts first (the runner says it). */
function apiErrorDetail(err: { status?: number; message: string }): string {
  const m = err.message.replace(/^\d{3}\s*/, '').trim();
  return m === '' || m === 'status code (no body)' ? 'no details' : m;
}

/** The deepest cause's code and message: "ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9". */
function connectionDetail(err: Error): string {
  let deepest: unknown = err;
  for (let c: unknown = err, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++) deepest = c;
  const code = (deepest as { code?: unknown }).code;
  const message = errorMessage(deepest);
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > DETAIL_CHARS ? `${flat.slice(0, DETAIL_CHARS - 1)}…` : flat;
}

/** `text` with every occurrence of the key replaced: a provider may echo a refused key back. Pure. */
export function scrub(text: string, key: string | undefined): string {
  if (key === undefined || key === '') return text;
  return text.split(key).join('[key]');
}
