/**
 * Credentials a deploy took from a flow secret (`secret: NAME` in wfx.yaml: a webhook's signing
 * secret, an email connection's password, a provider's API key). Each entry keeps its own sealed
 * copy, which follows the secret: setting the secret again seals the new value into every entry
 * that came from it, in the same commit. A webhook's previous signing secret keeps working for
 * a day, as `wfx webhooks rotate` leaves it, so senders can change theirs in their own time.
 */
import type { EndpointEnvironment, Environment } from '../../shared/api/index.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { WfxRecord } from '../state/records.js';
import { emailPasswordContext, providerKeyContext, webhookSecretContext } from '../state/secret-fields.js';
import type { WebhookEndpoint, WebhookRegistration, WfxState } from '../state/state.js';

/** How long a webhook's previous signing secret keeps working after it changed (as `rotate`'s default). */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;

/**
 * `w`'s endpoints with `sealed(environment)` as each one's signing secret, the secrets still
 * valid before it kept until PREVIOUS_SECRET_MS from `now`.
 */
export function rotatedEndpoints(
  w: Pick<WebhookRegistration, 'endpoints'>,
  sealed: (environment: EndpointEnvironment) => string,
  now: Date,
): WebhookEndpoint[] {
  const until = new Date(now.getTime() + PREVIOUS_SECRET_MS).toISOString();
  return w.endpoints.map((e) => ({
    ...e,
    secrets: [
      { secret: sealed(e.environment), expiresAt: null },
      ...e.secrets
        .filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > now.getTime())
        .map((s) => ({ secret: s.secret, expiresAt: until })),
    ],
  }));
}

/**
 * The records that seal `value` into every entry of `organization` whose credential came from
 * secret `name` of `environment` (none: no entry names it).
 */
export function resealedFromSecret(
  state: WfxState,
  secrets: SecretBox,
  from: { organization: string; environment: Environment; name: string },
  value: string,
  now: Date,
): WfxRecord[] {
  const at = now.toISOString();
  const named = (e: { organization: string; fromSecret?: { name: string; environment: Environment } }) =>
    e.organization === from.organization &&
    e.fromSecret?.name === from.name &&
    e.fromSecret.environment === from.environment;
  const records: WfxRecord[] = [];
  for (const w of Object.values(state.webhooks).filter(named)) {
    if (w.authType === 'NONE') continue;
    const endpoints = rotatedEndpoints(w, (env) => secrets.seal(value, webhookSecretContext(w, env)), now);
    records.push({ type: 'webhook.saved', webhook: { ...w, endpoints, updatedAt: at } });
  }
  for (const c of Object.values(state.emailConnections).filter(named)) {
    const password = secrets.seal(value, emailPasswordContext(c));
    records.push({ type: 'emailConnection.saved', connection: { ...c, password, updatedAt: at } });
  }
  for (const p of Object.values(state.aiProviders).filter(named)) {
    const apiKey = secrets.seal(value, providerKeyContext(p));
    records.push({ type: 'aiProvider.saved', provider: { ...p, apiKey, updatedAt: at } });
  }
  return records;
}
