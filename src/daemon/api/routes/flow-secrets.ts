import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  FlowSecretListQuery,
  FlowSecretParams,
  FlowSecretQuery,
  SetFlowSecretBody,
  type Environment,
  type FlowSecretList,
  type FlowSecretView,
} from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { WfxRecord } from '../../state/records.js';
import type { WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import { actingOrganization, listedOrganization } from '../organization.js';

export interface FlowSecretRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts): it seals the values. */
  readonly catalogue: Catalogue;
  readonly now?: () => Date;
}

/**
 * /admin/secrets/values: the values flows name as `{secret.NAME}`, per organization and
 * environment. A value is sealed as it arrives and never answered: reads give names and times.
 */
export function flowSecretRoutes(fastify: FastifyInstance, deps: FlowSecretRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue } = deps;
  const now = deps.now ?? (() => new Date());
  const config = { auth: { permission: 'ADMIN' as const } };
  const view = (organization: string, environment: Environment, name: string): FlowSecretView => {
    const s = store.state.flowSecrets[organization]?.[environment]?.[name];
    if (!s) throw new WfxError('NOT_FOUND', `no secret ${name} in ${environment}`);
    return { name, organization, environment, updatedAt: s.updatedAt };
  };

  app.get('/admin/secrets/values', {
    config,
    schema: {
      tags: ['admin'],
      summary: 'The secrets flows name as {secret.NAME}: names and when each was set, never a value',
      querystring: FlowSecretListQuery,
    },
    handler: async (request): Promise<FlowSecretList> => {
      const q = request.query;
      const org = listedOrganization(request.caller!, q.organization);
      const items: FlowSecretView[] = [];
      for (const [organization, byEnv] of Object.entries(store.state.flowSecrets)) {
        if (org !== null && organization !== org) continue;
        for (const [environment, named] of Object.entries(byEnv) as Array<[Environment, Record<string, unknown>]>) {
          if (q.environment !== undefined && environment !== q.environment) continue;
          for (const name of Object.keys(named).sort()) items.push(view(organization, environment, name));
        }
      }
      return { items };
    },
  });

  app.put('/admin/secrets/values/:name', {
    config,
    schema: {
      tags: ['admin'],
      summary: "Set a secret's value (sealed as it arrives, never answered)",
      params: FlowSecretParams,
      body: SetFlowSecretBody,
    },
    handler: async (request): Promise<FlowSecretView> => {
      const b = request.body;
      const organization = actingOrganization(request.caller!, b.organization);
      const environment = b.environment ?? 'PRODUCTION';
      await catalogue.setFlowSecret(organization, environment, request.params.name, b.value, now().toISOString());
      return view(organization, environment, request.params.name);
    },
  });

  app.delete('/admin/secrets/values/:name', {
    config,
    schema: {
      tags: ['admin'],
      summary: 'Remove a secret: a call that names it fails with SECRET_NOT_FOUND',
      params: FlowSecretParams,
      querystring: FlowSecretQuery,
    },
    handler: async (request): Promise<FlowSecretView> => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      const environment = request.query.environment ?? 'PRODUCTION';
      const gone = view(organization, environment, request.params.name);
      await catalogue.setFlowSecret(organization, environment, request.params.name, null, now().toISOString());
      return gone;
    },
  });
}
