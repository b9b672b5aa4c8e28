/**
 * The contract between the engine and the model providers: what an aiTask asks for (AiCall),
 * what a call reports while it runs, and what it comes back with. The engine sees only
 * AiRunner; how each provider kind is spoken to lives beside this file.
 */
import type { AgentMessage, AgentToolCall, AiProvider } from '../state/state.js';
import type { WorkResult } from '../outbound/result.js';
import type { AiUsage } from '../state/agent.js';

/**
 * One message of a conversation: system, user, an assistant's answer (with the tool calls it
 * asked for, callAgent), or a tool's result. The wire's AgentMessage: a callAgent journals its
 * conversation in this shape.
 */
export type AiMessage = AgentMessage;

/** A tool a model may call (callAgent: a published flow); `parameters` is the flow's `inputs:`. */
export interface AiTool {
  /** `^[A-Za-z0-9_-]{1,64}$`, unique in the call. */
  readonly name: string;
  readonly description: string;
  /** A JSON Schema of an object. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** How a failed attempt is retried: the serviceTask's policy and defaults (DEFAULT_RETRY). */
export interface AiRetryPolicy {
  readonly maxAttempts: number;
  readonly initialIntervalMs: number;
  readonly backoff: number;
  readonly maxIntervalMs?: number;
}

/** One model call of an aiTask, its `{variable}` references resolved. Not journaled: the node's properties are. */
export interface AiCall {
  readonly organization: string;
  /** The provider's name; null: the organization's default provider. */
  readonly provider: string | null;
  /** Overrides the provider's model. */
  readonly model?: string;
  /** The whole conversation sent: system prompt, remembered messages, then the prompt. */
  readonly messages: readonly AiMessage[];
  readonly responseFormat: 'text' | 'json';
  /** A JSON Schema the answer's JSON must match (implies json; checked at publish). */
  readonly schema?: Readonly<Record<string, unknown>>;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly seed?: number;
  /** Per attempt: the whole answer must arrive within it. */
  readonly timeoutMs: number;
  readonly retry: AiRetryPolicy;
  /** Repair requests after an answer that does not parse or match `schema` (default 1). */
  readonly repairs: number;
  /** Tools the model may ask for instead of answering (callAgent); `schema` applies to a final answer only. */
  readonly tools?: readonly AiTool[];
  /** False: at most one tool call per answer is asked for (default: as many as the model likes). */
  readonly parallelToolCalls?: boolean;
}

/** Token counts as the provider reported them (0 when it reports none). */
/** A model call's token counts (the state's type: a node's log keeps them). */
export type { AiUsage };

/** Why a model stopped: `stop` (done), `length` (maxTokens), `content_filter`, `tool_calls`, or the provider's own word. */
export type AiFinishReason = string;

/** An aiTask's result, the value its `resultVariable` gets. `data` only with responseFormat json. */
export interface AiAnswer {
  readonly text: string;
  readonly data?: unknown;
  /** The tools the model asked to call instead of answering (only when the call offered tools). */
  readonly toolCalls?: readonly AgentToolCall[];
  readonly model: string;
  readonly finishReason: AiFinishReason;
  /** Summed over the attempts and repair requests the answer took. */
  readonly usage: AiUsage;
}

/** One request to the provider, as the execution log shows it: never the prompt or the answer. */
export interface AiAttempt {
  readonly attempt: number;
  readonly model: string;
  readonly latencyMs: number;
  readonly usage: AiUsage;
  readonly finishReason: AiFinishReason | null;
  /** Set when this request failed or its answer was refused (AI_RATE_LIMITED, AI_OUTPUT_INVALID, ...). */
  readonly failure?: { readonly code: string; readonly message: string };
  /** Set when another request follows this one: why (retry, repair) and after how long. */
  readonly next?: { readonly why: 'retry' | 'repair'; readonly delayMs: number };
}

/** What a running call reports and is stopped by. */
export interface AiRunOptions {
  /** Aborted when the node stops or the daemon shuts down: the call ends with CANCELLED. */
  readonly signal: AbortSignal;
  /** Each piece of answer text as it streams in (for the live log; never journaled). */
  readonly onDelta?: (text: string) => void;
  /** After each request to the provider (a line in the execution log). */
  readonly onAttempt?: (attempt: AiAttempt) => void;
  /** A W3C `traceparent` sent with each request to the provider (tracing on: the call's client span). */
  readonly traceparent?: string;
}

/**
 * Carries out model calls. `run` resolves the provider (AI_PROVIDER_NOT_FOUND), retries by the
 * call's policy, validates structured output (AI_OUTPUT_INVALID after its repairs), and
 * resolves with a WorkResult whose value is an AiAnswer: it never rejects for a provider's
 * failure. One instance per daemon: a local model is loaded once and shared.
 */
export interface AiRunner {
  run(call: AiCall, providers: AiProviderLookup, options: AiRunOptions): Promise<WorkResult>;
  /** Frees loaded models; calls under way end with CANCELLED. */
  close(): Promise<void>;
}

/**
 * Finds an organization's provider by name, or its default (null name). The runners are given
 * providers with the API key opened (ai/lookup.ts, openedProviderLookup), which throws WfxError
 * SECRETS_KEY_MISSING or SECRET_UNREADABLE when it cannot be: the call fails with AI_KEY_UNREADABLE.
 */
export type AiProviderLookup = (organization: string, name: string | null) => AiProvider | undefined;
