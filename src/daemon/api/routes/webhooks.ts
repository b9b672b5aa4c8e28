import { randomBytes } from 'node:crypto';
import { customSchemeOf, newToken } from '../../catalogue/webhook-entry.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  OrganizationQuery,
  RegisterWebhookBody,
  RotateBody,
  SignBody,
  UpdateWebhookBody,
  WebhookParams,
  type EndpointEnvironment,
  type RegisteredWebhook,
  type Rotated,
  type Signed,
  type WebhookList,
  type WebhookView,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { deleteNamedEntryRoute, namedEntrySchema } from '../route-schemas.js';
import { parseDuration } from '../../../shared/duration.js';
import { wayOut } from '../../triggers/webhook-route.js';
import { WfxError } from '../../../shared/errors.js';
import { signDelivery, type Provider } from '../../../shared/webhooks/providers.js';
import { uuidv7 } from '../../state/ids.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import type { WfxRecord } from '../../state/records.js';
import { webhookSecretContext } from '../../state/secret-fields.js';
import { type WebhookEndpoint, type WebhookRegistration, type WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { Engine } from '../../engine/engine.js';
import { liveSecrets, maxBodyOf, schemeOf, type WebhookReceiver } from '../../triggers/webhooks.js';
import { webhookReceiveRoute } from './webhook-receive.js';
import { webhookDeliveryRoutes } from './webhook-deliveries.js';
import type { Caller } from '../caller.js';
import type { StreamHub } from '../streams.js';
import { ownOrigin } from '../public-origin.js';
import { actingOrganization, listedOrganization } from '../organization.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

export interface WebhookRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts). */
  readonly catalogue: Catalogue;
  /** Receives deliveries; its secrets (the engine's) seal signing secrets as they come in, and open them to sign a test payload. */
  readonly receiver: WebhookReceiver;
  /** Open event streams, ended at a graceful stop. */
  readonly hub: StreamHub;
  /** The engine a registration with `respondWithin` reads its execution's answer from. */
  readonly engine: Engine;
  readonly heartbeatSeconds?: number;
  readonly now?: () => Date;
}

/** A generated signing secret, in the form the provider's own tools expect. */
const newSecret = (provider: Provider) =>
  provider === 'STANDARD'
    ? `whsec_${randomBytes(24).toString('base64')}`
    : `whsec_${randomBytes(24).toString('base64url')}`;

