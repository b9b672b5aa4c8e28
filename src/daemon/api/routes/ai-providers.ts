import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  CreateProviderBody,
  OrganizationQuery,
  ProviderParams,
  UpdateProviderBody,
  type ProviderKind,
  type ProviderList,
  type ProviderTested,
  type ProviderView,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { deleteNamedEntryRoute, namedEntrySchema } from '../route-schemas.js';
import { WfxError } from '../../../shared/errors.js';
import { checkProvider, modelLabelOf } from '../../ai/provider-config.js';
import { openedProviderLookup, providerLookup, withOpenedKey } from '../../ai/lookup.js';
import type { AiAnswer, AiCall, AiRunner } from '../../ai/types.js';
import { uuidv7 } from '../../state/ids.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { WfxRecord } from '../../state/records.js';
import { providerKeyContext } from '../../state/secret-fields.js';
import type { AiProvider, AiProviderKind, WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { Caller } from '../caller.js';
import { actingOrganization, listedOrganization } from '../organization.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

/** The wire's kinds and the state's are one list. */
const SAME_KINDS: [ProviderKind, AiProviderKind] extends [AiProviderKind, ProviderKind] ? true : never = true;
void SAME_KINDS;

export interface AiProviderRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts). */
  readonly catalogue: Catalogue;
  /** Seals an API key as it comes in; opens it for a test call. */
  readonly secrets: SecretBox;
  /** Carries out POST .../test; without it that route answers SERVICE_UNAVAILABLE. */
  readonly ai?: AiRunner;
  readonly now?: () => Date;
}

/** The prompt of POST .../test: tiny, so that any model answers it at once. */
const TEST_PROMPT = 'Reply with the single word: ready';
/** How long a test waits for the whole answer. */
const TEST_TIMEOUT_MS = 30_000;
/** Enough tokens for a word or two, not enough to wait on. */
const TEST_MAX_TOKENS = 16;

/** A provider as the API shows it: never the API key. */
function view(p: AiProvider): ProviderView {
  const { apiKey, ...rest } = p;
  return { ...rest, hasApiKey: apiKey !== undefined };
}

/** `p` without the properties whose value is undefined (so the journal holds none). */
function defined(p: Record<string, unknown>): AiProvider {
  for (const k of Object.keys(p)) if (p[k] === undefined) delete p[k];
  return p as unknown as AiProvider;
}

/** `text` with every occurrence of `secret` cut out: a provider's message never carries its key. */
function redact(text: string, secret: string | undefined): string {
  return secret && secret.length >= 4 ? text.split(secret).join('[redacted]') : text;
}

/** `p` with a PATCH's `changes` (null removes; a new API key sealed by `sealKey`), stamped at `at`. */
function changed(
  p: AiProvider,
  changes: Omit<UpdateProviderBody, 'kind'>,
  at: Date,
  sealKey: (apiKey: string) => string,
): AiProvider {
  // A label that followed the old file's name follows the new one.
  const relabel =
    changes.modelPath !== undefined &&
    changes.model === undefined &&
    p.modelPath !== undefined &&
    p.model === modelLabelOf(p.modelPath);
  return defined({
    ...p,
    ...changes,
    ...(relabel && { model: modelLabelOf(changes.modelPath!) }),
    apiKey: changes.apiKey === null ? undefined : changes.apiKey === undefined ? p.apiKey : sealKey(changes.apiKey),
    threads: changes.threads === null ? undefined : (changes.threads ?? p.threads),
    contextSize: changes.contextSize === null ? undefined : (changes.contextSize ?? p.contextSize),
    updatedAt: at.toISOString(),
  });
}

