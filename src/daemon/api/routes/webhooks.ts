import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { parseDuration } from '../../../shared/duration.js';
import { WfxError } from '../../../shared/errors.js';
import { normalizePayload, PROVIDERS, signDelivery, verifyDelivery, type CustomScheme, type Provider } from '../../../shared/webhooks/providers.js';
import { uuidv7 } from '../../engine/ids.js';
import type { WfxRecord } from '../../state/records.js';
import { ENVIRONMENTS, type EndpointEnvironment, type WebhookEndpoint, type WebhookRegistration, type WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import { liveSecrets, schemeOf, type WebhookReceiver } from '../../triggers/webhooks.js';
import type { Caller } from '../caller.js';
import { actingOrganization, listedOrganization, NAME_SCHEMA, ORG_QUERY } from '../organization.js';

export interface WebhookRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly receiver: WebhookReceiver;
  readonly now?: () => Date;
}

const nameParams = { type: 'object', required: ['name'], properties: { name: NAME_SCHEMA } } as const;
const ENDPOINT_ENVS = ['ALL', ...ENVIRONMENTS] as const;

const newToken = () => randomBytes(32).toString('base64url');
/** A generated signing secret, in the form the provider's own tools expect. */
const newSecret = (provider: Provider) => (provider === 'STANDARD' ? `whsec_${randomBytes(24).toString('base64')}` : `whsec_${randomBytes(24).toString('base64url')}`);