/** A registration as the API shows it: endpoints with their URLs, never a signing secret. */
function view(w: WebhookRegistration, baseUrl: string): WebhookView {
  return {
    webhookId: w.webhookId,
    name: w.name,
    organization: w.organization,
    provider: w.provider,
    environmentMode: w.environmentMode,
    authType: w.authType,
    ...(w.custom && { custom: w.custom }),
    maxBodyBytes: maxBodyOf(w),
    ...(w.respondWithin !== undefined && { respondWithin: w.respondWithin }),
    endpoints: w.endpoints.map((e) => ({
      environment: e.environment,
      url: `${baseUrl}/webhook/receive/${e.token}`,
      secrets: e.secrets.length,
    })),
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

const baseUrlOf = (request: FastifyRequest) => ownOrigin(request);

/** POST /webhook/receive/{token} (webhook-receive.ts), and /admin/webhooks. */
export function webhookRoutes(fastify: FastifyInstance, deps: WebhookRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue, receiver } = deps;
  const secrets: SecretBox = receiver.secrets;
  const now = deps.now ?? (() => new Date());
  const state = store.state;
  const admin = { auth: { permission: 'ADMIN' as const } };

  const find = (caller: Caller, name: string, org?: string): WebhookRegistration => {
    const organization = actingOrganization(caller, org);
    const w = Object.values(state.webhooks).find((x) => x.organization === organization && x.name === name);
    if (!w) throw new WfxError('NOT_FOUND', `no webhook registration ${name}`);
    return w;
  };

  webhookReceiveRoute(fastify, { receiver, now, answers: { engine: deps.engine, hub: deps.hub } });

  app.post('/admin/webhooks', {
    config: admin,
    schema: {
      tags: ['webhooks'],
      summary: 'Register a webhook; endpoint tokens and signing secrets are in this answer only',
      querystring: OrganizationQuery,
      body: RegisterWebhookBody,
    },
    handler: async (request, reply) => {
      const caller = request.caller!;
      const b = request.body as WithDefaults<RegisterWebhookBody, 'environmentMode' | 'authType'>;
      const organization = actingOrganization(caller, request.query.organization);
      if (Object.values(state.webhooks).some((w) => w.organization === organization && w.name === b.name)) {
        throw new WfxError('VALIDATION_ERROR', `a webhook registration named ${b.name} exists already`);
      }
      const custom = customSchemeOf(b);
      const at = now().toISOString();
      const webhookId = uuidv7(now());
      const envs: EndpointEnvironment[] =
        b.environmentMode === 'PER_ENVIRONMENT' ? ['DEVELOPMENT', 'PRODUCTION'] : ['ALL'];
      // A given secret is used for every endpoint; generated ones differ per endpoint. Each is
      // sealed here, before its record exists; the answer shows it in plain text, this once.
      const plain = new Map(envs.map((e) => [e, b.authType === 'NONE' ? null : (b.secret ?? newSecret(b.provider))]));
      const endpoints: WebhookEndpoint[] = envs.map((environment) => {
        const secret = plain.get(environment) ?? null;
        const context = webhookSecretContext({ organization, webhookId }, environment);
        return {
          environment,
          token: newToken(),
          secrets: secret === null ? [] : [{ secret: secrets.seal(secret, context), expiresAt: null }],
        };
      });
      const webhook: WebhookRegistration = {
        webhookId,
        name: b.name,
        organization,
        provider: b.provider,
        environmentMode: b.environmentMode as WebhookRegistration['environmentMode'],
        authType: b.authType as WebhookRegistration['authType'],
        custom,
        ...(b.maxBodyBytes !== undefined && { maxBodyBytes: b.maxBodyBytes }),
        ...(b.respondWithin !== undefined && { respondWithin: b.respondWithin }),
        endpoints,
        createdAt: at,
        updatedAt: at,
      };
      await catalogue.saveWebhook(webhook);
      const base = baseUrlOf(request);
      const registered: RegisteredWebhook = {
        ...view(webhook, base),
        endpoints: endpoints.map((e) => ({
          environment: e.environment,
          token: e.token,
          url: `${base}/webhook/receive/${e.token}`,
          secret: plain.get(e.environment) ?? null,
        })),
      };
      return reply.status(201).send(registered);
    },
  });

  app.get('/admin/webhooks', {
    config: admin,
    schema: { tags: ['webhooks'], summary: 'Webhook registrations (no secrets)', querystring: OrganizationQuery },
    handler: async (request): Promise<WebhookList> => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items = Object.values(state.webhooks)
        .filter((w) => org === null || w.organization === org)
        .map((w) => view(w, baseUrlOf(request)));
      return { items };
    },
  });

  app.get('/admin/webhooks/:name', {
    config: admin,
    schema: namedEntrySchema(['webhooks'], 'One webhook registration (no secrets)', WebhookParams),
    handler: async (request) =>
      view(find(request.caller!, request.params.name, request.query.organization), baseUrlOf(request)),
  });

  app.patch('/admin/webhooks/:name', {
    config: admin,
    schema: namedEntrySchema(
      ['webhooks'],
      "Change a registration's limits (maxBodyBytes) and answer (respondWithin); its endpoints and secrets stay",
      WebhookParams,
      { body: UpdateWebhookBody },
    ),
    handler: async (request) => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      const { respondWithin, ...changes } = request.body;
      const { respondWithin: _was, ...kept } = w;
      const answer = respondWithin === undefined ? w.respondWithin : (respondWithin ?? undefined);
      const webhook: WebhookRegistration = {
        ...kept,
        ...changes,
        ...(answer !== undefined && { respondWithin: answer }),
        updatedAt: now().toISOString(),
      };
      await catalogue.saveWebhook(webhook);
      return view(webhook, baseUrlOf(request));
    },
  });

  deleteNamedEntryRoute(fastify, '/admin/webhooks/:name', {
    config: admin,
    tags: ['webhooks'],
    summary: 'Delete a webhook registration (its endpoints stop at once)',
    params: WebhookParams,
    find,
    remove: (entry) => catalogue.deleteWebhook(entry.webhookId),
  });

  app.post('/admin/webhooks/:name/rotate', {
    config: admin,
    schema: namedEntrySchema(
      ['webhooks'],
      'Rotate the signing secret: the new one is in this answer only; the previous one keeps working for previousValidFor',
      WebhookParams,
      { body: RotateBody },
    ),
    handler: async (request): Promise<Rotated> => {
      const body = request.body as WithDefaults<RotateBody, 'previousValidFor'>;
      const w = find(request.caller!, request.params.name, request.query.organization);
      if (w.authType === 'NONE')
        throw new WfxError('VALIDATION_ERROR', 'a registration with authType NONE has no secret');
      let keepMs: number;
      try {
        keepMs = parseDuration(body.previousValidFor);
      } catch (err) {
        throw new WfxError('VALIDATION_ERROR', (err as Error).message);
      }
      const at = now();
      const until = new Date(at.getTime() + keepMs).toISOString();
      const rotated: Array<{ environment: EndpointEnvironment; secret: string }> = [];
      const endpoints = w.endpoints.map((e) => {
        if (body.environment !== undefined && e.environment !== body.environment) return e;
        const secret = body.secret ?? newSecret(w.provider);
        rotated.push({ environment: e.environment, secret });
        const previous = e.secrets
          .filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > at.getTime())
          .map((s) => ({ secret: s.secret, expiresAt: keepMs === 0 ? at.toISOString() : until }));
        const sealed = secrets.seal(secret, webhookSecretContext(w, e.environment));
        return {
          ...e,
          secrets: [
            { secret: sealed, expiresAt: null },
            ...previous.filter((s) => Date.parse(s.expiresAt) > at.getTime()),
          ],
        };
      });
      await catalogue.saveWebhook({ ...w, endpoints, updatedAt: at.toISOString() });
      return { name: w.name, rotated, previousValidUntil: keepMs === 0 ? null : until };
    },
  });

  webhookDeliveryRoutes(fastify, { ...deps, find });

  app.post('/admin/webhooks/:name/sign', {
    config: admin,
    schema: namedEntrySchema(
      ['webhooks'],
      'Sign a test payload as the provider would (wfx webhooks send); the secret never leaves the daemon',
      WebhookParams,
      { body: SignBody },
    ),
    handler: async (request): Promise<Signed> => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      const environment = request.body.environment ?? (w.environmentMode === 'SHARED' ? 'ALL' : 'DEVELOPMENT');
      const endpoint = w.endpoints.find((e) => e.environment === environment);
      if (!endpoint)
        throw new WfxError(
          'VALIDATION_ERROR',
          `${w.name} has no ${environment} endpoint (its endpoints: ${w.endpoints.map((e) => e.environment).join(', ')}): ${
            w.environmentMode === 'SHARED'
              ? `send without --env, to its shared endpoint. ${wayOut(w, environment === 'PRODUCTION' ? 'PRODUCTION' : 'DEVELOPMENT', receiver.sharedFallback)}`
              : 'send with --env DEVELOPMENT or --env PRODUCTION'
          }`,
        );
      const at = now();
      const headers = signDelivery(
        schemeOf(w),
        liveSecrets(w, environment, at, secrets)[0] ?? '',
        Buffer.from(request.body.body, 'base64'),
        at,
        {
          ...(request.body.eventType !== undefined && { eventType: request.body.eventType }),
        },
      );
      return { url: `${baseUrlOf(request)}/webhook/receive/${endpoint.token}`, environment, headers };
    },
  });
}