/** /admin/ai-providers: the model providers aiTasks call (permission ADMIN). */
export function aiProviderRoutes(fastify: FastifyInstance, deps: AiProviderRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue, secrets } = deps;
  const now = deps.now ?? (() => new Date());
  const admin = { auth: { permission: 'ADMIN' as const } };
  const tags = ['ai'];
  const find = (caller: Caller, name: string, named?: string): AiProvider => {
    const organization = actingOrganization(caller, named);
    const p = providerLookup(store.state)(organization, name);
    if (!p) throw new WfxError('NOT_FOUND', `no AI provider ${name}`);
    return p;
  };

  app.post('/admin/ai-providers', {
    config: admin,
    schema: {
      tags,
      summary: 'Register a model provider (the API key is never returned)',
      querystring: OrganizationQuery,
      body: CreateProviderBody,
    },
    handler: async (request, reply) => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      const b = request.body as WithDefaults<CreateProviderBody, 'isDefault'>;
      hostFileAllowed(request.caller!, b.modelPath);
      if (providerLookup(store.state)(organization, b.name))
        throw new WfxError('VALIDATION_ERROR', `an AI provider named ${b.name} exists already`);
      if (b.kind === 'openai-compatible' && b.model === undefined)
        throw new WfxError('VALIDATION_ERROR', 'an openai-compatible provider needs a model');
      const at = now().toISOString();
      const providerId = uuidv7(now());
      const provider = defined({
        providerId,
        name: b.name,
        organization,
        kind: b.kind,
        baseUrl: b.baseUrl,
        model: b.model ?? (b.modelPath === undefined ? undefined : modelLabelOf(b.modelPath)),
        // Sealed here, before its record exists: the journal never holds the key in plain text.
        apiKey:
          b.apiKey === undefined ? undefined : secrets.seal(b.apiKey, providerKeyContext({ organization, providerId })),
        modelPath: b.modelPath,
        threads: b.threads,
        contextSize: b.contextSize,
        isDefault: b.isDefault,
        createdAt: at,
        updatedAt: at,
      });
      await checkProvider(provider);
      // Again after the file check's await: another create may have taken the name meanwhile.
      if (providerLookup(store.state)(organization, b.name))
        throw new WfxError('VALIDATION_ERROR', `an AI provider named ${b.name} exists already`);
      await catalogue.saveProvider(provider);
      return reply.status(201).send(view(provider));
    },
  });

  app.get('/admin/ai-providers', {
    config: admin,
    schema: { tags, summary: 'Model providers (no API keys)', querystring: OrganizationQuery },
    handler: async (request): Promise<ProviderList> => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items = (Object.values(store.state.aiProviders) as AiProvider[])
        .filter((p) => org === null || p.organization === org)
        .sort((a, b) => a.organization.localeCompare(b.organization) || a.name.localeCompare(b.name))
        .map(view);
      return { items };
    },
  });

  app.get('/admin/ai-providers/:name', {
    config: admin,
    schema: namedEntrySchema(tags, 'One model provider (no API key)', ProviderParams),
    handler: async (request) => view(find(request.caller!, request.params.name, request.query.organization)),
  });

  app.patch('/admin/ai-providers/:name', {
    config: admin,
    schema: namedEntrySchema(
      tags,
      'Change a model provider (apiKey: null removes the key; its kind never changes)',
      ProviderParams,
      { body: UpdateProviderBody },
    ),
    handler: async (request) => {
      const { kind, ...changes } = request.body;
      hostFileAllowed(request.caller!, changes.modelPath ?? undefined);
      // The change is merged into the provider as it is when committed: if another request
      // changed or removed it during the file check's await, merge again (bounded).
      for (let attempt = 0; attempt < 5; attempt++) {
        const p = find(request.caller!, request.params.name, request.query.organization);
        if (kind !== undefined && kind !== p.kind)
          throw new WfxError(
            'VALIDATION_ERROR',
            `a provider's kind never changes (${p.name} is ${p.kind}): delete it and create it again`,
          );
        const provider = changed(p, changes, now(), (apiKey) => secrets.seal(apiKey, providerKeyContext(p)));
        await checkProvider(provider);
        if (store.state.aiProviders[p.providerId] !== p) continue;
        await catalogue.saveProvider(provider);
        return view(provider);
      }
      throw new WfxError('SERVICE_UNAVAILABLE', `AI provider ${request.params.name} keeps changing: try again`);
    },
  });

  deleteNamedEntryRoute(fastify, '/admin/ai-providers/:name', {
    config: admin,
    tags: tags,
    summary: 'Remove a model provider',
    params: ProviderParams,
    find,
    remove: (entry) => catalogue.deleteProvider(entry.providerId),
  });

  app.post('/admin/ai-providers/:name/test', {
    config: admin,
    schema: namedEntrySchema(
      tags,
      'Send a tiny prompt through a provider: model, latency, token counts and the answer',
      ProviderParams,
    ),
    handler: async (request, reply): Promise<ProviderTested> => {
      const p = find(request.caller!, request.params.name, request.query.organization);
      if (!deps.ai) throw new WfxError('SERVICE_UNAVAILABLE', 'this daemon runs no model providers');
      const call: AiCall = {
        organization: p.organization,
        provider: p.name,
        messages: [{ role: 'user', content: TEST_PROMPT }],
        responseFormat: 'text',
        maxTokens: TEST_MAX_TOKENS,
        temperature: 0,
        timeoutMs: TEST_TIMEOUT_MS,
        retry: { maxAttempts: 1, initialIntervalMs: 0, backoff: 1 },
        repairs: 0,
      };
      // A caller that goes away stops the call (and frees a local model for others).
      const abort = new AbortController();
      const gone = () => {
        if (!reply.raw.writableEnded) abort.abort();
      };
      reply.raw.once('close', gone);
      const started = performance.now();
      // The opened key, only to cut it out of what the provider answered.
      const key = openedKeyOf(p, secrets);
      try {
        const result = await deps.ai.run(call, openedProviderLookup(store.state, secrets), { signal: abort.signal });
        const latencyMs = Math.round(performance.now() - started);
        if (!result.ok)
          throw new WfxError(
            'AI_PROVIDER_TEST_FAILED',
            redact(`${result.code}: ${result.message}`, key).slice(0, 2000),
            { details: { code: result.code } },
          );
        const answer = result.value as AiAnswer;
        return {
          model: answer.model,
          latencyMs,
          usage: { inputTokens: answer.usage.inputTokens, outputTokens: answer.usage.outputTokens },
          text: redact(answer.text, key),
        };
      } finally {
        reply.raw.off('close', gone);
      }
    },
  });
}

/**
 * A local model is a file on the daemon's host, which the daemon reads and whose absence or
 * permissions its errors name: only a system key (the operator's) registers or moves one, so an
 * organization's admin cannot probe or load the host's files. Throws FORBIDDEN.
 */
function hostFileAllowed(caller: Caller, modelPath: string | undefined): void {
  if (modelPath === undefined || caller.system) return;
  throw new WfxError(
    'FORBIDDEN',
    "a local model is a file on the daemon's host: only a system key registers or changes one (with ?organization=)",
  );
}

/** `p`'s API key opened, or undefined (none, or it cannot be opened: the call says why). */
function openedKeyOf(p: AiProvider, secrets: SecretBox): string | undefined {
  try {
    return withOpenedKey(p, secrets).apiKey;
  } catch {
    return undefined;
  }
}
