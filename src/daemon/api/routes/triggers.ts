import type { FastifyInstance } from 'fastify';
import type { WfxState } from '../../state/state.js';
import { webhookHealth, type TriggerHealth } from '../../triggers/health.js';
import type { ScheduleHealth } from '../../triggers/schedules.js';

export interface TriggerRouteDeps {
  readonly state: WfxState;
  /** The scheduler's view of its schedules (none when it does not run). */
  readonly schedules: () => readonly ScheduleHealth[];
}

/** GET /admin/triggers: every trigger's state, last fire, next fire and last error. */
export function triggerRoutes(app: FastifyInstance, deps: TriggerRouteDeps): void {
  app.get('/admin/triggers', {
    config: { auth: { permission: 'WORKFLOW_READ' as const } },
    schema: { tags: ['flows'], summary: "Trigger health: every active flow version's triggers, their state, last and next fire, last error" },
    handler: async (request) => {
      const caller = request.caller!;
      const items: TriggerHealth[] = [...deps.schedules(), ...webhookHealth(deps.state)].filter(
        (h) => caller.organization === null || h.organization === caller.organization,
      );
      items.sort((a, b) => a.flowName.localeCompare(b.flowName) || a.environment.localeCompare(b.environment) || a.type.localeCompare(b.type));
      return { items };
    },
  });
}
