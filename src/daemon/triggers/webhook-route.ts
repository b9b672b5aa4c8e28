import type { Environment, Flow, WebhookRegistration } from '../state/state.js';

/** Whether the version of `flow` active in `environment` has a webhook trigger naming registration `webhook`. */
export function subscribesIn(flow: Flow, environment: Environment, webhook: string): boolean {
  const version = flow.active[environment];
  const triggers = version === undefined ? [] : (flow.versions[version]?.definition.triggers ?? []);
  return triggers.some((t) => t.type === 'webhook' && t.webhook === webhook);
}

/**
 * The environment whose active version of `flow` a SHARED (ALL) endpoint of registration
 * `webhook` runs: PRODUCTION, unless the daemon has a `fallback` (DEVELOPMENT under `wfx dev`,
 * which publishes there) and the flow's PRODUCTION version does not subscribe while its
 * `fallback` one does. So a development daemon runs what it publishes, and a PRODUCTION
 * version that subscribes is never shadowed by a development one.
 */
export function sharedEnvironmentOf(flow: Flow, webhook: string, fallback: Environment | undefined): Environment {
  if (fallback === undefined || subscribesIn(flow, 'PRODUCTION', webhook)) return 'PRODUCTION';
  return subscribesIn(flow, fallback, webhook) ? fallback : 'PRODUCTION';
}

/**
 * Why no endpoint of `w` can fire the webhook trigger of `flow` active in `environment` (with
 * the commands that make one), or null when one can.
 */
export function unreachableWhy(
  w: WebhookRegistration,
  flow: Flow,
  environment: Environment,
  fallback: Environment | undefined,
): string | null {
  if (w.endpoints.some((e) => e.environment === environment)) return null;
  const runs = sharedEnvironmentOf(flow, w.name, fallback);
  if (runs === environment) return null;
  return `no endpoint of "${w.name}" fires ${environment}: its one shared endpoint runs this flow's ${runs} version. ${wayOut(w, environment, fallback)}`;
}

/** The commands that make a flow active in `environment` reachable by `w`'s deliveries (`wfx dev` unless the daemon is one: `fallback`). */
export function wayOut(w: WebhookRegistration, environment: Environment, fallback?: Environment): string {
  const perEnvironment = `\`wfx webhooks delete ${w.name}\` then \`wfx webhooks create --name ${w.name} --provider ${w.provider} --per-environment\` (new URLs and secrets)`;
  return environment === 'DEVELOPMENT' && fallback !== 'DEVELOPMENT'
    ? `Give it a DEVELOPMENT endpoint: ${perEnvironment}; or run the daemon with \`wfx dev\`, where the shared endpoint runs the DEVELOPMENT version of a flow whose PRODUCTION version does not subscribe`
    : `Give it a ${environment} endpoint: ${perEnvironment}`;
}
