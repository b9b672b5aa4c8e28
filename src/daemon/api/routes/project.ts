import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  ApplyProjectBody,
  PROJECT_MAX_BODY_BYTES,
  ProjectQuery,
  type ProjectApplied,
  type ProjectExport,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { applyProject, type ApplyDeps } from '../../project/apply.js';
import { exportProject } from '../../project/export.js';
import { actingOrganization } from '../organization.js';

/**
 * Deploys (ADMIN: a deploy writes webhooks, connections and providers as well as flows):
 * POST /admin/project/apply makes the daemon hold a project directory (`wfx apply`), GET
 * /admin/project gives what it reads back (`wfx export`).
 */
export function projectRoutes(fastify: FastifyInstance, deps: ApplyDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const admin = { auth: { permission: 'ADMIN' as const } };

  app.post('/admin/project/apply', {
    config: admin,
    // Every flow file of the project comes in one body (each within the publish's own limit).
    bodyLimit: PROJECT_MAX_BODY_BYTES,
    schema: {
      tags: ['flows'],
      summary:
        "Make the daemon hold a project: its flows, webhooks, email connections, providers, variables and schedules' state, as one change (dryRun: the plan only)",
      body: ApplyProjectBody,
    },
    handler: async (request): Promise<ProjectApplied> => {
      const b = request.body as WithDefaults<ApplyProjectBody, 'environment'>;
      const caller = request.caller!;
      return applyProject(deps, {
        organization: actingOrganization(caller, b.organization),
        environment: b.environment,
        dryRun: b.dryRun === true,
        prune: b.prune === true,
        hostFiles: caller.system,
        flows: b.flows,
        config: b.config,
        ...(b.secretValues !== undefined && { secretValues: b.secretValues }),
      });
    },
  });

  app.get('/admin/project', {
    config: admin,
    schema: {
      tags: ['flows'],
      summary:
        "What `wfx apply` reads, as the daemon holds it: the flows one environment runs and the organization's wfx.yaml (no secret values)",
      querystring: ProjectQuery,
    },
    handler: async (request): Promise<ProjectExport> => {
      const q = request.query as WithDefaults<ProjectQuery, 'environment'>;
      return exportProject(deps.state, actingOrganization(request.caller!, q.organization), q.environment);
    },
  });
}