/** A registration as the API shows it: endpoints with their URLs, never a signing secret. */
function view(w: WebhookRegistration, baseUrl: string) {
  return {
    webhookId: w.webhookId,
    name: w.name,
    organization: w.organization,
    provider: w.provider,
    environmentMode: w.environmentMode,
    authType: w.authType,
    ...(w.custom && { custom: w.custom }),
    endpoints: w.endpoints.map((e) => ({ environment: e.environment, url: `${baseUrl}/webhook/receive/${e.token}`, secrets: e.secrets.length })),
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/** POST /webhook/receive/{token}, and /admin/webhooks. */
export function webhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): void {
  const { store, receiver } = deps;
  const now = deps.now ?? (() => new Date());
  const state = store.state;
  const admin = { auth: { permission: 'ADMIN' as const } };

  const find = (caller: Caller, name: string, org?: string): WebhookRegistration => {
    const organization = actingOrganization(caller, org);
    const w = Object.values(state.webhooks).find((x) => x.organization === organization && x.name === name);
    if (!w) throw new WfxError('NOT_FOUND', `no webhook registration ${name}`);
    return w;
  };

  // The receive endpoint sees the raw bytes: signatures are computed over them exactly.
  void app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    raw.post('/webhook/receive/:token', {
      config: { auth: { permission: 'none' } },
      schema: {
        tags: ['webhooks'],
        summary: 'Receive a provider\'s delivery: 200 {received: true} once it is journaled; verified and processed after',
        params: { type: 'object', required: ['token'], properties: { token: { type: 'string', maxLength: 200 } } },
      },
      handler: async (request: FastifyRequest<{ Params: { token: string } }>) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const endpoint = receiver.endpointOf(request.params.token);
        if (!endpoint) throw new WfxError('NOT_FOUND', 'no webhook endpoint has this token');
        // Slack checks an Events API URL by asking for its challenge back, signed like any delivery.
        if (endpoint.webhook.provider === 'SLACK') {
          const payload = normalizePayload(body, request.headers['content-type']) as { type?: unknown; challenge?: unknown };
          if (payload && payload.type === 'url_verification' && typeof payload.challenge === 'string') {
            const at = now();
            const verdict = verifyDelivery(schemeOf(endpoint.webhook), liveSecrets(endpoint.webhook, endpoint.environment, at), request.headers, body, at);
            if (verdict.ok) return { challenge: payload.challenge };
          }
        }
        await receiver.receive(request.params.token, request.headers, body);
        return { received: true };
      },
    });
  });

  app.post('/admin/webhooks', {
    config: admin,
    schema: {
      tags: ['webhooks'],
      summary: 'Register a webhook; endpoint tokens and signing secrets are in this answer only',
      querystring: ORG_QUERY,
      body: {
        type: 'object',
        required: ['name', 'provider'],
        additionalProperties: false,
        properties: {
          name: NAME_SCHEMA,
          provider: { type: 'string', enum: [...PROVIDERS] },
          environmentMode: { type: 'string', enum: ['SHARED', 'PER_ENVIRONMENT'], default: 'SHARED' },
          authType: { type: 'string', enum: ['HMAC', 'NONE'], default: 'HMAC' },
          secret: { type: 'string', minLength: 8, maxLength: 500, description: 'the signing secret; generated when absent' },
          signatureHeader: { type: 'string', maxLength: 100 },
          algorithm: { type: 'string', enum: ['sha1', 'sha256', 'sha512'] },
          encoding: { type: 'string', enum: ['hex', 'base64'] },
          prefix: { type: 'string', maxLength: 50 },
          eventTypeHeader: { type: 'string', maxLength: 100 },
          eventTypePath: { type: 'string', maxLength: 200 },
          eventIdHeader: { type: 'string', maxLength: 100 },
          eventIdPath: { type: 'string', maxLength: 200 },
        },
      },
    },
    handler: async (request: FastifyRequest<{ Querystring: { organization?: string }; Body: Record<string, string | undefined> & { name: string; provider: Provider } }>, reply) => {
      const caller = request.caller!;
      const b = request.body;
      const organization = actingOrganization(caller, request.query.organization);
      if (Object.values(state.webhooks).some((w) => w.organization === organization && w.name === b.name)) {
        throw new WfxError('VALIDATION_ERROR', `a webhook registration named ${b.name} exists already`);
      }
      let custom: CustomScheme | null = null;
      if (b.provider === 'CUSTOM') {
        if (b.authType !== 'NONE' && !b.signatureHeader) throw new WfxError('VALIDATION_ERROR', 'a CUSTOM provider needs signatureHeader (or authType NONE)');
        custom = {
          signatureHeader: (b.signatureHeader ?? 'x-signature').toLowerCase(),
          algorithm: (b.algorithm ?? 'sha256') as CustomScheme['algorithm'],
          encoding: (b.encoding ?? 'hex') as CustomScheme['encoding'],
          ...(b.prefix !== undefined && { prefix: b.prefix }),
          ...(b.eventTypeHeader !== undefined && { eventTypeHeader: b.eventTypeHeader.toLowerCase() }),
          ...(b.eventTypePath !== undefined && { eventTypePath: b.eventTypePath }),
          ...(b.eventIdHeader !== undefined && { eventIdHeader: b.eventIdHeader.toLowerCase() }),
          ...(b.eventIdPath !== undefined && { eventIdPath: b.eventIdPath }),
        };
      }
      const at = now().toISOString();
      const envs: EndpointEnvironment[] = b.environmentMode === 'PER_ENVIRONMENT' ? ['DEVELOPMENT', 'PRODUCTION'] : ['ALL'];
      // A given secret is used for every endpoint; generated ones differ per endpoint.
      const endpoints: WebhookEndpoint[] = envs.map((environment) => ({
        environment,
        token: newToken(),
        secrets: b.authType === 'NONE' ? [] : [{ secret: b.secret ?? newSecret(b.provider), expiresAt: null }],
      }));
      const webhook: WebhookRegistration = {
        webhookId: uuidv7(now()),
        name: b.name,
        organization,
        provider: b.provider,
        environmentMode: b.environmentMode as WebhookRegistration['environmentMode'],
        authType: b.authType as WebhookRegistration['authType'],
        custom,
        endpoints,
        createdAt: at,
        updatedAt: at,
      };
      await store.commit({ type: 'webhook.saved', webhook });
      const base = baseUrlOf(request);
      return reply.status(201).send({
        ...view(webhook, base),
        endpoints: endpoints.map((e) => ({ environment: e.environment, token: e.token, url: `${base}/webhook/receive/${e.token}`, secret: e.secrets[0]?.secret ?? null })),
      });
    },
  });

  app.get('/admin/webhooks', {
    config: admin,
    schema: { tags: ['webhooks'], summary: 'Webhook registrations (no secrets)', querystring: ORG_QUERY },
    handler: async (request: FastifyRequest<{ Querystring: { organization?: string } }>) => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items = Object.values(state.webhooks)
        .filter((w) => org === null || w.organization === org)
        .map((w) => view(w, baseUrlOf(request)));
      return { items };
    },
  });

  app.get('/admin/webhooks/:name', {
    config: admin,
    schema: { tags: ['webhooks'], summary: 'One webhook registration (no secrets)', params: nameParams, querystring: ORG_QUERY },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string } }>) =>
      view(find(request.caller!, request.params.name, request.query.organization), baseUrlOf(request)),
  });

  app.delete('/admin/webhooks/:name', {
    config: admin,
    schema: { tags: ['webhooks'], summary: 'Delete a webhook registration (its endpoints stop at once)', params: nameParams, querystring: ORG_QUERY },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string } }>) => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      await store.commit({ type: 'webhook.deleted', webhookId: w.webhookId });
      return { name: w.name, deleted: true };
    },
  });

  app.post('/admin/webhooks/:name/rotate', {
    config: admin,
    schema: {
      tags: ['webhooks'],
      summary: 'Rotate the signing secret: the new one is in this answer only; the previous one keeps working for previousValidFor',
      params: nameParams,
      querystring: ORG_QUERY,
      body: {
        type: 'object',
        additionalProperties: false,
        properties: {
          environment: { type: 'string', enum: [...ENDPOINT_ENVS] },
          secret: { type: 'string', minLength: 8, maxLength: 500 },
          previousValidFor: { type: 'string', default: '24h', description: 'a duration; 0s ends the previous secret now' },
        },
      },
    },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string }; Body: { environment?: EndpointEnvironment; secret?: string; previousValidFor: string } }>) => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      if (w.authType === 'NONE') throw new WfxError('VALIDATION_ERROR', 'a registration with authType NONE has no secret');
      let keepMs: number;
      try {
        keepMs = parseDuration(request.body.previousValidFor);
      } catch (err) {
        throw new WfxError('VALIDATION_ERROR', (err as Error).message);
      }
      const at = now();
      const until = new Date(at.getTime() + keepMs).toISOString();
      const rotated: Array<{ environment: EndpointEnvironment; secret: string }> = [];
      const endpoints = w.endpoints.map((e) => {
        if (request.body.environment !== undefined && e.environment !== request.body.environment) return e;
        const secret = request.body.secret ?? newSecret(w.provider);
        rotated.push({ environment: e.environment, secret });
        const previous = e.secrets.filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > at.getTime()).map((s) => ({ secret: s.secret, expiresAt: keepMs === 0 ? at.toISOString() : until }));
        return { ...e, secrets: [{ secret, expiresAt: null }, ...previous.filter((s) => Date.parse(s.expiresAt) > at.getTime())] };
      });
      await store.commit({ type: 'webhook.saved', webhook: { ...w, endpoints, updatedAt: at.toISOString() } });
      return { name: w.name, rotated, previousValidUntil: keepMs === 0 ? null : until };
    },
  });

  app.get('/admin/webhooks/:name/deliveries', {
    config: admin,
    schema: { tags: ['webhooks'], summary: 'The last deliveries, newest first: signature verdict, event, what started, or why nothing did', params: nameParams, querystring: ORG_QUERY },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string } }>) => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      const pending = Object.values(state.pendingDeliveries)
        .filter((d) => d.webhookId === w.webhookId)
        .map((d) => ({ deliveryId: d.deliveryId, receivedAt: d.receivedAt, environment: d.environment, pending: true }));
      return { name: w.name, items: [...pending, ...[...(state.webhookDeliveries[w.webhookId] ?? [])].reverse()] };
    },
  });

  app.post('/admin/webhooks/:name/sign', {
    config: admin,
    schema: {
      tags: ['webhooks'],
      summary: 'Sign a test payload as the provider would (wfx webhooks send); the secret never leaves the daemon',
      params: nameParams,
      querystring: ORG_QUERY,
      body: {
        type: 'object',
        required: ['body'],
        additionalProperties: false,
        properties: {
          body: { type: 'string', maxLength: 2_000_000, description: 'the payload, base64' },
          environment: { type: 'string', enum: [...ENDPOINT_ENVS] },
          eventType: { type: 'string', maxLength: 200 },
        },
      },
    },
    handler: async (request: FastifyRequest<{ Params: { name: string }; Querystring: { organization?: string }; Body: { body: string; environment?: EndpointEnvironment; eventType?: string } }>) => {
      const w = find(request.caller!, request.params.name, request.query.organization);
      const environment = request.body.environment ?? (w.environmentMode === 'SHARED' ? 'ALL' : 'DEVELOPMENT');
      const endpoint = w.endpoints.find((e) => e.environment === environment);
      if (!endpoint) throw new WfxError('VALIDATION_ERROR', `${w.name} has no ${environment} endpoint (its endpoints: ${w.endpoints.map((e) => e.environment).join(', ')})`);
      const at = now();
      const headers = signDelivery(schemeOf(w), liveSecrets(w, environment, at)[0] ?? '', Buffer.from(request.body.body, 'base64'), at, {
        ...(request.body.eventType !== undefined && { eventType: request.body.eventType }),
      });
      return { url: `${baseUrlOf(request)}/webhook/receive/${endpoint.token}`, environment, headers };
    },
  });
}
