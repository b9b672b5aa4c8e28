/**
 * What is kept of a verified delivery so that an operator can read it and redeliver it: its
 * body and its headers, as one blob of the file store (`<headers as JSON>\n<body bytes>`), named
 * by the delivery's record (`kept`). Headers that sign or authenticate a delivery are never kept:
 * with them a reader could replay the delivery to the endpoint, or learn a credential.
 */
import type { DeliveryDetail, DeliveryRecord } from '../../shared/api/index.js';
import { WEBHOOK_KEPT_BYTES } from '../../shared/api/index.js';
import type { FileStore } from '../files/file-store.js';
import type { WebhookRegistration } from '../state/state.js';

/** Headers every provider uses to sign a delivery (lower case). */
const SIGNATURE_HEADERS = new Set([
  'x-hub-signature',
  'x-hub-signature-256',
  'stripe-signature',
  'x-slack-signature',
  'webhook-signature',
  'svix-signature',
  'x-twilio-signature',
  'x-shopify-hmac-sha256',
]);

/**
 * Header names that carry a credential or a signature whatever the provider: any name that says
 * signature, secret, token, password, hmac, session, cookie, auth (`authorization`, `x-auth`),
 * credential or key (`x-api-key`, `x-webhook-key`): GitLab's `X-Gitlab-Token` is the plain
 * secret, and a registration without a signature often has a sender put its token in a header.
 * Erring this way costs a redelivered flow a header it rarely reads.
 */
const CREDENTIAL_NAME = /signature|secret|token|passw|hmac|session|cookie|auth|credential|key/i;

/** The headers of a delivery to `w` as kept: without any header that signs or authenticates it. */
export function keptHeaders(w: WebhookRegistration, headers: Readonly<Record<string, string>>): Record<string, string> {
  const custom = w.custom?.signatureHeader.toLowerCase();
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (SIGNATURE_HEADERS.has(n) || n === custom || CREDENTIAL_NAME.test(n)) continue;
    out[n] = value;
  }
  return out;
}

/** One blob's content: the kept headers as a JSON line, then the body's bytes. */
export function encodeKept(headers: Readonly<Record<string, string>>, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify(headers)}\n`), body]);
}

/** The headers and body of a blob written by encodeKept (JSON escapes every newline, so the first ends the headers). */
export function decodeKept(blob: Buffer): { headers: Record<string, string>; body: Buffer } {
  const nl = blob.indexOf(0x0a);
  return {
    headers: JSON.parse(blob.subarray(0, nl).toString('utf8')) as Record<string, string>,
    body: blob.subarray(nl + 1),
  };
}

/**
 * Keeps a verified delivery's headers (those keptHeaders leaves) and body in `files`: its
 * `kept` field, or undefined when it is not kept (no file store, a body over
 * WEBHOOK_KEPT_BYTES, a write that failed: `onError` is told).
 */
export async function keepDelivery(
  files: FileStore | undefined,
  w: WebhookRegistration,
  headers: Readonly<Record<string, string>>,
  body: Buffer,
  onError: (err: unknown, what: string) => void,
): Promise<DeliveryRecord['kept']> {
  // Past the file store's own limit the write would be refused each time: not kept, quietly.
  if (!files || body.length > Math.min(WEBHOOK_KEPT_BYTES, files.maxBytes)) return undefined;
  try {
    const blob = await files.writeBlob(encodeKept(keptHeaders(w, headers), body));
    return { blob: blob.sha256, bytes: body.length };
  } catch (err) {
    onError(err, `keeping a delivery of webhook ${w.name}`);
    return undefined;
  }
}

/** The kept headers and body of `record`, or null when it keeps none (or its blob is gone). */
export async function readKept(
  files: FileStore | undefined,
  record: DeliveryRecord,
): Promise<{ headers: Record<string, string>; body: Buffer } | null> {
  if (!files || !record.kept) return null;
  const blob = await files.readBlob(record.kept.blob);
  return blob ? decodeKept(blob) : null;
}

/** `record` with its kept headers and body, for GET .../deliveries/{deliveryId}. */
export async function detailOf(files: FileStore | undefined, record: DeliveryRecord): Promise<DeliveryDetail> {
  const kept = await readKept(files, record);
  if (!kept) return { ...record, headers: null, payload: null };
  const text = kept.body.toString('utf8');
  // Text only when it is UTF-8 as it is (decoding replaced nothing).
  const utf8 = Buffer.from(text, 'utf8').equals(kept.body);
  return {
    ...record,
    headers: kept.headers,
    // Once, not twice: a kept body may be megabytes.
    payload: utf8 ? { base64: null, text } : { base64: kept.body.toString('base64'), text: null },
  };
}
