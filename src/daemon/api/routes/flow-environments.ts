import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  ActivateBody,
  FlowParams,
  PromoteBody,
  type Activated,
  type Promoted,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { activateVersion, promoteVersion } from '../../flows/publish.js';
import type { WfxRecord } from '../../state/records.js';
import type { WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';

export interface FlowEnvironmentRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
}

/** Which version of a flow each environment runs: /admin/flows/{processId}/activate and /promote. */
export function flowEnvironmentRoutes(fastify: FastifyInstance, deps: FlowEnvironmentRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store } = deps;
  const publish = { auth: { permission: 'WORKFLOW_PUBLISH' as const } };

  app.post('/admin/flows/:processId/activate', {
    config: publish,
    schema: {
      tags: ['flows'],
      summary: 'Make a version the one an environment runs (rollback)',
      params: FlowParams,
      body: ActivateBody,
    },
    handler: async (request): Promise<Activated> => {
      const body = request.body as WithDefaults<ActivateBody, 'environment'>;
      await activateVersion(store, {
        processId: request.params.processId,
        organization: request.caller!.organization,
        ...body,
      });
      return { processId: request.params.processId, environment: body.environment, version: body.version };
    },
  });

  app.post('/admin/flows/:processId/promote', {
    config: publish,
    schema: {
      tags: ['flows'],
      summary: 'Make the version one environment runs the one another runs (DEVELOPMENT to PRODUCTION)',
      params: FlowParams,
      body: PromoteBody,
    },
    handler: async (request): Promise<Promoted> => {
      const { from, to } = request.body;
      const processId = request.params.processId;
      const done = await promoteVersion(store, { processId, organization: request.caller!.organization, from, to });
      return { processId, from, to, ...done };
    },
  });
}
