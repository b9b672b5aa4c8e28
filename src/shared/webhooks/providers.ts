import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../constant-time.js';
import { decodeBase64, decodeHex } from './encoding.js';

/**
 * How each webhook provider signs a delivery, as its documentation defines it. One module both
 * signs (`wfx webhooks send`, tests) and verifies (the daemon, `wfx webhooks verify`), so the two
 * cannot disagree. Pure: headers, raw body bytes, secrets and the instant to judge at in;
 * a verdict out.
 *
 * - GITHUB: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`; event type in
 *   `X-GitHub-Event`, delivery id in `X-GitHub-Delivery`; no timestamp.
 * - STRIPE: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>]`, HMAC-SHA256 of `<t>.<body>`; the
 *   event's `type` and `id` are in the JSON body.
 * - SLACK: `X-Slack-Signature: v0=<hex>` of `v0:<ts>:<body>` with `X-Slack-Request-Timestamp: <ts>`.
 * - STANDARD (standardwebhooks.com): `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>
 *   [v1,<base64> ...]` of `<id>.<timestamp>.<body>`; the secret is `whsec_<base64 key>`.
 * - CUSTOM: the registration says which header, algorithm, encoding and prefix.
 *
 * Schemes with a timestamp refuse one more than 5 minutes away from now (replay protection).
 * A signature must be written exactly as its provider writes it (encoding.ts): lower-case hex
 * of the digest's length for GitHub, Stripe and Slack; canonical base64 for Standard Webhooks;
 * for CUSTOM, hex in one case or canonical base64. Anything before, after or inside it refuses it.
 * Several secrets may be valid at once (rotation): a delivery signed with any of them verifies.
 */

export { PROVIDERS, type CustomScheme, type Provider } from './scheme.js';
import type { CustomScheme, Provider } from './scheme.js';

export interface Scheme {
  readonly provider: Provider;
  readonly authType: 'HMAC' | 'NONE';
  readonly custom?: CustomScheme;
}

/** Headers with lower-case names (as Node gives them). */
export type Headers = Readonly<Record<string, string | string[] | undefined>>;

export type Verdict =
  { readonly ok: true; readonly timestamp: string | null } | { readonly ok: false; readonly reason: string };

/** Bytes of each algorithm's digest: a presented signature must decode to exactly this many. */
const DIGEST_BYTES = { sha1: 20, sha256: 32, sha512: 64 } as const;
const SHA256_BYTES = DIGEST_BYTES.sha256;
const HEX64 = '64 lowercase hex digits';

/** Five minutes: the tolerance of every timestamped scheme. */
export const TOLERANCE_SECONDS = 300;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function hmac(algorithm: string, key: string | Buffer, data: Buffer | string): Buffer {
  return createHmac(algorithm, key).update(data).digest();
}

function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

function checkTimestamp(ts: string | undefined, now: Date, what: string): string | null {
  if (ts === undefined) return `the ${what} header is missing`;
  if (!/^\d+$/.test(ts)) return `the ${what} header is not a Unix timestamp`;
  const skew = Math.abs(now.getTime() / 1000 - Number(ts));
  if (skew > TOLERANCE_SECONDS)
    return `the timestamp is ${Math.round(skew)} s away from now, more than the ${TOLERANCE_SECONDS} s tolerance (a replay, or a clock off)`;
  return null;
}

const concat = (...parts: Array<string | Buffer>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));

/**
 * Checks one delivery's signature against `secrets` (any one may match) at instant `now`.
 * Never throws; the reason says what is wrong (which header is missing, timestamp out of
 * tolerance, no signature matches).
 */
