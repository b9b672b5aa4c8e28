/**
 * The AiRunner: one model call of an aiTask from provider lookup to a WorkResult. It picks the
 * provider kind, times each request out, retries as serviceTask does (outbound/retry.ts),
 * asks again for JSON that does not parse or match the schema (repairs), falls back to the
 * schema in the prompt for a provider that refuses json_schema, and sums token usage. A
 * provider's failure is a result, never a rejection; the API key appears in no message.
 */
import type { NodeFailureCode } from '../../shared/flow/failure-codes.js';
import type { AiProvider, AiProviderKind } from '../state/state.js';
import type { NetworkPolicy } from '../outbound/network-policy.js';
import { MAX_TIMER_MS } from '../outbound/http-request.js';
import { formatMs, retryDelayMs, sleep } from '../outbound/retry.js';
import type { WorkResult } from '../outbound/result.js';
import { LocalModelKind } from './local-model.js';
import { OpenAiCompatibleKind, scrub } from './openai-compatible.js';
import type { JsonMode, ModelOutcome, ProviderKind } from './provider-kind.js';
import { AnswerChecker, jsonInstruction, repairMessage } from './structured-output.js';
import { findProvider } from './lookup.js';
import type {
  AiAnswer,
  AiAttempt,
  AiCall,
  AiMessage,
  AiProviderLookup,
  AiRunner,
  AiRunOptions,
  AiUsage,
} from './types.js';
import { errorMessage } from '../../shared/errors.js';

/** Options of createAiRunner. */
export interface AiRunnerOptions {
  /** Receives the runtime's own warnings (node-llama-cpp's); never a prompt, an answer or a key. */
  readonly log?: (line: string) => void;
  /** Replaces a kind's implementation (tests of the runner's policy alone). */
  readonly kinds?: Partial<Record<AiProviderKind, ProviderKind>>;
  /**
   * Checks every connection to an openai-compatible provider, as serviceTask calls are checked
   * (the daemon's own port, link-local and metadata addresses refused by default). Default: a
   * policy of the default rules.
   */
  readonly network?: NetworkPolicy;
  /** Told of each call once it ends: its provider's name (null: the default), ok or its failure code, seconds, tokens (metrics). */
  readonly observe?: (provider: string | null, outcome: string, seconds: number, usage: AiUsage | null) => void;
}

/** The longest Retry-After honoured when the call's policy sets no maxIntervalMs. */
const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;
/** Downgrades of how JSON is asked for, after a provider refuses the current one. */
const NEXT_JSON_MODE: Partial<Record<JsonMode, JsonMode>> = { schema: 'object', object: 'prompt' };

/** Creates the daemon's one AiRunner. Nothing is imported or loaded until a call needs it. */
export function createAiRunner(options: AiRunnerOptions = {}): AiRunner {
  return new Runner(options);
}

/** How one request ended, as the runner judges it. */
type Verdict =
  | { readonly kind: 'done'; readonly answer: AiAnswer }
  | { readonly kind: 'retry'; readonly code: NodeFailureCode; readonly message: string; readonly retryAfterMs?: number }
  | { readonly kind: 'repair'; readonly message: string; readonly text: string }
  | { readonly kind: 'refused-format'; readonly message: string }
  | { readonly kind: 'fail'; readonly code: NodeFailureCode; readonly message: string };

class Runner implements AiRunner {
  private readonly kinds: Record<AiProviderKind, ProviderKind>;
  private readonly checker = new AnswerChecker();
  /** How JSON is asked of a provider that refused json_schema (or json_object), by providerId. */
  private readonly jsonModes = new Map<string, JsonMode>();
  /** One controller per call under way (close() aborts them); not a composite of a daemon-long signal. */
  private readonly calls = new Map<Promise<WorkResult>, AbortController>();
  private closed = false;

  private readonly observe: AiRunnerOptions['observe'];

