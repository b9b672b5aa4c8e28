/**
 * What `wfx webhooks send` does besides signing: make each send a new event, as a provider's
 * next delivery would be, and read back from the delivery log what the daemon did with it.
 */
import { randomBytes } from 'node:crypto';
import type { WfxClient } from '../client/client.js';
import type { DeliveryRecord, WebhookView } from '../shared/api/index.js';
import { WfxError } from '../shared/errors.js';

/** JSON ignores whitespace after the value: four of its kinds carry two bits each. */
const WHITESPACE = [' ', '\t', '\n', '\r'];

/**
 * `body` as a new event of `webhook`'s provider: the event id the daemon deduplicates on made
 * fresh (Stripe's `id`, Slack's `event_id`, a custom `eventIdPath`) with the event's time now;
 * for providers told apart by the signed body alone (GitHub; custom without an event id), a
 * nonce of trailing whitespace, which JSON ignores. Other bodies are sent as they are.
 */
export function freshEvent(webhook: WebhookView, body: Buffer, now = new Date()): Buffer {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return body;
  const event = value as Record<string, unknown>;
  const seconds = Math.floor(now.getTime() / 1000);
  const id = randomBytes(12).toString('hex');
  switch (webhook.provider) {
    case 'STRIPE':
      return Buffer.from(JSON.stringify({ ...event, id: `evt_${id}`, created: seconds }));
    case 'SLACK':
      return Buffer.from(JSON.stringify({ ...event, event_id: `Ev${id}`, event_time: seconds }));
    case 'CUSTOM': {
      const path = webhook.custom?.eventIdPath;
      if (webhook.custom?.eventIdHeader) return body;
      if (path) return Buffer.from(JSON.stringify(setPath(event, path.split('.'), id)));
      return withNonce(body);
    }
    case 'GITHUB':
      return withNonce(body);
    default:
      // Standard Webhooks: the id is a header, signed fresh each time.
      return body;
  }
}

function withNonce(body: Buffer): Buffer {
  const bits = randomBytes(8);
  let tail = '';
  for (const byte of bits) for (let shift = 0; shift < 8; shift += 2) tail += WHITESPACE[(byte >> shift) & 3];
  return Buffer.concat([body, Buffer.from(tail)]);
}

function setPath(value: Record<string, unknown>, path: string[], to: unknown): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  const inner = value[head];
  return {
    ...value,
    [head]:
      rest.length === 0
        ? to
        : setPath(typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>) : {}, rest, to),
  };
}

/**
 * The delivery log's record of `deliveryId` once the daemon has processed it (it verifies and
 * starts flows just after it answers the sender). Throws WEBHOOK_NOT_PROCESSED if that takes
 * longer than `timeoutMs`.
 */
export async function processedDelivery(
  client: WfxClient,
  name: string,
  deliveryId: string,
  timeoutMs = 10_000,
): Promise<DeliveryRecord> {
  const until = Date.now() + timeoutMs;
  for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
    const found = (await client.webhooks.deliveries(name)).items.find((d) => d.deliveryId === deliveryId);
    if (found && !('pending' in found)) return found;
    if (Date.now() > until)
      throw new WfxError(
        'WEBHOOK_NOT_PROCESSED',
        `delivery ${deliveryId} was received but not processed within ${timeoutMs / 1000} s; see wfx webhooks deliveries ${name}`,
      );
    await new Promise((r) => setTimeout(r, wait));
  }
}
