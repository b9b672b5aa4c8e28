import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  CoverageBody,
  FlowParams,
  FlowQuery,
  type FlowCoverageList,
  type FlowCoverageView,
} from '../../../shared/api/index.js';
import type { CoverageBoard } from '../../flows/coverage-board.js';

export interface FlowCoverageRouteDeps {
  readonly board: CoverageBoard;
  readonly now?: () => Date;
}

/**
 * /admin/flows/{processId}/coverage: what a flow version's tests took, sent by `wfx test
 * --send-coverage` (and `wfx dev --test`), read by the console's flow page to draw it.
 */
export function flowCoverageRoutes(fastify: FastifyInstance, deps: FlowCoverageRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const now = deps.now ?? (() => new Date());

  app.post('/admin/flows/:processId/coverage', {
    config: { auth: { permission: 'WORKFLOW_PUBLISH' as const } },
    schema: {
      tags: ['flows'],
      summary: "Keep what a run of a flow's tests took, for the version published with the definition they ran",
      params: FlowParams,
      body: CoverageBody,
    },
    handler: async (request): Promise<FlowCoverageView> =>
      deps.board.save(request.caller!.organization, request.params.processId, request.body, now()),
  });

  app.get('/admin/flows/:processId/coverage', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: {
      tags: ['flows'],
      summary: "The last test coverage of a flow's versions (of one with ?version=), newest first",
      params: FlowParams,
      querystring: FlowQuery,
    },
    handler: async (request): Promise<FlowCoverageList> => ({
      items: deps.board.list(request.caller!.organization, request.params.processId, request.query.version),
    }),
  });
}
