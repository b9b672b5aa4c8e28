/**
 * The catalogue as the state keeps it: organizations, API keys, flows and their versions, webhook
 * registrations, email connections and model providers (WfxState's collections of them). The
 * catalogue room (daemon/catalogue/) writes them through its records; secrets in them are sealed
 * (state/secret-fields.ts).
 */
import type { ApiKeyStatus, EndpointEnvironment, Environment, Role } from '../../shared/api/index.js';

/** The kinds of model provider: an OpenAI-compatible HTTP API, or a GGUF file run in-process. */
export const AI_PROVIDER_KINDS = ['openai-compatible', 'local'] as const;
export type AiProviderKind = (typeof AI_PROVIDER_KINDS)[number];

/**
 * A model provider registered for an organization. The API key is kept sealed
 * (state/secret-fields.ts) for the daemon's use, never returned, logged, or put in an error message.
 */
export interface AiProvider {
  readonly providerId: string;
  /** Unique within the organization; what an aiTask's `provider` names. */
  readonly name: string;
  readonly organization: string;
  readonly kind: AiProviderKind;
  /** openai-compatible: the API's base URL (e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`). */
  readonly baseUrl?: string;
  /** The model asked for when an aiTask names none (local: a label; defaults to the file's name). */
  readonly model: string;
  /** openai-compatible: the bearer key, sealed; absent for servers that need none (Ollama, llama.cpp). */
  readonly apiKey?: string;
  /** local: the GGUF file's absolute path. */
  readonly modelPath?: string;
  /** local: the context size in tokens (default: the model's, capped by the daemon). */
  readonly contextSize?: number;
  /** local: CPU threads for inference (default: chosen by the daemon from the cores it has). */
  readonly threads?: number;
  /** The organization's default provider (at most one per organization: saving one clears the others). */
  readonly isDefault: boolean;
  /** Where its credential came from, when a deploy named it (absent: given over the API). */
  readonly fromSecret?: FromSecret;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** An IMAP mailbox the email trigger watches. The password is kept sealed for the daemon's use, never returned. */
export interface EmailConnection {
  readonly connectionId: string;
  readonly name: string;
  readonly organization: string;
  readonly host: string;
  readonly port: number;
  readonly security: 'TLS' | 'STARTTLS' | 'NONE';
  readonly user: string;
  readonly password: string;
  readonly mailbox: string;
  /** Where its credential came from, when a deploy named it (absent: given over the API). */
  readonly fromSecret?: FromSecret;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A signing secret (sealed: state/secret-fields.ts); a rotated-out one keeps working until `expiresAt`. */
export interface WebhookSecret {
  readonly secret: string;
  readonly expiresAt: string | null;
}

export interface WebhookEndpoint {
  readonly environment: EndpointEnvironment;
  readonly token: string;
  readonly secrets: readonly WebhookSecret[];
}

export interface WebhookRegistration {
  readonly webhookId: string;
  readonly name: string;
  readonly organization: string;
  readonly provider: import('../../shared/webhooks/providers.js').Provider;
  readonly environmentMode: 'SHARED' | 'PER_ENVIRONMENT';
  readonly authType: 'HMAC' | 'NONE';
  readonly custom: import('../../shared/webhooks/providers.js').CustomScheme | null;
  /** The largest body a delivery may have; absent: WEBHOOK_DEFAULT_MAX_BODY_BYTES. */
  readonly maxBodyBytes?: number;
  /** Seconds a delivery's caller waits for the started execution's answer (api/routes/webhook-receive.ts); absent: answered at once. */
  readonly respondWithin?: number;
  endpoints: WebhookEndpoint[];
  /** Where its credential came from, when a deploy named it (absent: given over the API). */
  readonly fromSecret?: FromSecret;
  readonly createdAt: string;
  updatedAt: string;
}

/** A flow and its versions. Versions are immutable once published. */
export interface Flow {
  readonly processId: string;
  /** The organization that first published this processId owns it. */
  readonly organization: string;
  name: string;
  public: boolean;
  versions: Record<string, FlowVersion>;
  /** The version each environment runs. */
  active: Partial<Record<Environment, string>>;
  /** The environments whose schedule triggers of this flow are turned off (absent: none). */
  schedulesOff?: Environment[];
}

/**
 * Where an entry's credential came from (a deploy's `secret: NAME`): the flow secret of that
 * name in `environment`. The entry keeps its own sealed copy; a deploy that finds the secret's
 * value changed seals the new one.
 */
export interface FromSecret {
  readonly name: string;
  readonly environment: Environment;
}

export interface FlowVersion {
  readonly version: string;
  /** The flow definition as published (validated). */
  readonly definition: import('../../shared/flow/types.js').FlowDefinition;
  /** SHA-256 of the canonical JSON of the definition: republishing it gives this version back. */
  readonly hash: string;
  readonly publishedAt: string;
}

export interface Organization {
  readonly name: string;
  readonly createdAt: string;
}

/** An API key as stored: the secret only as a SHA-256 hash (hex). */
export interface ApiKey {
  readonly keyId: string;
  readonly name: string;
  /** Owning organization; null for a system key (not bound to one organization). */
  readonly organization: string | null;
  readonly role: Role;
  readonly secretHash: string;
  status: ApiKeyStatus;
  readonly rateLimitPerMinute: number | null;
  readonly rateLimitPerHour: number | null;
  readonly expiresAt: string | null;
  readonly createdAt: string;
  updatedAt: string;
}
