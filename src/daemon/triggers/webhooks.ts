import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import {
  eventFields,
  normalizePayload,
  verifyDelivery,
  type Scheme,
  type Verdict,
} from '../../shared/webhooks/providers.js';
import { WfxError } from '../../shared/errors.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { webhookSecretContext } from '../state/secret-fields.js';
import type { Engine } from '../engine/engine.js';
import { uuidv7 } from '../engine/ids.js';
import { DEFAULT_MAX_JSON_DEPTH, describeDepthExcess, jsonDepthExcess } from '../../shared/json-shape.js';
import { tokenKey, type WfxRecord } from '../state/records.js';
import { isSeen, seenCount } from '../state/seen-ids.js';
import {
  DEFAULT_REPLAY_WINDOW_MS,
  WEBHOOK_SEEN_IDS_MAX,
  type DeliveryRecord,
  type EndpointEnvironment,
  type Environment,
  type PendingDelivery,
  type WebhookRegistration,
  type WfxState,
} from '../state/state.js';
import type { DurableStore } from '../store/store.js';

export interface WebhookReceiverOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly engine: Engine;
  readonly now?: () => Date;
  readonly onError?: (err: unknown, what: string) => void;
  /** How deep a payload may nest objects and arrays (default DEFAULT_MAX_JSON_DEPTH); a deeper one starts nothing. */
  readonly maxJsonDepth?: number;
  /** Told why a verified delivery started nothing it should have (a payload too deep, a start refused): the daemon logs it as a WARN. */
  readonly onRefused?: (message: string) => void;
  /** How long a delivery's event id (and body hash) makes a later one a duplicate; default DEFAULT_REPLAY_WINDOW_MS. */
  readonly replayWindowMs?: number;
  /** Told when a registration remembers WEBHOOK_SEEN_IDS_MAX ids, so the oldest are forgotten before their window ends. */
  readonly onWarn?: (message: string) => void;
}

