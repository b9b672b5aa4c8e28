import type { FastifyInstance, FastifyRequest } from 'fastify';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import { WfxError } from '../../../shared/errors.js';
import type { BackupReport } from '../../backup.js';

export interface BackupRouteDeps {
  /** Copies the data directory into `directory` (backupDataDir); throws its WfxErrors. */
  readonly backup: (directory: string) => Promise<BackupReport>;
}

/**
 * POST /admin/backup: a consistent copy of the data directory, written by the daemon on its own
 * host, so a system admin's alone (an organization's admin gets 403 FORBIDDEN).
 */
export function backupRoutes(app: FastifyInstance, deps: BackupRouteDeps): void {
  app.post('/admin/backup', {
    config: { auth: { permission: 'ADMIN' as const } },
    schema: {
      tags: ['admin'],
      summary: "Copy the data directory, consistently, to a new directory on the daemon's host (system admins)",
      body: {
        type: 'object',
        required: ['directory'],
        additionalProperties: false,
        properties: { directory: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^/' } },
      },
    },
    handler: async (request: FastifyRequest<{ Body: { directory: string } }>) => {
      if (!request.caller!.system) throw new WfxError('FORBIDDEN', "only a system admin backs up the daemon's data directory");
      return deps.backup(request.body.directory);
    },
  });
}
