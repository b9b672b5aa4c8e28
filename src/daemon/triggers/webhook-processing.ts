/**
 * The processing of a journaled webhook delivery (webhooks.ts receives it): verified again at
 * the instant it was received, duplicates dropped, its payload kept, and every flow whose active
 * version in the endpoint's environment has a matching webhook trigger started with the webhook
 * variables, in the entry that records the delivery. Until then its ids (event id, body hash)
 * are held, so that a replay arriving meanwhile is a duplicate too.
 */
import { normalizePayload } from '../../shared/webhooks/providers.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { FileStore } from '../files/file-store.js';
import type { Engine } from '../engine/engine.js';
import { describeDepthExcess, jsonDepthExcess } from '../../shared/json-shape.js';
import type { WfxRecord } from '../state/records.js';
import { isSeen, seenCount } from '../state/seen-ids.js';
import {
  WEBHOOK_SEEN_IDS_MAX,
  type DeliveryRecord,
  type Environment,
  type Flow,
  type PendingDelivery,
  type WebhookRegistration,
  type WfxState,
} from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import { bodySummary, clipText, RECORD_REASON_MAX, sha256Of } from './webhook-body.js';
import { bodyHashOf, eventOf, rememberUntil, schemeOf, verifyWith } from './webhook-delivery.js';
import { keepDelivery } from './webhook-kept.js';
import type { StartPacer } from './start-pacing.js';
import type { Trigger } from '../../shared/flow/types.js';
import { sharedEnvironmentOf, subscribesIn, wayOut } from './webhook-route.js';
import type { TriggerStartKey } from '../../shared/flow/trigger-data.js';

/** What the processing is given by the receiver (WebhookReceiverOptions, resolved). */
export interface DeliveryProcessorOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly engine: Engine;
  readonly secrets: SecretBox;
  readonly files: FileStore | undefined;
  readonly onError: (err: unknown, what: string) => void;
  readonly maxJsonDepth: number;
  readonly onRefused: (message: string) => void;
  readonly replayWindowMs: number;
  readonly onWarn: (message: string) => void;
  readonly sharedFallback: Environment | undefined;
  /** Paces the starts of triggers with a debounce or a throttle (start-pacing.ts). */
  readonly pacer: StartPacer;
  readonly now: () => Date;
  /** Told each delivery's outcome once it is durable (the receiver's `processed` event). */
  readonly onProcessed: (webhookId: string, record: DeliveryRecord | null) => void;
}

/** Processes the deliveries received and journaled, each once, and holds their ids meanwhile. */
export class DeliveryProcessor {
  private readonly processing = new Set<string>();
  /** Registrations warned about at the cap (warned again once they fall below it). */
  private readonly atCap = new Set<string>();
  /**
   * The ids (event id, body hash) of verified deliveries journaled and not processed yet, by
   * `webhookId\0id`, with how many carry each: a replay arriving meanwhile is a duplicate too.
   */
  private readonly inFlight = new Map<string, number>();
  /** Each pending delivery's keys in `inFlight`, and its payload as parsed on arrival. */
  private readonly received = new Map<string, { keys: string[]; payload: unknown }>();

  constructor(private readonly options: DeliveryProcessorOptions) {}

  /** Whether a delivery to `webhookId` carrying `id` is journaled and not processed yet. */
  holds(webhookId: string, id: string): boolean {
    return this.inFlight.has(`${webhookId}\0${id}`);
  }

  /** Holds the ids of delivery `deliveryId` to `webhookId` (about to be journaled), and its parsed payload. */
  hold(webhookId: string, deliveryId: string, ids: ReadonlyArray<string | null | undefined>, payload: unknown): void {
    const keys = ids.filter((id) => id != null).map((id) => `${webhookId}\0${id}`);
    for (const k of keys) this.inFlight.set(k, (this.inFlight.get(k) ?? 0) + 1);
    this.received.set(deliveryId, { keys, payload });
  }

  /** Forgets a delivery's ids in flight (processed, or its journaling failed). */
  release(deliveryId: string): void {
    for (const k of this.received.get(deliveryId)?.keys ?? []) {
      const n = this.inFlight.get(k) ?? 0;
      if (n <= 1) this.inFlight.delete(k);
      else this.inFlight.set(k, n - 1);
    }
    this.received.delete(deliveryId);
  }