/** The scheme a registration verifies with. */
export function schemeOf(w: WebhookRegistration): Scheme {
  return { provider: w.provider, authType: w.authType, ...(w.custom && { custom: w.custom }) };
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
 * Webhook deliveries: journaled on receipt (before the 200), then processed: the signature
 * verified over the raw bytes as the provider defines it, the payload normalized, duplicates
 * (a provider event id seen before) dropped, and every flow whose active version in the
 * endpoint's environment has a matching webhook trigger started with the webhook variables.
 * What was started is journaled in the same entry as the starts; every delivery, started or
 * not, is recorded in the registration's delivery log with the reason.
 *
 * Emits `processed` ({webhookId, record}) once a delivery's outcome is durable.
 */
export class WebhookReceiver extends EventEmitter {
  private readonly store: DurableStore<WfxState, WfxRecord>;
  private readonly engine: Engine;
  /** The engine's secrets keys: signing secrets are opened with them to verify a delivery. */
  readonly secrets: SecretBox;
  private readonly now: () => Date;
  private readonly onError: (err: unknown, what: string) => void;
  private readonly processing = new Set<string>();
  private readonly maxJsonDepth: number;
  private readonly onRefused: (message: string) => void;
  private readonly replayWindowMs: number;
  private readonly onWarn: (message: string) => void;
  /** Registrations warned about at the cap (warned again once they fall below it). */
  private readonly atCap = new Set<string>();

  constructor(options: WebhookReceiverOptions) {
    super();
    this.store = options.store;
    this.engine = options.engine;
    this.secrets = options.engine.secrets;
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => undefined);
    this.maxJsonDepth = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
    this.onRefused = options.onRefused ?? (() => undefined);
    this.replayWindowMs = options.replayWindowMs ?? DEFAULT_REPLAY_WINDOW_MS;
    this.onWarn = options.onWarn ?? (() => undefined);
  }

  /** The registration and environment of an endpoint token, or null. */
  endpointOf(token: string): { webhook: WebhookRegistration; environment: PendingDelivery['environment'] } | null {
    const ref = this.store.state.webhookTokens[tokenKey(token)];
    const webhook = ref && this.store.state.webhooks[ref.webhookId];
    return webhook ? { webhook, environment: ref.environment } : null;
  }

  /**
   * Journals a delivery to the endpoint of `token` and schedules its processing. Resolves with
   * the delivery id once it is durable, or null when no endpoint has that token.
   */
  async receive(token: string, headers: IncomingHttpHeaders, body: Buffer): Promise<string | null> {
    const endpoint = this.endpointOf(token);
    if (!endpoint) return null;
    const at = this.now();
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
    const delivery: PendingDelivery = {
      deliveryId: uuidv7(at),
      webhookId: endpoint.webhook.webhookId,
      environment: endpoint.environment,
      receivedAt: at.toISOString(),
      headers: flat,
      body: body.toString('base64'),
    };
    await this.store.commit({ type: 'webhook.received', delivery });
    setImmediate(() => void this.process(delivery.deliveryId));
    return delivery.deliveryId;
  }

  /** Processes every delivery received but not processed (after a restart). */
  async recover(): Promise<void> {
    for (const id of Object.keys(this.store.state.pendingDeliveries)) await this.process(id);
  }

  /** Processes one journaled delivery (once; a second call while it runs is a no-op). */
  async process(deliveryId: string): Promise<void> {
    const d = this.store.state.pendingDeliveries[deliveryId];
    if (!d || this.processing.has(deliveryId)) return;
    this.processing.add(deliveryId);
    try {
      await this.processDelivery(d);
    } catch (err) {
      this.onError(err, `processing webhook delivery ${deliveryId}`);
    } finally {
      this.processing.delete(deliveryId);
    }
  }

  private async processDelivery(d: PendingDelivery): Promise<void> {
    const state = this.store.state;
    const w = state.webhooks[d.webhookId];
    const base = { deliveryId: d.deliveryId, receivedAt: d.receivedAt, environment: d.environment };
    // Remembered from receipt, like the signature's verdict: a restart does not move the window.
    const until = new Date(Date.parse(d.receivedAt) + this.replayWindowMs).toISOString();
    const done = async (record: DeliveryRecord) => {
      await this.store.commit({ type: 'webhook.processed', webhookId: d.webhookId, record, until });
      this.emit('processed', { webhookId: d.webhookId, record });
    };
    if (!w) {
      await done({
        ...base,
        eventType: null,
        eventId: null,
        signatureOk: false,
        reason: 'the registration was deleted',
        startedInstanceIds: [],
      });
      return;
    }
    const body = Buffer.from(d.body, 'base64');
    // Judged at the instant of receipt: a delivery processed after a restart is not stale.
    const receivedAt = new Date(d.receivedAt);
    const live = tryLiveSecrets(w, d.environment, receivedAt, this.secrets);
    const verdict: Verdict = Array.isArray(live)
      ? verifyDelivery(schemeOf(w), live, d.headers, body, receivedAt)
      : { ok: false, reason: `the signing secret cannot be opened (${live.code}: ${live.message})` };
    const payload = normalizePayload(body, d.headers['content-type']);
    const { eventType, eventId } = eventFields(schemeOf(w), d.headers, payload);
    const bodyHash = w.provider === 'GITHUB' ? `sha256:${createHash('sha256').update(body).digest('hex')}` : undefined;
    const fields = { ...base, eventType, eventId, signatureOk: verdict.ok, ...(bodyHash && { bodyHash }) };
    if (!verdict.ok)
      return void (await done({ ...fields, reason: `signature refused: ${verdict.reason}`, startedInstanceIds: [] }));
    const seen = state.webhookEventIds[w.webhookId];
    this.warnAtCap(w, seenCount(seen));
    if (eventId !== null && isSeen(seen, eventId, d.receivedAt)) {
      return void (await done({
        ...fields,
        reason: `duplicate: event ${eventId} was delivered before`,
        startedInstanceIds: [],
      }));
    }
    if (bodyHash && isSeen(seen, bodyHash, d.receivedAt)) {
      return void (await done({
        ...fields,
        reason: 'duplicate: the same signed body was delivered before (a replay)',
        startedInstanceIds: [],
      }));
    }
    const excess = jsonDepthExcess(payload, this.maxJsonDepth);
    if (excess !== null) {
      const why = `payload refused: ${describeDepthExcess(excess, 'payload')}`;
      this.onRefused(`delivery ${d.deliveryId} to ${w.name} started nothing: ${why}`);
      return void (await done({ ...fields, reason: why, startedInstanceIds: [] }));
    }
    const environment: Environment = d.environment === 'ALL' ? 'PRODUCTION' : d.environment;
    const variables = {
      webhookPayload: payload,
      webhookEventType: eventType,
      webhookHeaders: d.headers,
      webhookProvider: w.provider,
      webhookEventId: eventId,
      webhookTraceId: d.headers.traceparent ?? d.headers['x-request-id'] ?? d.deliveryId,
      webhookRawBody: d.body,
      webhookEventTimestamp: verdict.timestamp,
    };
    const targets = Object.values(state.flows).filter((flow) => {
      if (flow.organization !== w.organization) return false;
      const active = flow.active[environment];
      const triggers = active === undefined ? [] : (flow.versions[active]?.definition.triggers ?? []);
      return triggers.some(
        (tr) =>
          tr.type === 'webhook' &&
          tr.webhook === w.name &&
          (tr.eventType === undefined || tr.eventType === '' || tr.eventType === eventType),
      );
    });
    const reason =
      targets.length === 0
        ? `no flow active in ${environment} has a webhook trigger for "${w.name}"${eventType ? ` that takes event ${eventType}` : ''}`
        : null;
    let record: DeliveryRecord | null = null;
    let refusedWhy: string | null = null;
    await this.engine.startBatch(
      targets.map((flow) => ({
        organization: w.organization,
        processId: flow.processId,
        environment,
        data: variables,
      })),
      (started, refused) => {
        // A start the engine refused is recorded with the delivery, never dropped unseen.
        refusedWhy =
          refused.length === 0
            ? null
            : refused.map((r) => `${r.req.processId} not started: ${r.error.code}: ${r.error.message}`).join('; ');
        record = {
          ...fields,
          reason: refusedWhy ?? reason,
          startedInstanceIds: started.map((i) => i.processInstanceId),
        };
        return [{ type: 'webhook.processed', webhookId: w.webhookId, record, until }];
      },
    );
    if (refusedWhy !== null) this.onRefused(`delivery ${d.deliveryId} to ${w.name}: ${refusedWhy as string}`);
    this.emit('processed', { webhookId: w.webhookId, record });
  }

  private warnAtCap(w: WebhookRegistration, count: number): void {
    if (count < WEBHOOK_SEEN_IDS_MAX) return void this.atCap.delete(w.webhookId);
    if (this.atCap.has(w.webhookId)) return;
    this.atCap.add(w.webhookId);
    this.onWarn(
      `webhook "${w.name}" remembers ${WEBHOOK_SEEN_IDS_MAX} delivery ids: the oldest are forgotten before their replay window ends`,
    );
  }
}