export function verifyDelivery(
  scheme: Scheme,
  secrets: readonly string[],
  headers: Headers,
  body: Buffer,
  now: Date,
): Verdict {
  if (scheme.authType === 'NONE') return { ok: true, timestamp: null };
  if (secrets.length === 0) return { ok: false, reason: 'the registration has no secret' };
  const noMatch: Verdict = { ok: false, reason: 'no signature matches the secret' };
  switch (scheme.provider) {
    case 'GITHUB': {
      const sig = header(headers, 'x-hub-signature-256');
      if (sig === undefined) return { ok: false, reason: 'the X-Hub-Signature-256 header is missing' };
      if (!sig.startsWith('sha256=')) return { ok: false, reason: 'X-Hub-Signature-256 does not start with sha256=' };
      const presented = decodeHex(sig.slice(7), SHA256_BYTES);
      if (!presented) return { ok: false, reason: `X-Hub-Signature-256 is not sha256= and ${HEX64}` };
      return secrets.some((s) => constantTimeEqual(hmac('sha256', s, body), presented))
        ? { ok: true, timestamp: null }
        : noMatch;
    }
    case 'STRIPE': {
      const sig = header(headers, 'stripe-signature');
      if (sig === undefined) return { ok: false, reason: 'the Stripe-Signature header is missing' };
      const parts = sig.split(',').map((p) => /^([a-z0-9]+)=(.*)$/s.exec(p));
      if (parts.some((p) => p === null))
        return { ok: false, reason: 'Stripe-Signature is not a comma-separated list of key=value' };
      const kv = parts.map((p) => [p![1]!, p![2]!] as const);
      const ts = kv.filter(([k]) => k === 't');
      if (ts.length > 1) return { ok: false, reason: 'Stripe-Signature has more than one t=' };
      const t = ts[0]?.[1];
      const bad = checkTimestamp(t, now, 'Stripe-Signature t=');
      if (bad) return { ok: false, reason: bad };
      const v1 = kv.filter(([k]) => k === 'v1');
      if (v1.length === 0) return { ok: false, reason: 'Stripe-Signature has no v1 signature' };
      // Each v1 is one candidate: one not written exactly as Stripe writes it matches nothing.
      const presented = v1.map(([, v]) => decodeHex(v, SHA256_BYTES)).filter((p) => p !== null);
      if (presented.length === 0) return { ok: false, reason: `no Stripe-Signature v1= is ${HEX64}` };
      const signed = concat(`${t}.`, body);
      const ok = secrets.some((s) => presented.some((p) => constantTimeEqual(hmac('sha256', s, signed), p)));
      return ok ? { ok: true, timestamp: new Date(Number(t) * 1000).toISOString() } : noMatch;
    }
    case 'SLACK': {
      const sig = header(headers, 'x-slack-signature');
      if (sig === undefined) return { ok: false, reason: 'the X-Slack-Signature header is missing' };
      const ts = header(headers, 'x-slack-request-timestamp');
      const bad = checkTimestamp(ts, now, 'X-Slack-Request-Timestamp');
      if (bad) return { ok: false, reason: bad };
      if (!sig.startsWith('v0=')) return { ok: false, reason: 'X-Slack-Signature does not start with v0=' };
      const presented = decodeHex(sig.slice(3), SHA256_BYTES);
      if (!presented) return { ok: false, reason: `X-Slack-Signature is not v0= and ${HEX64}` };
      const signed = concat(`v0:${ts}:`, body);
      return secrets.some((s) => constantTimeEqual(hmac('sha256', s, signed), presented))
        ? { ok: true, timestamp: new Date(Number(ts) * 1000).toISOString() }
        : noMatch;
    }
    case 'STANDARD': {
      const id = header(headers, 'webhook-id');
      const ts = header(headers, 'webhook-timestamp');
      const sig = header(headers, 'webhook-signature');
      if (id === undefined) return { ok: false, reason: 'the webhook-id header is missing' };
      if (sig === undefined) return { ok: false, reason: 'the webhook-signature header is missing' };
      const bad = checkTimestamp(ts, now, 'webhook-timestamp');
      if (bad) return { ok: false, reason: bad };
      const v1 = sig.split(' ').filter((p) => p.startsWith('v1,'));
      if (v1.length === 0) return { ok: false, reason: 'webhook-signature has no v1 signature' };
      // Other versions (v1a: asymmetric) are not ours to check; a v1 not in canonical base64 matches nothing.
      const presented = v1.map((p) => decodeBase64(p.slice(3), SHA256_BYTES)).filter((p) => p !== null);
      if (presented.length === 0)
        return { ok: false, reason: 'no webhook-signature v1, is the canonical base64 of 32 bytes (44 characters)' };
      const signed = concat(`${id}.${ts}.`, body);
      const ok = secrets.some((s) =>
        presented.some((p) => constantTimeEqual(hmac('sha256', standardKey(s), signed), p)),
      );
      return ok ? { ok: true, timestamp: new Date(Number(ts) * 1000).toISOString() } : noMatch;
    }
    case 'CUSTOM': {
      const c = scheme.custom;
      if (!c) return { ok: false, reason: 'the registration has no custom signature scheme' };
      const sig = header(headers, c.signatureHeader);
      if (sig === undefined) return { ok: false, reason: `the ${c.signatureHeader} header is missing` };
      const prefix = c.prefix ?? '';
      if (!sig.startsWith(prefix)) return { ok: false, reason: `${c.signatureHeader} does not start with ${prefix}` };
      const bytes = DIGEST_BYTES[c.algorithm];
      const text = sig.slice(prefix.length);
      // Hex in either case (one case throughout): a custom sender's library may write upper case.
      const presented = c.encoding === 'hex' ? decodeHex(text, bytes, 'either') : decodeBase64(text, bytes);
      if (!presented)
        return {
          ok: false,
          reason:
            c.encoding === 'hex'
              ? `${c.signatureHeader} is not ${prefix}and ${bytes * 2} hex digits (one case)`
              : `${c.signatureHeader} is not ${prefix}and the canonical base64 of ${bytes} bytes`,
        };
      return secrets.some((s) => constantTimeEqual(hmac(c.algorithm, s, body), presented))
        ? { ok: true, timestamp: null }
        : noMatch;
    }
  }
}

