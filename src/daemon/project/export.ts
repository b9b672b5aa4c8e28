/**
 * What `wfx export` writes (GET /admin/project): an organization's flows as one environment runs
 * them and its wfx.yaml, as a deploy reads them, so that exporting and then applying the same
 * daemon changes nothing. A credential is written as the secret it came from, when a deploy
 * named one; never a value.
 */
import type { Environment, ProjectConfig, ProjectExport } from '../../shared/api/index.js';
import { secretNamesOf } from '../../shared/flow/secret-refs.js';
import type { FromSecret, WfxState } from '../state/state.js';

const secretOf = (from: FromSecret | undefined) => (from === undefined ? {} : { secret: from.name });

/** The project `organization` holds, with `environment`'s flows, variables and schedules. */
export function exportProject(state: WfxState, organization: string, environment: Environment): ProjectExport {
  const own = <T extends { organization: string; name: string }>(entries: Record<string, T>) =>
    Object.values(entries)
      .filter((e) => e.organization === organization)
      .sort((a, b) => a.name.localeCompare(b.name));
  const flows = Object.values(state.flows)
    .filter((f) => f.organization === organization && f.active[environment] !== undefined)
    .sort((a, b) => a.processId.localeCompare(b.processId))
    .map((f) => {
      const version = f.active[environment]!;
      return { processId: f.processId, version, definition: f.versions[version]!.definition };
    });
  const webhooks = own(state.webhooks).map((w) => ({
    name: w.name,
    provider: w.provider,
    environmentMode: w.environmentMode,
    authType: w.authType,
    ...(w.custom ?? {}),
    ...(w.maxBodyBytes !== undefined && { maxBodyBytes: w.maxBodyBytes }),
    ...(w.respondWithin !== undefined && { respondWithin: w.respondWithin }),
    ...secretOf(w.fromSecret),
  }));
  const emailConnections = own(state.emailConnections).map((c) => ({
    name: c.name,
    host: c.host,
    port: c.port,
    security: c.security,
    user: c.user,
    mailbox: c.mailbox,
    ...secretOf(c.fromSecret),
  }));
  const providers = own(state.aiProviders).map((p) => ({
    name: p.name,
    kind: p.kind,
    ...(p.baseUrl !== undefined && { baseUrl: p.baseUrl }),
    model: p.model,
    ...(p.modelPath !== undefined && { modelPath: p.modelPath }),
    ...(p.threads !== undefined && { threads: p.threads }),
    ...(p.contextSize !== undefined && { contextSize: p.contextSize }),
    isDefault: p.isDefault,
    ...secretOf(p.fromSecret),
  }));
  const env: NonNullable<ProjectConfig['env']> = {};
  for (const [e, vars] of Object.entries(state.environments[organization] ?? {}))
    if (Object.keys(vars).length > 0) env[e as Environment] = { ...vars };
  const secrets = [
    ...new Set([
      ...Object.keys(state.flowSecrets[organization]?.[environment] ?? {}),
      ...flows.flatMap((f) => secretNamesOf(f.definition)),
    ]),
  ].sort();
  const schedules: Record<string, 'on' | 'off'> = {};
  for (const f of flows)
    if ((f.definition.triggers ?? []).some((t) => t.type === 'schedule'))
      schedules[f.processId] = state.flows[f.processId]!.schedulesOff?.includes(environment) === true ? 'off' : 'on';
  const config: ProjectConfig = {
    webhooks,
    emailConnections,
    providers,
    env,
    secrets,
    schedules,
  } as ProjectConfig;
  return { organization, environment, flows, config };
}
