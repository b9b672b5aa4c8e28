/**
 * POST /process/instance/{id}/move: a running execution moves to another published version
 * of its flow (docs/api.md). Needs WORKFLOW_PUBLISH: what an execution runs next is the
 * publisher's call. Organization scoped as every execution route.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { IdParams, MoveBody, Moved } from '../../../shared/api/index.js';
import { executionsSchema } from '../route-schemas.js';
import type { Engine } from '../../engine/engine.js';
import { actorOf } from '../caller.js';

export interface MoveRouteDeps {
  readonly engine: Pick<Engine, 'move'>;
}

/** POST /process/instance/{id}/move. */
export function moveRoutes(fastify: FastifyInstance, deps: MoveRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/process/instance/:id/move', {
    config: { auth: { permission: 'WORKFLOW_PUBLISH' } },
    schema: executionsSchema(
      'Move a running execution to another published version of its flow (dryRun: check only)',
      { params: IdParams, body: MoveBody },
      Moved,
    ),
    handler: async (request): Promise<Moved> => {
      const caller = request.caller!;
      const dryRun = request.body.dryRun === true;
      const r = await deps.engine.move({
        organization: caller.organization,
        processInstanceId: request.params.id,
        toVersion: request.body.version,
        by: actorOf(caller),
        dryRun,
      });
      return {
        processInstanceId: r.processInstanceId,
        fromVersion: r.fromVersion,
        toVersion: r.toVersion,
        status: r.fromVersion === r.toVersion ? 'unchanged' : dryRun ? 'movable' : 'moved',
        children: [...r.children],
      };
    },
  });
}