/**
 * Signs `body` as the provider would, at `now`, with `secret`; returns the headers to send
 * (signature, timestamps, ids, and the event type where the provider carries it in a header).
 */
export function signDelivery(
  scheme: Scheme,
  secret: string,
  body: Buffer,
  now: Date,
  extra: { eventType?: string; eventId?: string } = {},
): Record<string, string> {
  const ts = String(Math.floor(now.getTime() / 1000));
  const id = extra.eventId ?? `evt_${now.getTime().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
  if (scheme.authType === 'NONE') return {};
  switch (scheme.provider) {
    case 'GITHUB':
      return {
        'X-Hub-Signature-256': `sha256=${hmac('sha256', secret, body).toString('hex')}`,
        'X-GitHub-Event': extra.eventType ?? 'ping',
        'X-GitHub-Delivery': id,
      };
    case 'STRIPE':
      return { 'Stripe-Signature': `t=${ts},v1=${hmac('sha256', secret, concat(`${ts}.`, body)).toString('hex')}` };
    case 'SLACK':
      return {
        'X-Slack-Request-Timestamp': ts,
        'X-Slack-Signature': `v0=${hmac('sha256', secret, concat(`v0:${ts}:`, body)).toString('hex')}`,
      };
    case 'STANDARD':
      return {
        'webhook-id': id,
        'webhook-timestamp': ts,
        'webhook-signature': `v1,${hmac('sha256', standardKey(secret), concat(`${id}.${ts}.`, body)).toString('base64')}`,
      };
    case 'CUSTOM': {
      const c = scheme.custom!;
      const h: Record<string, string> = {
        [c.signatureHeader]: `${c.prefix ?? ''}${hmac(c.algorithm, secret, body).toString(c.encoding)}`,
      };
      if (c.eventTypeHeader && extra.eventType) h[c.eventTypeHeader] = extra.eventType;
      if (c.eventIdHeader) h[c.eventIdHeader] = id;
      return h;
    }
  }
}

/** Reads a dotted path (`event.type`) in a parsed body; undefined when absent. */
export function atPath(value: unknown, path: string): unknown {
  let cur = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * The event type and the provider's event id of a delivery (for the trigger's filter and for
 * idempotency), from headers or the normalized payload as the provider puts them.
 */
export function eventFields(
  scheme: Scheme,
  headers: Headers,
  payload: unknown,
): { eventType: string | null; eventId: string | null } {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
  switch (scheme.provider) {
    case 'GITHUB':
      return { eventType: str(header(headers, 'x-github-event')), eventId: str(header(headers, 'x-github-delivery')) };
    case 'STRIPE':
      return { eventType: str(atPath(payload, 'type')), eventId: str(atPath(payload, 'id')) };
    case 'SLACK':
      return {
        eventType:
          str(atPath(payload, 'event.type')) ?? str(atPath(payload, 'type')) ?? str(atPath(payload, 'command')),
        eventId: str(atPath(payload, 'event_id')) ?? str(atPath(payload, 'trigger_id')),
      };
    case 'STANDARD':
      return { eventType: str(atPath(payload, 'type')), eventId: str(header(headers, 'webhook-id')) };
    case 'CUSTOM': {
      const c = scheme.custom;
      return {
        eventType: c?.eventTypeHeader
          ? str(header(headers, c.eventTypeHeader))
          : c?.eventTypePath
            ? str(atPath(payload, c.eventTypePath))
            : null,
        eventId: c?.eventIdHeader
          ? str(header(headers, c.eventIdHeader))
          : c?.eventIdPath
            ? str(atPath(payload, c.eventIdPath))
            : null,
      };
    }
  }
}

/**
 * The payload as a value: JSON bodies parsed; form-encoded bodies as an object of fields, with a
 * `payload` field holding JSON (GitHub's and Slack's form deliveries) parsed into its place.
 * Anything else: the text. Never throws.
 */
export function normalizePayload(body: Buffer, contentType: string | undefined): unknown {
  const text = body.toString('utf8');
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const fields: Record<string, unknown> = Object.fromEntries(new URLSearchParams(text));
    if (typeof fields.payload === 'string') {
      try {
        return JSON.parse(fields.payload);
      } catch {
        // not JSON: keep the field as text
      }
    }
    return fields;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
