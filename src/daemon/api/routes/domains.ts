import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  DomainParams,
  OrganizationQuery,
  RegisterDomainBody,
  type Deleted,
  type DomainList,
  type DomainView,
} from '../../../shared/api/index.js';
import { namedEntrySchema } from '../route-schemas.js';
import { WfxError } from '../../../shared/errors.js';
import { checkNoJobsLeft, domainNamed, domainOf, domainView } from '../../jobs/domains.js';
import type { WfxRecord } from '../../state/records.js';
import type { WfxState } from '../../state/state.js';
import type { DurableStore } from '../../store/store.js';
import { actingOrganization, listedOrganization } from '../organization.js';
import type { Catalogue } from '../../catalogue/catalogue.js';

export interface DomainRouteDeps {
  readonly store: DurableStore<WfxState, WfxRecord>;
  /** Where the changes this route makes are written (catalogue/catalogue.ts). */
  readonly catalogue: Catalogue;
  readonly now?: () => Date;
}

/** `name` as a domain name, or VALIDATION_ERROR (the path parameter is checked here: it is also a Name). */
function checkedName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(name))
    throw new WfxError('VALIDATION_ERROR', `domain name ${JSON.stringify(name)} is not letters, digits, _ . -`);
  return name;
}

/**
 * /admin/domains: what external workers do for domainTasks, per organization. Registering
 * (PUT, whole) and deleting need WORKFLOW_PUBLISH, as publishing the flows that use them;
 * reading needs WORKFLOW_READ.
 */
export function domainRoutes(fastify: FastifyInstance, deps: DomainRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { store, catalogue } = deps;
  const now = deps.now ?? (() => new Date());
  const tags = ['domains'];
  const find = (organization: string, name: string) => {
    const d = domainNamed(store.state, organization, name);
    if (!d) throw new WfxError('DOMAIN_NOT_FOUND', `organization ${organization} has no domain ${name}`);
    return d;
  };

  app.put('/admin/domains/:name', {
    config: { auth: { permission: 'WORKFLOW_PUBLISH' as const } },
    schema: namedEntrySchema(
      tags,
      'Register a domain (or replace it): its actions and their input and output JSON Schemas',
      DomainParams,
      { body: RegisterDomainBody },
    ),
    handler: async (request): Promise<DomainView> => {
      const name = checkedName(request.params.name);
      const organization = actingOrganization(request.caller!, request.query.organization);
      const existing = domainNamed(store.state, organization, name);
      const domain = domainOf(organization, name, request.body, now().toISOString(), existing);
      // Checked and committed with no await between: no job of a dropped action can start meanwhile.
      checkNoJobsLeft(store.state, organization, name, new Set(Object.keys(domain.actions)));
      await catalogue.saveDomain(domain);
      return domainView(domain);
    },
  });

  app.get('/admin/domains', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: { tags, summary: 'The domains, by organization and name', querystring: OrganizationQuery },
    handler: async (request): Promise<DomainList> => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items = Object.entries(store.state.domains)
        .filter(([o]) => org === null || o === org)
        .flatMap(([, domains]) => Object.values(domains).map(domainView))
        .sort((a, b) => a.organization.localeCompare(b.organization) || a.name.localeCompare(b.name));
      return { items };
    },
  });

  app.get('/admin/domains/:name', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: namedEntrySchema(tags, 'One domain and its actions', DomainParams),
    handler: async (request): Promise<DomainView> =>
      domainView(find(actingOrganization(request.caller!, request.query.organization), request.params.name)),
  });

  app.delete('/admin/domains/:name', {
    config: { auth: { permission: 'WORKFLOW_PUBLISH' as const } },
    schema: namedEntrySchema(tags, 'Delete a domain (refused while jobs of it wait)', DomainParams),
    handler: async (request): Promise<Deleted> => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      const name = find(organization, request.params.name).name;
      checkNoJobsLeft(store.state, organization, name, new Set());
      await catalogue.deleteDomain(organization, name);
      return { name, deleted: true };
    },
  });
}