  constructor(options: AiRunnerOptions) {
    this.observe = options.observe;
    this.kinds = {
      'openai-compatible': options.kinds?.['openai-compatible'] ?? new OpenAiCompatibleKind(options.network),
      local: options.kinds?.local ?? new LocalModelKind(options.log ? { log: options.log } : {}),
    };
  }

  run(call: AiCall, providers: AiProviderLookup, options: AiRunOptions): Promise<WorkResult> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(options.signal.reason);
    if (this.closed || options.signal.aborted) controller.abort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
    const running = this.runCall(call, providers, options, controller.signal).catch((err: unknown): WorkResult => ({
      ok: false,
      code: 'INTERNAL_ERROR',
      message: scrub(`the model call failed unexpectedly: ${errorMessage(err)}`, keyOf(providers, call)),
    }));
    this.calls.set(running, controller);
    const observe = this.observe;
    if (observe) {
      const t0 = performance.now();
      void running.then((r) => {
        const usage = r.ok ? ((r.value as { usage?: AiUsage } | null)?.usage ?? null) : null;
        observe(call.provider, r.ok ? 'ok' : r.code, (performance.now() - t0) / 1000, usage);
      });
    }
    void running.finally(() => {
      options.signal.removeEventListener('abort', onAbort);
      this.calls.delete(running);
    });
    return running;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const controller of this.calls.values()) controller.abort(new Error('the daemon is stopping'));
    await Promise.allSettled([...this.calls.keys()]);
    await Promise.allSettled([this.kinds['openai-compatible'].close(), this.kinds.local.close()]);
  }

  private async runCall(
    call: AiCall,
    providers: AiProviderLookup,
    options: AiRunOptions,
    signal: AbortSignal,
  ): Promise<WorkResult> {
    const cancelled: WorkResult = { ok: false, code: 'CANCELLED', message: 'the model call was cancelled' };
    if (signal.aborted) return cancelled;
    const found = findProvider(providers, call);
    if ('failure' in found) return found.failure;
    const provider = found.provider;
    if (!provider) {
      return {
        ok: false,
        code: 'AI_PROVIDER_NOT_FOUND',
        message:
          call.provider === null
            ? `organization ${JSON.stringify(call.organization)} has no default model provider`
            : `no model provider ${JSON.stringify(call.provider)} in organization ${JSON.stringify(call.organization)}`,
      };
    }
    const kind = this.kinds[provider.kind];
    const json = call.responseFormat === 'json' || call.schema !== undefined;
    if (call.schema !== undefined) {
      try {
        this.checker.compile(call.schema);
      } catch (err) {
        const why = errorMessage(err);
        return { ok: false, code: 'AI_OUTPUT_INVALID', message: `the schema is not a valid JSON Schema: ${why}` };
      }
    }
    const key = provider.apiKey;
    const model = call.model ?? provider.model;
    const name = `provider ${JSON.stringify(provider.name)}`;
    const report = (attempt: AiAttempt): void => {
      try {
        options.onAttempt?.(attempt);
      } catch {
        // a failing observer must not fail the call
      }
    };
    const onDelta = options.onDelta;
    const delta =
      onDelta &&
      ((text: string): void => {
        try {
          onDelta(text);
        } catch {
          // as above
        }
      });

    let usage: AiUsage = { inputTokens: 0, outputTokens: 0 };
    let messages: readonly AiMessage[] = call.messages;
    let repairsLeft = Math.max(0, Math.floor(call.repairs));
    let attempt = 0;
    let tries = 0;
    const maxAttempts = Math.max(1, Math.floor(call.retry.maxAttempts));
    for (;;) {
      if (signal.aborted) return cancelled;
      attempt++;
      tries++;
      const mode = json ? this.jsonMode(provider, call) : 'none';
      const sent = mode === 'object' || mode === 'prompt' ? [jsonInstruction(call.schema), ...messages] : messages;
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), Math.min(call.timeoutMs, MAX_TIMER_MS));
      const started = performance.now();
      let outcome: ModelOutcome;
      try {
        outcome = await kind.request({
          provider,
          model,
          messages: sent,
          ...(options.traceparent !== undefined && { traceparent: options.traceparent }),
          jsonMode: mode,
          ...(mode === 'schema' && { schema: call.schema }),
          ...(call.temperature !== undefined && { temperature: call.temperature }),
          ...(call.maxTokens !== undefined && { maxTokens: call.maxTokens }),
          ...(call.seed !== undefined && { seed: call.seed }),
          signal: AbortSignal.any([signal, timeout.signal]),
          ...(delta && { onDelta: delta }),
          ...(call.tools !== undefined && call.tools.length > 0 && { tools: call.tools }),
          ...(call.parallelToolCalls !== undefined && { parallelToolCalls: call.parallelToolCalls }),
        });
      } finally {
        clearTimeout(timer);
      }
      const latencyMs = Math.round(performance.now() - started);
      if (signal.aborted) return cancelled;
      if (outcome.kind === 'answer') usage = add(usage, outcome.usage);
      const verdict = this.judge(outcome, call, json, name, provider);
      const line = {
        attempt,
        model: outcome.kind === 'answer' ? outcome.model : model,
        latencyMs,
        usage: outcome.kind === 'answer' ? outcome.usage : { inputTokens: 0, outputTokens: 0 },
        finishReason: outcome.kind === 'answer' ? outcome.finishReason : null,
      };
      if (verdict.kind === 'done') {
        report(line);
        return { ok: true, value: { ...verdict.answer, usage } };
      }
      if (verdict.kind === 'fail') {
        const message = scrub(this.after(verdict.message, attempt), key);
        report({ ...line, failure: { code: verdict.code, message } });
        return { ok: false, code: verdict.code, message, attempts: attempt };
      }
      if (verdict.kind === 'refused-format') {
        this.jsonModes.set(provider.providerId, NEXT_JSON_MODE[mode] ?? 'prompt');
        report({
          ...line,
          failure: { code: 'AI_HTTP_400', message: scrub(verdict.message, key) },
          next: { why: 'retry', delayMs: 0 },
        });
        tries--;
        continue;
      }
      if (verdict.kind === 'repair') {
        if (repairsLeft === 0) {
          const message = scrub(this.after(verdict.message, attempt), key);
          report({ ...line, failure: { code: 'AI_OUTPUT_INVALID', message } });
          return { ok: false, code: 'AI_OUTPUT_INVALID', message, attempts: attempt };
        }
        repairsLeft--;
        report({
          ...line,
          failure: { code: 'AI_OUTPUT_INVALID', message: scrub(verdict.message, key) },
          next: { why: 'repair', delayMs: 0 },
        });
        messages = [
          ...messages,
          { role: 'assistant', content: verdict.text },
          repairMessage(verdict.message, call.schema),
        ];
        tries = 0;
        continue;
      }
      // retry
      const message = scrub(verdict.message, key);
      if (tries >= maxAttempts) {
        const final = scrub(this.after(verdict.message, attempt), key);
        report({ ...line, failure: { code: verdict.code, message: final } });
        return { ok: false, code: verdict.code, message: final, attempts: attempt };
      }
      const retryAfterMs =
        verdict.retryAfterMs === undefined
          ? undefined
          : Math.min(verdict.retryAfterMs, call.retry.maxIntervalMs ?? MAX_RETRY_AFTER_MS);
      const delayMs = retryDelayMs(call.retry, tries, retryAfterMs);
      report({ ...line, failure: { code: verdict.code, message }, next: { why: 'retry', delayMs } });
      if (!(await sleep(delayMs, signal))) return cancelled;
    }
  }

  /** What a request's outcome leads to. */
  private judge(outcome: ModelOutcome, call: AiCall, json: boolean, name: string, provider: AiProvider): Verdict {
    switch (outcome.kind) {
      case 'answer': {
        if (outcome.finishReason === 'length') {
          const limit = call.maxTokens !== undefined ? `maxTokens (${call.maxTokens})` : 'the context size';
          return { kind: 'fail', code: 'AI_TRUNCATED', message: `the answer stopped at ${limit}` };
        }
        if (outcome.finishReason === 'content_filter') {
          return { kind: 'fail', code: 'AI_CONTENT_FILTER', message: `${name}'s content filter stopped the answer` };
        }
        const answer = {
          text: outcome.text,
          model: outcome.model,
          finishReason: outcome.finishReason,
          usage: outcome.usage,
        };
        // Tool calls are not the answer: `schema` applies to the final one (the agent checks the arguments).
        if (outcome.toolCalls && outcome.toolCalls.length > 0)
          return { kind: 'done', answer: { ...answer, toolCalls: outcome.toolCalls } };
        if (!json) return { kind: 'done', answer };
        const checked = this.checker.check(outcome.text, call.schema);
        if (checked.ok) return { kind: 'done', answer: { ...answer, data: checked.data } };
        const what =
          call.schema === undefined ? 'the answer is not valid JSON' : 'the answer does not match the schema';
        return { kind: 'repair', message: `${what}: ${checked.violation}`, text: outcome.text };
      }
      case 'status': {
        const where = `${name} (${shownUrl(provider)}) answered ${outcome.status}: ${outcome.detail}`;
        if (outcome.status === 401 || outcome.status === 403) return { kind: 'fail', code: 'AI_AUTH', message: where };
        if (
          outcome.status === 400 &&
          outcome.refusesResponseFormat &&
          json &&
          this.jsonMode(provider, call) !== 'prompt'
        ) {
          return { kind: 'refused-format', message: where };
        }
        if (outcome.status === 429) {
          return {
            kind: 'retry',
            code: 'AI_RATE_LIMITED',
            message: where,
            ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
          };
        }
        const code: NodeFailureCode = `AI_HTTP_${outcome.status}`;
        if (outcome.status >= 500) {
          return {
            kind: 'retry',
            code,
            message: where,
            ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
          };
        }
        return { kind: 'fail', code, message: where };
      }
      case 'forbidden':
        return {
          kind: 'fail',
          code: 'AI_FORBIDDEN_ADDRESS',
          message: `${name} (${shownUrl(provider)}) refused by the network policy: ${outcome.detail}`,
        };
      case 'network':
        return {
          kind: 'retry',
          code: 'AI_NETWORK',
          message: `${name} (${shownUrl(provider)}) cannot be reached: ${outcome.detail}`,
        };
      case 'aborted':
        // The call's own cancellation was handled before: this is the attempt's timeout.
        return {
          kind: 'retry',
          code: 'AI_TIMEOUT',
          message: `${name}: no complete answer within ${formatMs(call.timeoutMs)}`,
        };
      case 'fatal':
        return { kind: 'fail', code: outcome.code, message: `${name}: ${outcome.message}` };
    }
  }

  private jsonMode(provider: AiProvider, call: AiCall): JsonMode {
    return this.jsonModes.get(provider.providerId) ?? (call.schema !== undefined ? 'schema' : 'object');
  }

  private after(message: string, attempts: number): string {
    return attempts > 1 ? `${message} (after ${attempts} requests)` : message;
  }
}

function add(a: AiUsage, b: AiUsage): AiUsage {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

/** Where a provider is, for a message: origin and path of its URL (never credentials or a query), or the model file. */
function shownUrl(provider: AiProvider): string {
  if (provider.kind === 'local') return provider.modelPath ?? 'no model file';
  try {
    const url = new URL(provider.baseUrl ?? '');
    return `${url.origin}${url.pathname}`;
  } catch {
    return 'an invalid base URL';
  }
}

/** The opened API key of `call`'s provider, to scrub from a message; undefined when there is none or it cannot be opened. */
function keyOf(providers: AiProviderLookup, call: AiCall): string | undefined {
  const found = findProvider(providers, call);
  return 'provider' in found ? found.provider?.apiKey : undefined;
}
