import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { FailureGroups, FailuresQuery, type WithDefaults } from '../../../shared/api/index.js';
import { executionsSchema } from '../route-schemas.js';
import { WfxError } from '../../../shared/errors.js';
import type { Engine } from '../../engine/engine.js';
import type { OtherDaemons } from '../cluster-port.js';

export interface FailureRouteDeps {
  readonly engine: Engine;
  /**
   * The other daemons sharing the database: this daemon groups history and its own live
   * failures, they their live ones only, and the answers are merged (cluster/fan-out-merge.ts).
   */
  readonly others?: OtherDaemons;
}

/** GET /process/failures: failed executions grouped by flow, failure code and node. */
export function failureRoutes(fastify: FastifyInstance, deps: FailureRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/process/failures', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: executionsSchema(
      'Failed executions grouped by flow, failure code and node, each with its count and newest execution',
      { querystring: FailuresQuery },
      FailureGroups,
    ),
    handler: (request) => {
      const caller = request.caller!;
      const q = request.query as WithDefaults<FailuresQuery, 'limit' | 'children' | 'sort'>;
      if (!caller.system && q.organization !== undefined && q.organization !== caller.organization) {
        throw new WfxError('FORBIDDEN', "an organization-scoped credential reads its own organization's failures only");
      }
      const passedOn = deps.others?.passedOn(request) === true;
      const { organization, startedAfter, startedBefore, limit, ...filters } = q;
      return deps.engine.failures({
        ...filters,
        organization: caller.system ? (organization ?? null) : caller.organization,
        ...(startedAfter !== undefined && { startedAfter: Date.parse(startedAfter) }),
        ...(startedBefore !== undefined && { startedBefore: Date.parse(startedBefore) }),
        // Sharing the database: every group, cut to `limit` once merged; asked by another daemon, the live ones.
        limit: deps.others ? null : limit,
        ...(passedOn && { liveOnly: true }),
      });
    },
  });
}
