/** GET /admin/audit: the audit trail, newest first, filtered, a page at a time (ADMIN; an organization's admin reads its own). */
import type { FastifyInstance } from 'fastify';
import { AuditListQuery, type AuditEntry, type AuditPage, type WithDefaults } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { listedOrganization } from '../api/organization.js';
import type { WfxState } from '../state/state.js';

export interface AuditRouteDeps {
  readonly state: WfxState;
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
      return auditPage(deps.state.audit, { ...q, organization });
    },
  });
}

/** The filters of a page, the organization settled (null: every organization, a system admin's). */
export type AuditFilter = Omit<WithDefaults<AuditListQuery, 'limit'>, 'organization'> & {
  readonly organization: string | null;
};

/** One page of `audit` (oldest first by insertion) newest first after `cursor`, as `filter` selects. */
export function auditPage(audit: Readonly<Record<string, AuditEntry>>, filter: AuditFilter): AuditPage {
  const ids = Object.keys(audit);
  let from = ids.length - 1;
  if (filter.cursor !== undefined) {
    const at = ids.lastIndexOf(filter.cursor);
    if (at < 0) throw new WfxError('VALIDATION_ERROR', 'cursor is not one this list gave (or its record was swept)');
    from = at - 1;
  }
  const since = filter.since === undefined ? null : new Date(filter.since).toISOString();
  const until = filter.until === undefined ? null : new Date(filter.until).toISOString();
  const items: AuditEntry[] = [];
  let i = from;
  for (; i >= 0 && items.length < filter.limit; i--) {
    const e = audit[ids[i]!]!;
    if (since !== null && e.at < since) break; // oldest first: nothing older can match
    if (filter.organization !== null && e.organization !== filter.organization) continue;
    if (until !== null && e.at > until) continue;
    if (filter.actor !== undefined && !actorMatches(e, filter.actor)) continue;
    if (filter.action !== undefined && !e.action.includes(filter.action)) continue;
    if (filter.target !== undefined && !Object.values(e.targets).includes(filter.target)) continue;
    items.push(e);
  }
  const more = items.length === filter.limit && i >= 0;
  return { items, nextCursor: more ? items.at(-1)!.id : null };
}

function actorMatches(e: AuditEntry, actor: string): boolean {
  return e.actor === actor || e.keyId === actor || e.subject === actor;
}
