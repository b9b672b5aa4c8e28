import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { IdParams, ReplayBody, Replayed, RetryBody, Retried } from '../../../shared/api/index.js';
import { executionsSchema } from '../route-schemas.js';
import type { Engine } from '../../engine/engine.js';
import { actorOf } from '../caller.js';

export interface RecoveryRouteDeps {
  readonly engine: Engine;
}

/** POST /process/instance/{id}/retry and /replay: an operator's recovery of an execution (SPEC.md section 10). */
export function recoveryRoutes(fastify: FastifyInstance, deps: RecoveryRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { engine } = deps;

  app.post('/process/instance/:id/retry', {
    config: { auth: { permission: 'WORKFLOW_EXECUTE' } },
    schema: executionsSchema(
      'Retry a failed execution where it failed (same id), optionally with variables set first',
      { params: IdParams, body: RetryBody },
      Retried,
    ),
    handler: async (request) => {
      const caller = request.caller!;
      await engine.retry({
        organization: caller.organization,
        processInstanceId: request.params.id,
        ...(request.body?.data !== undefined && { data: request.body.data }),
        by: actorOf(caller),
      });
      return { processInstanceId: request.params.id, status: 'resumed' as const };
    },
  });

  app.post('/process/instance/:id/replay', {
    config: { auth: { permission: 'WORKFLOW_EXECUTE' } },
    schema: executionsSchema(
      'Start a new execution of the same version at a node, with the variables the original had there',
      { params: IdParams, body: ReplayBody },
      Replayed,
    ),
    handler: async (request) => {
      const caller = request.caller!;
      const inst = await engine.replay({
        organization: caller.organization,
        processInstanceId: request.params.id,
        nodeId: request.body.nodeId,
        ...(request.body.data !== undefined && { data: request.body.data }),
        by: actorOf(caller),
      });
      return { processInstanceId: inst.processInstanceId, replayOf: request.params.id, status: 'started' as const };
    },
  });
}
