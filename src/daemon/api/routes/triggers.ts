import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { OrganizationQuery, type TriggerHealth, type TriggerList } from '../../../shared/api/index.js';
import type { Environment, WfxState } from '../../state/state.js';
import { executionTriggerHealth, onDemandHealth, webhookHealth } from '../../triggers/health.js';
import { listedOrganization } from '../organization.js';

export interface TriggerRouteDeps {
  readonly state: WfxState;
  /** The health the trigger services keep (schedules, email); webhooks' is read from the state here. */
  readonly health: () => readonly TriggerHealth[];
  /** What a SHARED webhook endpoint runs besides PRODUCTION (the receiver's `sharedFallback`). */
  readonly sharedFallback?: Environment | undefined;
}

/** GET /admin/triggers: every trigger's state, last fire, next fire and last error. */
export function triggerRoutes(fastify: FastifyInstance, deps: TriggerRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/admin/triggers', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: {
      tags: ['flows'],
      summary:
        "Trigger health: every active flow version's triggers (webhook, schedule with its next fires, email, on-demand, execution), their state, last and next fire, last error",
      querystring: OrganizationQuery,
    },
    handler: async (request): Promise<TriggerList> => {
      const org = listedOrganization(request.caller!, request.query.organization);
      const items: TriggerHealth[] = [
        ...deps.health(),
        ...webhookHealth(deps.state, deps.sharedFallback),
        ...onDemandHealth(deps.state),
        ...executionTriggerHealth(deps.state),
      ].filter((h) => org === null || h.organization === org);
      items.sort(
        (a, b) =>
          a.flowName.localeCompare(b.flowName) ||
          a.environment.localeCompare(b.environment) ||
          a.type.localeCompare(b.type),
      );
      return { items };
    },
  });
}
