import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { BackupBody, type BackupReport } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';

export interface BackupRouteDeps {
  /** Copies the data directory into `directory` (backupDataDir); throws its WfxErrors. */
  readonly backup: (directory: string) => Promise<BackupReport>;
}

/**
 * POST /admin/backup: a consistent copy of the data directory, written by the daemon on its own
 * host, so a system admin's alone (an organization's admin gets 403 FORBIDDEN).
 */
export function backupRoutes(fastify: FastifyInstance, deps: BackupRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/admin/backup', {
    config: { auth: { permission: 'ADMIN' as const } },
    schema: {
      tags: ['admin'],
      summary: "Copy the data directory, consistently, to a new directory on the daemon's host (system admins)",
      body: BackupBody,
    },
    handler: async (request) => {
      if (!request.caller!.system)
        throw new WfxError('FORBIDDEN', "only a system admin backs up the daemon's data directory");
      return deps.backup(request.body.directory);
    },
  });
}
