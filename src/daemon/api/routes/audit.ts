/** GET /admin/audit: the audit trail, newest first, filtered, a page at a time (ADMIN; an organization's admin reads its own). */
import type { FastifyInstance } from 'fastify';
import { AuditListQuery, type AuditPage, type WithDefaults } from '../../../shared/api/index.js';
import { listedOrganization } from '../organization.js';
import type { AuditTrail } from '../../store/audit-trail.js';

export interface AuditRouteDeps {
  readonly trail: AuditTrail;
}

/** Adds GET /admin/audit. */
export function auditRoutes(app: FastifyInstance, deps: AuditRouteDeps): void {
  app.get('/admin/audit', {
    config: { auth: { permission: 'ADMIN' } },
    schema: {
      tags: ['admin'],
      summary: 'The audit trail: who changed what through the API, newest first',
      querystring: AuditListQuery,
    },
    handler: async (request): Promise<AuditPage> => {
      const q = request.query as WithDefaults<AuditListQuery, 'limit'>;
      const organization = listedOrganization(request.caller!, q.organization);
      return deps.trail.page({ ...q, organization });
    },
  });
}
