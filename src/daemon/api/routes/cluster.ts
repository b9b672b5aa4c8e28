import type { FastifyInstance } from 'fastify';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import type { ClusterDaemon, ClusterList } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';

export interface ClusterRouteDeps {
  /** Every daemon on the database (cluster/members.ts); throws when the database does not answer. */
  readonly list: () => Promise<ClusterDaemon[]>;
}

/**
 * GET /admin/cluster: the daemons on this daemon's database (`--store`), which one serves and
 * which stand by. Their addresses and hosts are the operators' business: a system admin's alone.
 */
export function clusterRoutes(app: FastifyInstance, deps: ClusterRouteDeps): void {
  app.get('/admin/cluster', {
    config: { auth: { permission: 'ADMIN' as const } },
    schema: {
      tags: ['admin'],
      summary: 'The daemons on this database: where each answers, the partitions it serves, when it was last seen',
    },
    handler: async (request): Promise<ClusterList> => {
      if (!request.caller!.system) throw new WfxError('FORBIDDEN', "only a system admin sees the database's daemons");
      const items = await deps.list().catch((err: unknown) => {
        throw new WfxError('SERVICE_UNAVAILABLE', `the database did not answer: ${(err as Error).message}`);
      });
      return { items };
    },
  });
}