  /** Processes one journaled delivery (once; a second call while it runs is a no-op). */
  async process(deliveryId: string): Promise<void> {
    const d = this.options.store.state.pendingDeliveries[deliveryId];
    if (!d || this.processing.has(deliveryId)) return;
    this.processing.add(deliveryId);
    try {
      await this.processDelivery(d);
    } catch (err) {
      this.options.onError(err, `processing webhook delivery ${deliveryId}`);
    } finally {
      this.processing.delete(deliveryId);
      this.release(deliveryId);
    }
  }

  private async processDelivery(d: PendingDelivery): Promise<void> {
    const state = this.options.store.state;
    const w = state.webhooks[d.webhookId];
    const base = {
      deliveryId: d.deliveryId,
      receivedAt: d.receivedAt,
      environment: d.environment,
      ...(d.redeliveryOf !== undefined && { redeliveryOf: d.redeliveryOf, by: d.by ?? 'unknown' }),
    };
    const body = Buffer.from(d.body, 'base64');
    const sha256 = sha256Of(body);
    const summary = bodySummary(body, sha256);
    let until = rememberUntil(d.receivedAt, this.options.replayWindowMs, null);
    const done = async (record: DeliveryRecord) => {
      await this.options.store.commit({ type: 'webhook.processed', webhookId: d.webhookId, record, until });
      this.options.onProcessed(d.webhookId, record);
    };
    if (!w) {
      await done({
        ...base,
        eventType: null,
        eventId: null,
        signatureOk: false,
        reason: 'the registration was deleted',
        startedInstanceIds: [],
        body: summary,
      });
      return;
    }
    // Judged at the instant of receipt: a delivery processed after a restart is not stale. Verified
    // again: a delivery journaled by an earlier version was not verified before.
    const receivedAt = new Date(d.receivedAt);
    const scheme = schemeOf(w);
    // A redelivery verified when it first arrived; its kept headers carry no signature.
    const redelivery = d.redeliveryOf !== undefined;
    const verdict = redelivery
      ? ({ ok: true, timestamp: null } as const)
      : verifyWith(w, d.environment, this.options.secrets, d.headers, body, receivedAt);
    if (!verdict.ok) {
      return void (await done({
        ...base,
        ...eventOf(scheme, d.headers, undefined),
        signatureOk: false,
        refused: 'SIGNATURE',
        reason: clipText(`signature refused: ${verdict.reason}`, RECORD_REASON_MAX),
        startedInstanceIds: [],
        body: summary,
      }));
    }
    until = rememberUntil(d.receivedAt, this.options.replayWindowMs, verdict.timestamp);
    const payload = this.received.get(d.deliveryId)?.payload ?? normalizePayload(body, d.headers['content-type']);
    const { eventType, eventId } = eventOf(scheme, d.headers, payload);
    const bodyHash = bodyHashOf(w, d.headers, body, payload, sha256);
    const fields = { ...base, eventType, eventId, signatureOk: true, ...(bodyHash && { bodyHash }), body: summary };
    const seen = state.webhookEventIds[w.webhookId];
    this.warnAtCap(w, seenCount(seen));
    if (!redelivery && eventId !== null && isSeen(seen, eventId, d.receivedAt)) {
      return void (await done({
        ...fields,
        refused: 'DUPLICATE',
        reason: `duplicate: event ${eventId} was delivered before`,
        startedInstanceIds: [],
      }));
    }
    if (!redelivery && bodyHash && isSeen(seen, bodyHash, d.receivedAt)) {
      return void (await done({
        ...fields,
        refused: 'DUPLICATE',
        reason: 'duplicate: the same signed body was delivered before (a replay)',
        startedInstanceIds: [],
      }));
    }
    const excess = jsonDepthExcess(payload, this.options.maxJsonDepth);
    if (excess !== null) {
      const why = `payload refused: ${describeDepthExcess(excess, 'payload')}`;
      this.options.onRefused(`delivery ${d.deliveryId} to ${w.name} started nothing: ${why}`);
      return void (await done({ ...fields, reason: why, startedInstanceIds: [] }));
    }
    // Kept (durable before its record names it) so that it can be read and redelivered.
    const kept = await keepDelivery(this.options.files, w, d.headers, body, this.options.onError);
    const shared = d.environment === 'ALL';
    // A SHARED endpoint runs each flow's PRODUCTION version, or under `wfx dev` its DEVELOPMENT one (webhook-route.ts).
    const envOf = (flow: Flow): Environment =>
      shared ? sharedEnvironmentOf(flow, w.name, this.options.sharedFallback) : (d.environment as Environment);
    const variables = {
      webhookPayload: payload,
      webhookEventType: eventType,
      webhookHeaders: d.headers,
      webhookProvider: w.provider,
      webhookEventId: eventId,
      webhookTraceId: d.headers.traceparent ?? d.headers['x-request-id'] ?? d.deliveryId,
      webhookRawBody: d.body,
      webhookEventTimestamp: verdict.timestamp,
    } satisfies Record<TriggerStartKey<'webhook'>, unknown>;
    const orgFlows = Object.values(state.flows).filter((flow) => flow.organization === w.organization);
    const matches = (tr: Trigger): tr is Extract<Trigger, { type: 'webhook' }> =>
      tr.type === 'webhook' &&
      tr.webhook === w.name &&
      (tr.eventType === undefined || tr.eventType === '' || tr.eventType === eventType);
    const targets = orgFlows.flatMap((flow) => {
      const active = flow.active[envOf(flow)];
      const triggers = active === undefined ? [] : (flow.versions[active]?.definition.triggers ?? []);
      const index = triggers.findIndex(matches);
      return index < 0 ? [] : [{ flow, index, trigger: triggers[index] as Extract<Trigger, { type: 'webhook' }> }];
    });
    const runs = !shared
      ? d.environment
      : this.options.sharedFallback
        ? `PRODUCTION or ${this.options.sharedFallback}`
        : 'PRODUCTION';
    // A flow this endpoint cannot run (active only in the other environment): say so, and the way out.
    const elsewhere = shared
      ? orgFlows.find((f) => envOf(f) !== 'DEVELOPMENT' && subscribesIn(f, 'DEVELOPMENT', w.name))
      : undefined;
    const reason =
      targets.length === 0
        ? `no flow active in ${runs} has a webhook trigger for "${w.name}"${eventType ? ` that takes event ${eventType}` : ''}` +
          (elsewhere
            ? `; ${elsewhere.processId} subscribes in DEVELOPMENT, which the shared endpoint does not run. ${wayOut(w, 'DEVELOPMENT', this.options.sharedFallback)}`
            : ' (`wfx flow list` shows the versions active in each environment)')
        : null;
    let record: DeliveryRecord | null = null;
    let refusedWhy: string | null = null;
    // A trigger's debounce holds its start back, its throttle drops what is over its rate (start-pacing.ts).
    const paced = this.options.pacer.pace(
      targets.map(({ flow, index, trigger }) => ({
        req: {
          organization: w.organization,
          processId: flow.processId,
          environment: envOf(flow),
          data: variables,
          // Kept with the delivery, so a delivery processed after a restart still continues it.
          traceparent: d.headers.traceparent,
        },
        pacing: trigger,
        trigger: `${flow.processId}|${envOf(flow)}|${index}`,
      })),
      this.options.now(),
    );
    const pacing = [
      ...(paced.debounced > 0 ? [`${paced.debounced} start${paced.debounced === 1 ? '' : 's'} debounced`] : []),
      ...(paced.throttled > 0 ? [`${paced.throttled} dropped by a throttle`] : []),
    ].join('; ');
    await this.options.engine.startBatch(paced.start, (started, refused) => {
      // A start the engine refused is recorded with the delivery, never dropped unseen.
      refusedWhy =
        refused.length === 0
          ? null
          : refused.map((r) => `${r.req.processId} not started: ${r.error.code}: ${r.error.message}`).join('; ');
      const why = refusedWhy ?? (pacing === '' ? reason : [reason, pacing].filter((x) => x !== null).join('; '));
      record = {
        ...fields,
        ...(kept && { kept }),
        reason: clipText(why, RECORD_REASON_MAX),
        startedInstanceIds: started.map((i) => i.processInstanceId),
      };
      return [{ type: 'webhook.processed', webhookId: w.webhookId, record, until }, ...paced.records];
    });
    this.options.pacer.held(paced.records);
    if (refusedWhy !== null) this.options.onRefused(`delivery ${d.deliveryId} to ${w.name}: ${refusedWhy as string}`);
    this.options.onProcessed(w.webhookId, record);
  }

  private warnAtCap(w: WebhookRegistration, count: number): void {
    if (count < WEBHOOK_SEEN_IDS_MAX) return void this.atCap.delete(w.webhookId);
    if (this.atCap.has(w.webhookId)) return;
    this.atCap.add(w.webhookId);
    this.options.onWarn(
      `webhook "${w.name}" remembers ${WEBHOOK_SEEN_IDS_MAX} delivery ids: the oldest are forgotten before their replay window ends`,
    );
  }
}
