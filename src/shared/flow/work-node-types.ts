/**
 * The flow format's work nodes as TypeScript types (types.ts has the rest and re-exports these):
 * the nodes that do something outside the step, each one interface.
 */
import type { Next, NodeBase } from './node-base.js';

/** How a work node retries a failed attempt (serviceTask, aiTask); each field has a default. */
export interface RetrySpec {
  readonly maxAttempts?: number;
  readonly initialInterval?: string;
  readonly backoff?: number;
  readonly maxInterval?: string;
}
export interface ServiceTaskNode extends NodeBase {
  readonly type: 'serviceTask';
  readonly method?: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly query?: Readonly<Record<string, unknown>>;
  readonly body?: unknown;
  readonly timeout?: string;
  readonly retry?: RetrySpec;
  readonly acceptStatus?: readonly (number | string)[];
  readonly resultVariable?: string;
  readonly next: Next;
}
export interface ScriptTaskNode extends NodeBase {
  readonly type: 'scriptTask';
  readonly language?: 'javascript';
  readonly script: string;
  readonly timeout?: string;
  readonly resultVariable?: string;
  readonly next: Next;
}

/** One message of an aiTask's `messages` (content with `{ref}` templates). */
export interface AiMessageSpec {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}
/** What an aiTask and a callAgent say of their model calls. */
export interface ModelCallSpec {
  /** A registered provider's name; default: the organization's default provider. */
  readonly provider?: string;
  /** Overrides the provider's model. */
  readonly model?: string;
  readonly systemPrompt?: string;
  /** The user message (exclusive with `messages`). */
  readonly prompt?: string;
  readonly messages?: readonly AiMessageSpec[];
  /** The (final) answer's format: default text; json with `schema`. */
  readonly responseFormat?: 'text' | 'json';
  /** A JSON Schema the (final) answer must match (compiled at publish; implies json). */
  readonly schema?: Readonly<Record<string, unknown>>;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly seed?: number;
  /** Per model call attempt; default 2m. */
  readonly timeout?: string;
  readonly retry?: RetrySpec;
  /** Repair requests after an invalid JSON answer (default 1). */
  readonly repairs?: number;
  /** Chat memory: the last `window` messages of a list sent before the prompt; prompt and answer appended after. */
  readonly memory?: { readonly namespace: string; readonly key: string; readonly window?: number };
}
export interface AiTaskNode extends NodeBase, ModelCallSpec {
  readonly type: 'aiTask';
  readonly resultVariable?: string;
  readonly next: Next;
}
/** A callAgent's tool: a published flow (by processId), optionally named and described for the model. */
export type FlowToolSpec =
  | string
  | {
      readonly processId: string;
      readonly name?: string;
      readonly description?: string;
      /** Each call waits for a person's approval (an input task on the agent) before it runs. */
      readonly approve?: boolean;
    };
/**
 * A callAgent's tools from an MCP server (streamable HTTP): every tool it lists, or those
 * `allow` names. Header values may name `{secret.NAME}` and `{env.NAME}`.
 */
export interface McpToolsSpec {
  readonly mcp: { readonly url: string; readonly headers?: Readonly<Record<string, string>> };
  readonly allow?: readonly string[];
  /** Each call waits for a person's approval (an input task on the agent) before it runs. */
  readonly approve?: boolean;
}
/** One entry of a callAgent's `tools`. */
export type AgentToolSpec = FlowToolSpec | McpToolsSpec;
export interface CallAgentNode extends NodeBase, ModelCallSpec {
  readonly type: 'callAgent';
  /** The flows the model may call (each declares `inputs:`, its parameters). */
  readonly tools: readonly AgentToolSpec[];
  /** Model turns at most (default 10): a turn that still asks for tools after it fails the node. */
  readonly maxSteps?: number;
  /** Tool calls at most over the whole run. */
  readonly maxToolCalls?: number;
  /** Input plus output tokens at most over the whole run. */
  readonly maxTotalTokens?: number;
  /** Default true: the calls of one answer run at once; false: one after another. */
  readonly parallelToolCalls?: boolean;
  /** Default false: a failed tool's error goes back to the model; true: it fails the node. */
  readonly failOnToolError?: boolean;
  readonly resultVariable?: string;
  readonly next: Next;
}
/** What a voiceTask does. */
export const VOICE_OPERATIONS = ['speak', 'transcribe'] as const;
/** Audio formats a voiceTask may speak in (the local engine writes wav only). */
export const VOICE_FORMATS = ['wav', 'mp3', 'opus', 'flac'] as const;
export interface VoiceTaskNode extends NodeBase {
  readonly type: 'voiceTask';
  readonly operation: (typeof VOICE_OPERATIONS)[number];
  /** speak: what to say ({ref} resolved). */
  readonly text?: string;
  /** speak: the voice (local: an espeak-ng voice such as en-us; a provider: its voice name). */
  readonly voice?: string;
  /** speak: words per minute (local: 80 to 450, default 175); a provider's speed is rate / 175. */
  readonly rate?: number;
  /** speak: default wav. */
  readonly format?: (typeof VOICE_FORMATS)[number];
  /** transcribe: the audio, a file reference ({ref} resolved: a fileId or {fileId}). */
  readonly audio?: string;
  /** transcribe: the language spoken (default en). */
  readonly language?: string;
  /** transcribe, local engine: the words to listen for (a small vocabulary is transcribed far better). */
  readonly vocabulary?: readonly string[];
  /** A registered model provider (openai-compatible) to speak or transcribe with; default: the local engine. */
  readonly provider?: string;
  /** The provider's model (tts-1, whisper-1, ...). */
  readonly model?: string;
  /** Default 1m. */
  readonly timeout?: string;
  /** For a provider's failures, as aiTask's. */
  readonly retry?: RetrySpec;
  readonly resultVariable?: string;
  readonly next: Next;
}
/** What a memoryAction does with its entry. */
export const MEMORY_ACTIONS = ['store', 'retrieve', 'append', 'delete', 'list'] as const;
export type MemoryAction = (typeof MEMORY_ACTIONS)[number];
export interface MemoryActionNode extends NodeBase {
  readonly type: 'memoryAction';
  readonly action: MemoryAction;
  readonly namespace: string;
  /** Every action but list. */
  readonly key?: string;
  /** store, append. */
  readonly value?: unknown;
  /** retrieve: the last N items of a list. */
  readonly window?: number;
  /** append: the oldest items beyond it are dropped. */
  readonly maxItems?: number;
  /** store, append: the entry expires this long after the write. */
  readonly ttl?: string;
  /** retrieve: the result when the key is missing (default null). */
  readonly default?: unknown;
  readonly resultVariable?: string;
  readonly next: Next;
}

/**
 * A job for an external worker of a registered domain: the action's input (`{ref}` resolved)
 * waits, durable, until a worker activates and completes it (the jobs API).
 */
export interface DomainTaskNode extends NodeBase {
  readonly type: 'domainTask';
  /** A domain registered in the organization (`wfx domains register`). */
  readonly domain: string;
  /** One of the domain's actions. */
  readonly action: string;
  /** The job's input: a map of values (`{ref}` resolved), or one `{ref}` to an object. */
  readonly input?: unknown;
  /** The whole job's deadline, from when the node is reached (JOB_TIMEOUT); default none. */
  readonly timeout?: string;
  /** How a failed attempt is retried (a worker's failure, output that does not match). */
  readonly retry?: RetrySpec;
  readonly resultVariable?: string;
  readonly next: Next;
}
