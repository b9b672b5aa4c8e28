import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  CreateKeyBody,
  EnvParams,
  EnvVariableParams,
  FlowParams,
  FlowQuery,
  KeyParams,
  OrganizationQuery,
  PublishBody,
  SetVariableBody,
  UpdateKeyBody,
  type CreatedKey,
  type FlowDetail,
  type FlowList,
  type KeyList,
  type KeyView,
  type Published,
  type VariableChanged,
  type Variables,
  type VersionInfo,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { namedEntrySchema } from '../route-schemas.js';
import { parseDuration } from '../../../shared/duration.js';
import { WfxError } from '../../../shared/errors.js';
import { ownEntry } from '../../../shared/json-object.js';
import type { FlowProblem } from '../../../shared/flow/validate.js';
import { newApiKey } from '../../auth/api-keys.js';
import type { FlowChecker } from '../../flows/check.js';
import { publishFlow } from '../../flows/publish.js';
import { flowListing } from '../../flows/running-version.js';
import type { WfxRecord } from '../../state/records.js';
import { ROLE_PERMISSIONS, type ApiKey, type FlowVersion, type WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import type { Caller } from '../caller.js';
import { actingOrganization, listedOrganization } from '../organization.js';
import type { KeyRateLimiter } from '../rate-limit.js';
import type { SecretBox } from '../../secrets/secret-box.js';
import { secretsRoutes } from './secrets.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

export interface AdminRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts). */
  readonly catalogue: Catalogue;
  readonly limiter: KeyRateLimiter;
  /** Validates and hashes flows to publish. */
  readonly flowChecker: FlowChecker;
  /** The secrets keys (GET /admin/secrets, POST /admin/secrets/rotate: routes/secrets.ts). */
  readonly secrets: SecretBox;
  readonly now?: () => Date;
}

/** A key as the API shows it: never the secret, never its hash. */
function keyView(key: ApiKey): KeyView {
  return {
    keyId: key.keyId,
    name: key.name,
    role: key.role,
    permissions: ROLE_PERMISSIONS[key.role],
    organization: key.organization,
    system: key.organization === null,
    status: key.status,
    rateLimitPerMinute: key.rateLimitPerMinute,
    rateLimitPerHour: key.rateLimitPerHour,
    expiresAt: key.expiresAt,
    createdAt: key.createdAt,
    updatedAt: key.updatedAt,
  };
}

