import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { normalizePayload } from '../../shared/webhooks/providers.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { FileStore } from '../files/file-store.js';
import type { Engine } from '../engine/engine.js';
import { uuidv7 } from '../state/ids.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../../shared/json-shape.js';
import type { WfxRecord } from '../state/records.js';
import { tokenKey } from '../state/records/triggers.js';
import { isSeen } from '../state/seen-ids.js';
import {
  DEFAULT_REPLAY_WINDOW_MS,
  type DeliveryRecord,
  type Environment,
  type PendingDelivery,
  type WebhookRegistration,
  type WfxState,
} from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import { bodySummary, clipText, RECORD_REASON_MAX, sha256Of } from './webhook-body.js';
import {
  bodyHashOf,
  eventOf,
  flattenHeaders,
  liveSecrets,
  maxBodyOf,
  schemeOf,
  tryLiveSecrets,
  verifyWith,
} from './webhook-delivery.js';
import { RefusalLog } from './webhook-refusals.js';
import { readKept } from './webhook-kept.js';
import { StartPacer } from './start-pacing.js';
import { DeliveryProcessor } from './webhook-processing.js';
import { WfxError } from '../../shared/errors.js';

export { liveSecrets, maxBodyOf, schemeOf, tryLiveSecrets, verifyWith };

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
  /** How long refused deliveries wait in memory before they are written (REFUSALS_INTERVAL_MS; tests). */
  readonly refusalsIntervalMs?: number;
  /** The environment a SHARED endpoint runs for a flow whose PRODUCTION version does not subscribe (`wfx dev`: DEVELOPMENT); none: PRODUCTION only. */
  readonly sharedFallback?: Environment;
  /** Paces triggers' starts (debounce, throttle); the daemon shares one with the email triggers. Absent: one of its own. */
  readonly pacer?: StartPacer;
}

/**
 * Webhook deliveries. A delivery is verified as it arrives, over the raw bytes as the provider
 * defines it: one refused then (a bad signature or timestamp, a replay of a delivery seen
 * before) is recorded without its body (webhook-refusals.ts: written in batches, never one
 * journal entry each); one verified is journaled whole before the 200 (so a crash loses no
 * acknowledged delivery), then processed (webhook-processing.ts): the payload normalized,
 * duplicates dropped, and every flow whose active version in the endpoint's environment has a
 * matching webhook trigger started with the webhook variables. What was started is journaled
 * in the same entry as the starts; every delivery, started or not, is recorded in the
 * registration's delivery log with the reason, its body's size, hash and first bytes.
 *
 * Emits `processed` ({webhookId, record}) once a delivery's outcome is known: durable for one
 * processed, in memory (and shown in the log) for one refused as it arrived.
 */
export class WebhookReceiver extends EventEmitter {
  private readonly store: DurableStore<WfxState, WfxRecord>;
  /** The engine's secrets keys: signing secrets are opened with them to verify a delivery. */
  readonly secrets: SecretBox;
  /** Where verified deliveries' bodies and headers are kept (the engine's file store; none: not kept). */
  readonly files: FileStore | undefined;
  private readonly now: () => Date;
  private readonly onError: (err: unknown, what: string) => void;
  private readonly refusals: RefusalLog;
  /** See WebhookReceiverOptions.sharedFallback (trigger health reads it too). */
  readonly sharedFallback: Environment | undefined;
  /** The processing of the deliveries journaled, which holds their ids until it is done. */
  private readonly processor: DeliveryProcessor;

  /** The pacer of its triggers' starts (WebhookReceiverOptions.pacer): its held starts armed by `recover`. */
  readonly pacer: StartPacer;

  constructor(options: WebhookReceiverOptions) {
    super();
    this.store = options.store;
    this.secrets = options.engine.secrets;
    this.files = options.engine.files;
    this.now = options.now ?? (() => new Date());
    this.onError = options.onError ?? (() => undefined);
    this.sharedFallback = options.sharedFallback;
    this.processor = new DeliveryProcessor({
      store: this.store,
      engine: options.engine,
      secrets: this.secrets,
      files: this.files,
      onError: this.onError,
      maxJsonDepth: options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
      onRefused: options.onRefused ?? (() => undefined),
      replayWindowMs: options.replayWindowMs ?? DEFAULT_REPLAY_WINDOW_MS,
      onWarn: options.onWarn ?? (() => undefined),
      sharedFallback: options.sharedFallback,
      pacer: (this.pacer =
        options.pacer ??
        new StartPacer({ store: this.store, engine: options.engine, now: this.now, onError: this.onError })),
      now: this.now,
      onProcessed: (webhookId, record) => this.emit('processed', { webhookId, record }),
    });
    this.refusals = new RefusalLog({
      store: this.store,
      onError: this.onError,
      ...(options.refusalsIntervalMs !== undefined && { intervalMs: options.refusalsIntervalMs }),
    });
  }

