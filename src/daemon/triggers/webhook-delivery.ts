/**
 * What the receiver reads from one delivery of a registration, pure functions but for the
 * SecretBox that opens its secrets: the scheme and secrets it is verified with, its headers as
 * one string each, and the ids that make a later delivery its duplicate.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { WEBHOOK_DEFAULT_MAX_BODY_BYTES } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import {
  atPath,
  eventFields,
  TOLERANCE_SECONDS,
  verifyDelivery,
  type Headers,
  type Scheme,
  type Verdict,
} from '../../shared/webhooks/providers.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { webhookSecretContext } from '../state/secret-fields.js';
import type { EndpointEnvironment, WebhookRegistration } from '../state/state.js';
import { clipText, RECORD_TEXT_MAX, sha256Of } from './webhook-body.js';

/** The scheme a registration verifies with. */
export function schemeOf(w: WebhookRegistration): Scheme {
  return { provider: w.provider, authType: w.authType, ...(w.custom && { custom: w.custom }) };
}

/** The largest body a delivery to `w` may have. */
export function maxBodyOf(w: WebhookRegistration): number {
  return w.maxBodyBytes ?? WEBHOOK_DEFAULT_MAX_BODY_BYTES;
}

/**
 * The secrets of an endpoint still valid at `at` (a rotated-out one until it expires), opened
 * with `secrets`. Throws WfxError SECRETS_KEY_MISSING or SECRET_UNREADABLE when one cannot be.
 */
export function liveSecrets(
  w: WebhookRegistration,
  environment: EndpointEnvironment,
  at: Date,
  secrets: SecretBox,
): string[] {
  const endpoint = w.endpoints.find((e) => e.environment === environment);
  const context = webhookSecretContext(w, environment);
  return (endpoint?.secrets ?? [])
    .filter((s) => s.expiresAt === null || Date.parse(s.expiresAt) > at.getTime())
    .map((s) => secrets.open(s.secret, context));
}

/** liveSecrets, or the error that kept them from being opened. */
export function tryLiveSecrets(
  w: WebhookRegistration,
  environment: EndpointEnvironment,
  at: Date,
  secrets: SecretBox,
): string[] | WfxError {
  try {
    return liveSecrets(w, environment, at, secrets);
  } catch (err) {
    if (err instanceof WfxError) return err;
    throw err;
  }
}

/**
 * The verdict on a delivery to the endpoint of `environment` of `w`, its secrets opened with
 * `secrets`: refused, naming the error's code, when one cannot be opened (never a throw: the
 * delivery is recorded as refused, with why).
 */
export function verifyWith(
  w: WebhookRegistration,
  environment: EndpointEnvironment,
  secrets: SecretBox,
  headers: Headers,
  body: Buffer,
  at: Date,
): Verdict {
  const live = tryLiveSecrets(w, environment, at, secrets);
  if (!Array.isArray(live))
    return { ok: false, reason: `the signing secret cannot be opened (${live.code}: ${live.message})` };
  return verifyDelivery(schemeOf(w), live, headers, body, at);
}

/** Headers as the receiver keeps them: one string each (repeated ones joined with ", "). */
export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  return flat;
}

/** An event id as recorded and remembered: as given, or its hash when longer than RECORD_TEXT_MAX. */
const idOf = (id: string | null): string | null => (id !== null && id.length > RECORD_TEXT_MAX ? sha256Of(id) : id);

/**
 * The event type and event id of a delivery, bounded for its record. `payload` undefined: from
 * its headers alone (a delivery refused before its body was read as JSON).
 */
export function eventOf(
  scheme: Scheme,
  headers: Record<string, string>,
  payload: unknown,
): { eventType: string | null; eventId: string | null } {
  const { eventType, eventId } = eventFields(scheme, headers, payload);
  return { eventType: clipText(eventType, RECORD_TEXT_MAX), eventId: idOf(eventId) };
}

/**
 * The hash remembered with a verified delivery's event id, for deliveries the event id does not
 * tell apart, or none: GitHub signs the body alone (so its hash, `sha256` given), and Slack's
 * deliveries without an `event_id` (slash commands, interactivity) carry no id of the event
 * Slack vouches for: the hash of what Slack signs, its timestamp and the body, so a replay
 * (which must reuse both) is a duplicate and two commands alike sent apart are not.
 */
export function bodyHashOf(
  w: WebhookRegistration,
  headers: Record<string, string>,
  body: Buffer,
  payload: unknown,
  sha256: string,
): string | undefined {
  if (w.provider === 'GITHUB') return sha256;
  if (w.provider === 'SLACK' && atPath(payload, 'event_id') === undefined)
    return sha256Of(`v0:${headers['x-slack-request-timestamp'] ?? ''}:`, body);
  return undefined;
}

/**
 * Until when a verified delivery's ids are remembered: the replay window from receipt, and in
 * any case until its signed timestamp falls out of the tolerance (a replay window set shorter
 * than that would let a replay within the 5 minutes through).
 */
export function rememberUntil(receivedAt: string, replayWindowMs: number, timestamp: string | null): string {
  const window = Date.parse(receivedAt) + replayWindowMs;
  const signed = timestamp === null ? 0 : Date.parse(timestamp) + (TOLERANCE_SECONDS + 1) * 1000;
  return new Date(Math.max(window, signed)).toISOString();
}