/** /admin/api-keys, /admin/flows (which version runs where: flow-environments.ts), /admin/environments/{env}/variables, /admin/secrets. */
export function adminRoutes(fastify: FastifyInstance, deps: AdminRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue } = deps;
  const now = deps.now ?? (() => new Date());
  secretsRoutes(fastify, { store, catalogue, secrets: deps.secrets, now });
  const state = store.state;
  const admin = { auth: { permission: 'ADMIN' as const } };

  /** A key the caller may manage: system admins any, org admins their organization's (never system keys). */
  const manageable = (caller: Caller, keyId: string): ApiKey => {
    const key = ownEntry(state.apiKeys, keyId);
    if (!key || (!caller.system && key.organization !== caller.organization))
      throw new WfxError('NOT_FOUND', `no API key ${keyId}`);
    return key;
  };

  app.post('/admin/api-keys', {
    config: admin,
    schema: {
      tags: ['admin'],
      summary: 'Create an API key; its secret is in this answer only',
      body: CreateKeyBody,
    },
    handler: async (request, reply) => {
      const caller = request.caller!;
      const b = request.body as WithDefaults<CreateKeyBody, 'role' | 'system'>;
      if (b.system && !caller.system) throw new WfxError('FORBIDDEN', 'only a system admin creates system keys');
      if (b.system && b.organization !== undefined)
        throw new WfxError('VALIDATION_ERROR', 'a system key has no organization');
      const organization = b.system ? null : actingOrganization(caller, b.organization);
      const at = now();
      let expiresAt = b.expiresAt ?? null;
      if (b.expiresIn !== undefined) {
        try {
          expiresAt = new Date(at.getTime() + parseDuration(b.expiresIn)).toISOString();
        } catch (err) {
          throw new WfxError('VALIDATION_ERROR', (err as Error).message);
        }
      }
      refusePastExpiry(expiresAt, at);
      const { key, apiKey } = newApiKey({
        name: b.name,
        organization,
        role: b.role,
        at,
        rateLimitPerMinute: b.rateLimitPerMinute,
        rateLimitPerHour: b.rateLimitPerHour,
        expiresAt,
      });
      await catalogue.createKey(key, at.toISOString());
      const created: CreatedKey = { ...keyView(key), apiKey };
      return reply.status(201).send(created);
    },
  });

  app.get('/admin/api-keys', {
    config: admin,
    schema: { tags: ['admin'], summary: 'API keys the caller manages', querystring: OrganizationQuery },
    handler: async (request): Promise<KeyList> => {
      const caller = request.caller!;
      const org = listedOrganization(caller, request.query.organization);
      const items = Object.values(state.apiKeys)
        .filter((k) => org === null || k.organization === org)
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))
        .map(keyView);
      return { items };
    },
  });

  app.get('/admin/api-keys/:keyId', {
    config: admin,
    schema: { tags: ['admin'], summary: 'One API key', params: KeyParams },
    handler: async (request) => keyView(manageable(request.caller!, request.params.keyId)),
  });

  app.patch('/admin/api-keys/:keyId', {
    config: admin,
    schema: {
      tags: ['admin'],
      summary: "Change a key's name, rate limits or expiry",
      params: KeyParams,
      body: UpdateKeyBody,
    },
    handler: async (request) => {
      const key = manageable(request.caller!, request.params.keyId);
      if (key.status === 'REVOKED') throw new WfxError('KEY_REVOKED', `API key ${key.keyId} is revoked`);
      const at = now();
      refusePastExpiry(request.body.expiresAt ?? null, at);
      await catalogue.updateKey(key.keyId, request.body, at.toISOString());
      return keyView(state.apiKeys[key.keyId]!);
    },
  });

  for (const [action, status] of [
    ['suspend', 'SUSPENDED'],
    ['activate', 'ACTIVE'],
    ['revoke', 'REVOKED'],
  ] as const) {
    app.post(`/admin/api-keys/:keyId/${action}`, {
      config: admin,
      schema: {
        tags: ['admin'],
        summary: `${action[0]!.toUpperCase()}${action.slice(1)} an API key`,
        params: KeyParams,
      },
      handler: async (request) => {
        const key = manageable(request.caller!, request.params.keyId);
        if (key.status === 'REVOKED' && status !== 'REVOKED')
          throw new WfxError('KEY_REVOKED', `API key ${key.keyId} is revoked`);
        if (key.status !== status) await catalogue.setKeyStatus(key.keyId, status, now().toISOString());
        else await store.flush(); // already so: make sure that is on disk before saying it
        if (status === 'REVOKED') deps.limiter.forget(key.keyId);
        return keyView(state.apiKeys[key.keyId]!);
      },
    });
  }

  // --- flows --------------------------------------------------------------------------

  const publish = { auth: { permission: 'WORKFLOW_PUBLISH' as const } };
  const visibleFlow = (caller: Caller, processId: string) => {
    const flow = ownEntry(state.flows, processId);
    if (!flow || (caller.organization !== null && flow.organization !== caller.organization))
      throw new WfxError('PROCESS_NOT_FOUND', `no flow ${processId}`);
    return flow;
  };

  app.post('/admin/flows', {
    config: publish,
    schema: {
      tags: ['flows'],
      summary:
        'Validate and publish a flow: the next version, or the existing one if identical; activates it in the environment',
      body: PublishBody,
    },
    handler: async (request): Promise<Published> => {
      const b = request.body as WithDefaults<PublishBody, 'environment'>;
      if ((b.source === undefined) === (b.definition === undefined))
        throw new WfxError('VALIDATION_ERROR', 'send exactly one of source and definition');
      // The organization first: its checks wait in their own line (check-pool.ts).
      const organization = actingOrganization(request.caller!, b.organization);
      const checked = await deps.flowChecker.check(
        organization,
        b.source !== undefined ? { source: b.source } : { definition: b.definition },
      );
      if (!checked.ok) {
        const count = checked.problems.length;
        throw new WfxError('FLOW_INVALID', `the flow has ${count} problem${count === 1 ? '' : 's'}`, {
          details: { problems: checked.problems },
        });
      }
      return publishFlow(store, {
        definition: checked.flow,
        hash: checked.hash,
        organization,
        environment: b.environment,
        now: now(),
        dryRun: b.dryRun === true,
      }).catch(async (err: unknown) => {
        // The publish's own checks know node and property, not where they stand in the source.
        const problems = ((err as WfxError).details as { problems?: FlowProblem[] } | undefined)?.problems;
        if (b.source !== undefined && err instanceof WfxError && err.code === 'FLOW_INVALID' && problems) {
          const located = await deps.flowChecker.locate(organization, b.source, problems);
          throw new WfxError(err.code, err.message, { details: { problems: located } });
        }
        throw err;
      });
    },
  });

  app.get('/admin/flows', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: {
      tags: ['flows'],
      summary: 'Flows with their versions and active versions',
      querystring: OrganizationQuery,
    },
    handler: async (request): Promise<FlowList> => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items = Object.values(state.flows)
        .filter((f) => org === null || f.organization === org)
        .map((f) => ({
          processId: f.processId,
          // The name and triggers of the version that runs (GET /process/list names it so too).
          ...flowListing(f),
          organization: f.organization,
          public: f.public,
          active: f.active,
          versions: Object.values(f.versions).map(versionInfo),
        }));
      return { items };
    },
  });

  app.get('/admin/flows/:processId', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: {
      tags: ['flows'],
      summary: "A flow: its versions, active versions, and one version's definition (default: the latest)",
      params: FlowParams,
      querystring: FlowQuery,
    },
    handler: async (request): Promise<FlowDetail> => {
      const flow = visibleFlow(request.caller!, request.params.processId);
      const versions = Object.keys(flow.versions).sort((a, b) => Number(a) - Number(b));
      const version = request.query.version ?? versions.at(-1)!;
      const v = flow.versions[version];
      if (!v) throw new WfxError('VERSION_NOT_FOUND', `flow ${flow.processId} has no version ${version}`);
      return {
        processId: flow.processId,
        ...flowListing(flow),
        organization: flow.organization,
        public: flow.public,
        active: flow.active,
        versions: versions.map((n) => versionInfo(flow.versions[n]!)),
        version: v.version,
        definition: v.definition,
      };
    },
  });

  // --- environment variables ----------------------------------------------------------

  app.get('/admin/environments/:env/variables', {
    config: admin,
    schema: namedEntrySchema(['admin'], 'The {env.NAME} values of an environment', EnvParams),
    handler: async (request): Promise<Variables> => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      return {
        organization,
        environment: request.params.env,
        variables: { ...(state.environments[organization]?.[request.params.env] ?? {}) },
      };
    },
  });

  app.put('/admin/environments/:env/variables/:name', {
    config: admin,
    schema: namedEntrySchema(['admin'], 'Set an {env.NAME} value', EnvVariableParams, { body: SetVariableBody }),
    handler: async (request): Promise<VariableChanged> => {
      const name = request.params.name;
      const organization = actingOrganization(request.caller!, request.query.organization);
      await catalogue.setVariable(organization, request.params.env, name, request.body.value);
      return { organization, environment: request.params.env, name };
    },
  });

  app.delete('/admin/environments/:env/variables/:name', {
    config: admin,
    schema: namedEntrySchema(['admin'], 'Remove an {env.NAME} value', EnvVariableParams),
    handler: async (request): Promise<VariableChanged> => {
      const name = request.params.name;
      const organization = actingOrganization(request.caller!, request.query.organization);
      if (state.environments[organization]?.[request.params.env]?.[name] === undefined) {
        throw new WfxError('NOT_FOUND', `no variable ${name} in ${request.params.env}`);
      }
      await catalogue.setVariable(organization, request.params.env, name, null);
      return { organization, environment: request.params.env, name, deleted: true };
    },
  });
}

/** A key made to expire at or before `at` would be dead on arrival: refused as VALIDATION_ERROR (null: never expires). */
function refusePastExpiry(expiresAt: string | null, at: Date): void {
  if (expiresAt !== null && Date.parse(expiresAt) <= at.getTime()) {
    throw new WfxError('VALIDATION_ERROR', `expiresAt ${expiresAt} is not in the future`, {
      details: { problems: ['body/expiresAt must be in the future'] },
    });
  }
}

/** A version as the flow listings give it: number, time, and the inputs it declares. */
function versionInfo(v: FlowVersion): VersionInfo {
  return {
    version: v.version,
    publishedAt: v.publishedAt,
    ...(v.definition.inputs !== undefined && { inputs: v.definition.inputs }),
  };
}