  /** The registration and environment of an endpoint token, or null. */
  endpointOf(token: string): { webhook: WebhookRegistration; environment: PendingDelivery['environment'] } | null {
    const ref = this.store.state.webhookTokens[tokenKey(token)];
    const webhook = ref && this.store.state.webhooks[ref.webhookId];
    return webhook ? { webhook, environment: ref.environment } : null;
  }

  /**
   * Verifies a delivery to the endpoint of `token` and, when its signature holds and it is no
   * replay, journals it and schedules its processing; a refused one is recorded without its
   * body. Resolves with the delivery id (the same answer either way: a sender learns nothing of
   * the verdict), or null when no endpoint has that token.
   */
  async receive(token: string, headers: IncomingHttpHeaders, body: Buffer): Promise<string | null> {
    const endpoint = this.endpointOf(token);
    if (!endpoint) return null;
    const w = endpoint.webhook;
    const at = this.now();
    const flat = flattenHeaders(headers);
    const base = { deliveryId: uuidv7(at), receivedAt: at.toISOString(), environment: endpoint.environment };
    const scheme = schemeOf(w);
    const verdict = verifyWith(w, endpoint.environment, this.secrets, flat, body, at);
    const sha256 = sha256Of(body);
    if (!verdict.ok) {
      // Its body is not read as JSON: what an unsigned body says is worth no time; its headers name the event.
      this.refuse(w, {
        ...base,
        ...eventOf(scheme, flat, undefined),
        signatureOk: false,
        refused: 'SIGNATURE',
        reason: clipText(`signature refused: ${verdict.reason}`, RECORD_REASON_MAX),
        startedInstanceIds: [],
        body: bodySummary(body, sha256),
      });
      return base.deliveryId;
    }
    const payload = normalizePayload(body, flat['content-type']);
    const { eventType, eventId } = eventOf(scheme, flat, payload);
    const bodyHash = bodyHashOf(w, flat, body, payload, sha256);
    const seen = this.store.state.webhookEventIds[w.webhookId];
    const held = (id: string) => isSeen(seen, id, base.receivedAt) || this.processor.holds(w.webhookId, id);
    const duplicate =
      eventId !== null && held(eventId)
        ? `duplicate: event ${eventId} was delivered before`
        : bodyHash && held(bodyHash)
          ? 'duplicate: the same signed body was delivered before (a replay)'
          : null;
    if (duplicate !== null) {
      this.refuse(w, {
        ...base,
        eventType,
        eventId,
        ...(bodyHash && { bodyHash }),
        signatureOk: true,
        refused: 'DUPLICATE',
        reason: duplicate,
        startedInstanceIds: [],
        body: bodySummary(body, sha256),
      });
      return base.deliveryId;
    }
    const delivery: PendingDelivery = {
      ...base,
      webhookId: w.webhookId,
      headers: flat,
      body: body.toString('base64'),
    };
    this.processor.hold(w.webhookId, delivery.deliveryId, [eventId, bodyHash], payload);
    try {
      await this.store.commit({ type: 'webhook.received', delivery });
    } catch (err) {
      this.processor.release(delivery.deliveryId);
      throw err;
    }
    setImmediate(() => void this.process(delivery.deliveryId));
    return delivery.deliveryId;
  }

  /**
   * Records a delivery to the endpoint of `token` refused for its body's size (`bytes`: its
   * Content-Length, or what was read before it was cut off, `whole` false). Returns its delivery
   * id, or null when no endpoint has that token.
   */
  refuseTooLarge(token: string, headers: IncomingHttpHeaders, bytes: number, whole: boolean): string | null {
    const endpoint = this.endpointOf(token);
    if (!endpoint) return null;
    const w = endpoint.webhook;
    const at = this.now();
    const deliveryId = uuidv7(at);
    const size = whole ? `${bytes} bytes` : `more than ${bytes} bytes`;
    this.refuse(w, {
      deliveryId,
      receivedAt: at.toISOString(),
      environment: endpoint.environment,
      ...eventOf(schemeOf(w), flattenHeaders(headers), undefined),
      signatureOk: false,
      refused: 'TOO_LARGE',
      reason: `body too large: ${size}, over the registration's limit of ${maxBodyOf(w)} (maxBodyBytes)`,
      startedInstanceIds: [],
      body: { bytes, truncated: true },
    });
    return deliveryId;
  }

