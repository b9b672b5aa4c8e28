import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  BulkDryRun,
  BulkIdParams,
  BulkListQuery,
  BulkPage,
  BulkRequest,
  BulkResultPage,
  BulkResultsQuery,
  BulkView,
  ERROR_REPLIES,
  ErrorRef,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { executionsSchema } from '../route-schemas.js';
import type { Engine } from '../../engine/engine.js';
import { actorOf } from '../caller.js';
import { listedOrganization } from '../organization.js';

/** What the bulk routes need. */
export interface BulkRouteDeps {
  readonly engine: Engine;
}

/**
 * Bulk operations over the executions a query selects: POST /process/bulk (a dry run, or the
 * operation created and run), GET /process/bulk (a page), /process/bulk/{bulkId} (its
 * progress), /results (a page of them), POST /process/bulk/{bulkId}/cancel. Creating and
 * cancelling one needs WORKFLOW_PUBLISH; reading them WORKFLOW_READ. A caller's operations are
 * its organization's; a system key's may name one (`query.organization`) or span them all.
 */
export function bulkRoutes(fastify: FastifyInstance, deps: BulkRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { bulk } = deps.engine;

  app.post('/process/bulk', {
    config: { auth: { permission: 'WORKFLOW_PUBLISH' } },
    schema: {
      tags: ['executions'],
      summary:
        'Apply an operation (cancel, ...) to every execution a query selects, durably and at a bounded rate; `dryRun`: count them and list a sample',
      body: BulkRequest,
      response: { 200: BulkDryRun, 202: BulkView, 422: ErrorRef, ...ERROR_REPLIES },
    },
    handler: async (request, reply) => {
      const caller = request.caller!;
      const body = request.body;
      const asked = {
        organization: listedOrganization(caller, body.query.organization),
        operation: body.operation,
        params: (body.params as Record<string, unknown> | undefined) ?? null,
        query: body.query,
        by: actorOf(caller),
      };
      if (body.dryRun === true) return bulk.dryRun(asked, body.sample ?? 10);
      const created = await bulk.create(asked);
      return reply.code(202).send(created);
    },
  });

  app.get('/process/bulk', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: executionsSchema(
      'Bulk operations, newest first (running ones and the finished ones kept)',
      { querystring: BulkListQuery },
      BulkPage,
    ),
    handler: async (request) => {
      const q = request.query as WithDefaults<BulkListQuery, 'limit'>;
      return bulk.list({
        organization: listedOrganization(request.caller!, q.organization),
        ...(q.state !== undefined && { state: q.state }),
        limit: q.limit,
        ...(q.cursor !== undefined && { cursor: q.cursor }),
      });
    },
  });

  app.get('/process/bulk/:bulkId', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: executionsSchema(
      'A bulk operation and its progress: total, done, skipped, pending, state, ETA',
      { params: BulkIdParams },
      BulkView,
    ),
    handler: async (request) => bulk.get(request.caller!.organization, request.params.bulkId),
  });

  app.get('/process/bulk/:bulkId/results', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: executionsSchema(
      "A bulk operation's result per execution so far (DONE, or SKIPPED with a code), newest execution first",
      { params: BulkIdParams, querystring: BulkResultsQuery },
      BulkResultPage,
    ),
    handler: async (request) => {
      const q = request.query as WithDefaults<BulkResultsQuery, 'limit'>;
      return bulk.results(request.caller!.organization, request.params.bulkId, {
        ...(q.outcome !== undefined && { outcome: q.outcome }),
        limit: q.limit,
        ...(q.cursor !== undefined && { cursor: q.cursor }),
      });
    },
  });

  app.post('/process/bulk/:bulkId/cancel', {
    config: { auth: { permission: 'WORKFLOW_PUBLISH' } },
    schema: executionsSchema(
      'Cancel a running bulk operation: no chunk starts after this; what was done stays done',
      { params: BulkIdParams },
      BulkView,
    ),
    handler: async (request) =>
      bulk.cancel(request.caller!.organization, request.params.bulkId, actorOf(request.caller!)),
  });
}
