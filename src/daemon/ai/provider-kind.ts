/**
 * The contract between the runner (retries, repairs, validation, usage) and each provider kind:
 * one request to a model and its outcome as data. A kind never retries and never throws for a
 * provider's failure; the runner decides what an outcome leads to.
 */
import type { NodeFailureCode } from '../../shared/flow/failure-codes.js';
import type { AgentToolCall, AiProvider } from '../state/state.js';
import type { AiFinishReason, AiMessage, AiTool, AiUsage } from './types.js';

/**
 * How a JSON answer is asked for: `schema` (the provider enforces the schema: json_schema, or a
 * grammar), `object` (any JSON object: json_object; the schema is in the prompt), `prompt` (no
 * response_format at all: the prompt alone asks for JSON), `none` (a text answer).
 */
export type JsonMode = 'schema' | 'object' | 'prompt' | 'none';

/** One request to a model: what is sent, and how it is stopped and reported. */
export interface ModelRequest {
  readonly provider: AiProvider;
  /** A W3C `traceparent` sent to the provider (tracing on: the call's client span). */
  readonly traceparent?: string;
  readonly model: string;
  readonly messages: readonly AiMessage[];
  readonly jsonMode: JsonMode;
  /** The call's schema (with jsonMode `schema`). */
  readonly schema?: Readonly<Record<string, unknown>>;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly seed?: number;
  /** The attempt's signal: aborted by the call's cancellation or by its timeout. */
  readonly signal: AbortSignal;
  readonly onDelta?: (text: string) => void;
  /** Tools the model may call instead of answering. */
  readonly tools?: readonly AiTool[];
  /** False: ask for at most one tool call per answer. */
  readonly parallelToolCalls?: boolean;
}

/** What one request came back with. */
export type ModelOutcome =
  | {
      readonly kind: 'answer';
      readonly text: string;
      readonly model: string;
      readonly finishReason: AiFinishReason;
      readonly usage: AiUsage;
      /** The tools the model asked to call (only when the request offered tools). */
      readonly toolCalls?: readonly AgentToolCall[];
    }
  /** An error status. `refusesResponseFormat`: a 400 about response_format (fall back to the prompt). */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly detail: string;
      readonly retryAfterMs?: number;
      readonly refusesResponseFormat?: boolean;
    }
  | { readonly kind: 'network'; readonly detail: string }
  /** The daemon's network policy refused the connection (not retried). */
  | { readonly kind: 'forbidden'; readonly detail: string }
  /** The attempt's signal aborted it (the runner knows whether by timeout or cancellation). */
  | { readonly kind: 'aborted' }
  /** Not retried: the model cannot be used at all (AI_MODEL_UNAVAILABLE, ...). */
  | { readonly kind: 'fatal'; readonly code: NodeFailureCode; readonly message: string };

/** A provider kind: carries out one request. Never rejects for a provider's failure. */
export interface ProviderKind {
  request(req: ModelRequest): Promise<ModelOutcome>;
  /** Frees what the kind holds (loaded models, clients). */
  close(): Promise<void>;
}

/** No usage reported. */
export const NO_USAGE: AiUsage = { inputTokens: 0, outputTokens: 0 };