  /** The deliveries of `webhookId` refused as they arrived and not yet written to the journal, oldest first. */
  unwrittenRefusals(webhookId: string): readonly DeliveryRecord[] {
    return this.refusals.unwritten(webhookId);
  }

  /** How many deliveries `webhookId` refused as they arrived, in all. */
  refusedCount(webhookId: string): number {
    return (this.store.state.webhookRefused[webhookId] ?? 0) + this.refusals.unwrittenCount(webhookId);
  }

  /** Writes the refused deliveries kept in memory; call once no more deliveries arrive. */
  async close(): Promise<void> {
    await this.pacer.close();
    await this.refusals.close();
  }

  /**
   * Processes the kept payload of delivery `deliveryId` of `w` again, as a new delivery (an
   * operator's act, `by` its actor): journaled once like any delivery, its signature not checked
   * again (its headers no longer carry one; it verified when it arrived) and no duplicate
   * check, so the flows subscribed now start. Resolves with the new delivery's record. Throws
   * NOT_FOUND (no such delivery in the log), DELIVERY_NOT_REDELIVERABLE (refused, a duplicate,
   * or not processed yet), DELIVERY_BODY_NOT_KEPT (its body is no longer kept).
   */
  async redeliver(w: WebhookRegistration, deliveryId: string, by: string): Promise<DeliveryRecord> {
    const log = this.store.state.webhookDeliveries[w.webhookId] ?? [];
    const original = log.find((r) => r.deliveryId === deliveryId);
    if (!original) {
      if (this.store.state.pendingDeliveries[deliveryId]?.webhookId === w.webhookId)
        throw new WfxError('DELIVERY_NOT_REDELIVERABLE', `delivery ${deliveryId} is not processed yet`);
      if (this.refusals.unwritten(w.webhookId).some((r) => r.deliveryId === deliveryId))
        throw new WfxError('DELIVERY_NOT_REDELIVERABLE', `delivery ${deliveryId} was refused as it arrived`);
      throw new WfxError('NOT_FOUND', `the delivery log of ${w.name} has no delivery ${deliveryId}`);
    }
    if (!original.signatureOk || original.refused !== undefined)
      throw new WfxError(
        'DELIVERY_NOT_REDELIVERABLE',
        `delivery ${deliveryId} was refused (${original.refused ?? 'SIGNATURE'}): only a verified delivery is redelivered`,
      );
    const kept = await readKept(this.files, original);
    if (!kept) throw new WfxError('DELIVERY_BODY_NOT_KEPT', `the body of delivery ${deliveryId} is no longer kept`);
    const at = this.now();
    const delivery: PendingDelivery = {
      deliveryId: uuidv7(at),
      webhookId: w.webhookId,
      environment: original.environment,
      receivedAt: at.toISOString(),
      headers: kept.headers,
      body: kept.body.toString('base64'),
      redeliveryOf: deliveryId,
      by,
    };
    await this.store.commit({ type: 'webhook.received', delivery });
    await this.process(delivery.deliveryId);
    const record = (this.store.state.webhookDeliveries[w.webhookId] ?? []).find(
      (r) => r.deliveryId === delivery.deliveryId,
    );
    if (!record)
      throw new WfxError('INTERNAL_ERROR', `redelivery ${delivery.deliveryId} is journaled but not processed yet`);
    return record;
  }

  /** The record of delivery `deliveryId` of `webhookId` once it is processed, else undefined. */
  processedRecord(webhookId: string, deliveryId: string): DeliveryRecord | undefined {
    return this.store.state.webhookDeliveries[webhookId]?.find((r) => r.deliveryId === deliveryId);
  }

  /** Processes every delivery received but not processed (after a restart). */
  async recover(): Promise<void> {
    this.pacer.start();
    for (const id of Object.keys(this.store.state.pendingDeliveries)) await this.process(id);
  }

  /** Processes one journaled delivery (once; a second call while it runs is a no-op). */
  process(deliveryId: string): Promise<void> {
    return this.processor.process(deliveryId);
  }

  private refuse(w: WebhookRegistration, record: DeliveryRecord): void {
    this.refusals.add(w.webhookId, record);
    this.emit('processed', { webhookId: w.webhookId, record });
  }
}
