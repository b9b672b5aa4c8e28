/* Model providers for aiTask (/admin/ai-providers). Answers are types only. */
import { Type, type Static } from './schema.js';
import { Name, Nullable, PatchBody, StringEnum, type CatalogueEntryView } from './common.js';

/** The kinds of provider: an OpenAI-compatible HTTP API, or a GGUF model file run in the daemon. */
export const PROVIDER_KINDS = ['openai-compatible', 'local'] as const;
/** A provider kind (one of PROVIDER_KINDS). */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The most CPU threads a local provider may ask for. */
export const MAX_PROVIDER_THREADS = 64;

/** The fields of a provider a caller sets; which apply depends on `kind` (checked by the route). */
const fields = {
  baseUrl: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'openai-compatible: the API base URL, http(s), without credentials, query or fragment',
  }),
  model: Type.String({ minLength: 1, maxLength: 300 }),
  apiKey: Type.String({ minLength: 1, maxLength: 4000 }),
  modelPath: Type.String({ minLength: 1, maxLength: 4000, description: "local: the GGUF file's absolute path" }),
  threads: Type.Integer({ minimum: 1, maximum: MAX_PROVIDER_THREADS }),
  contextSize: Type.Integer({ minimum: 64, maximum: 1_048_576 }),
  isDefault: Type.Boolean(),
};

/** Path parameters of /admin/ai-providers/{name}. */
export const ProviderParams = Type.Object({ name: Name });
export type ProviderParams = Static<typeof ProviderParams>;

/**
 * Body of POST /admin/ai-providers. openai-compatible needs `baseUrl` and `model` (`apiKey`
 * optional: local servers take none); local needs `modelPath` (`model`: a label, default the
 * file's name without `.gguf`). A field of the other kind is a VALIDATION_ERROR.
 */
export const CreateProviderBody = Type.Object(
  {
    name: Name,
    kind: StringEnum(PROVIDER_KINDS),
    baseUrl: Type.Optional(fields.baseUrl),
    model: Type.Optional(fields.model),
    apiKey: Type.Optional(fields.apiKey),
    modelPath: Type.Optional(fields.modelPath),
    threads: Type.Optional(fields.threads),
    contextSize: Type.Optional(fields.contextSize),
    isDefault: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type CreateProviderBody = Static<typeof CreateProviderBody>;

/**
 * Body of PATCH /admin/ai-providers/{name}: at least one field. `kind` may be given only as it
 * is (a provider's kind never changes); null removes an optional field (`apiKey`, `threads`,
 * `contextSize`).
 */
export const UpdateProviderBody = PatchBody({
  kind: Type.Optional(StringEnum(PROVIDER_KINDS)),
  baseUrl: Type.Optional(fields.baseUrl),
  model: Type.Optional(fields.model),
  apiKey: Type.Optional(Nullable<string>('string', { minLength: 1, maxLength: 4000 })),
  modelPath: Type.Optional(fields.modelPath),
  threads: Type.Optional(Nullable<number>('integer', { minimum: 1, maximum: MAX_PROVIDER_THREADS })),
  contextSize: Type.Optional(Nullable<number>('integer', { minimum: 64, maximum: 1_048_576 })),
  isDefault: Type.Optional(fields.isDefault),
});
export type UpdateProviderBody = Static<typeof UpdateProviderBody>;

/** A provider as the API shows it: never the API key, only whether it has one. */
export interface ProviderView extends CatalogueEntryView {
  readonly providerId: string;
  readonly kind: ProviderKind;
  /** openai-compatible only. */
  readonly baseUrl?: string;
  readonly model: string;
  /** local only. */
  readonly modelPath?: string;
  readonly threads?: number;
  readonly contextSize?: number;
  readonly isDefault: boolean;
  readonly hasApiKey: boolean;
}

/** Answer of GET /admin/ai-providers. */
export interface ProviderList {
  readonly items: readonly ProviderView[];
}

/** Answer of POST /admin/ai-providers/{name}/test: one tiny prompt, answered. */
export interface ProviderTested {
  /** The model that answered (as the provider named it). */
  readonly model: string;
  /** From sending the prompt to the whole answer, in milliseconds. */
  readonly latencyMs: number;
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
  /** The answer's text. */
  readonly text: string;
}
