/**
 * Events delivered (POST /process/event), one at a time per message id: a repeat of a message
 * id is answered `duplicate` (once the first is durable) before it reaches other daemons; the
 * rest is one step (step/events.ts decides resumed, kept or refused).
 */
import { WfxError } from '../../shared/errors.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';
import type { RunStep } from './step/index.js';
import { eventSeen, type EventOutcome } from './step/events.js';

/** An event as publishEvent takes it (see EventDelivery.publish). */
export interface PublishRequest {
  readonly organization: string;
  readonly eventType: string;
  readonly correlationKey: string | null;
  readonly data?: Record<string, unknown>;
  readonly ttlSeconds?: number;
  readonly messageId?: string | null;
  readonly elsewhere?: () => Promise<EventOutcome['matched']>;
}

/** What EventDelivery needs. */
export interface EventDeliveryOptions {
  readonly state: WfxState;
  readonly store: Pick<DurableStore<WfxState, WfxRecord>, 'flush'>;
  readonly step: RunStep;
  readonly now: () => Date;
  /** Whether this daemon still holds the partition of message id `organization|messageId`; null: every one. */
  readonly holdsMessageId: ((key: string) => boolean) | null;
}

/** Events delivered, one at a time per message id (see the top of this file). */
export class EventDelivery {
  /** Events being delivered, by message id (organization|messageId): one at a time each. */
  private readonly publishing = new Map<string, Promise<unknown>>();

  constructor(private readonly options: EventDeliveryOptions) {}

  /** Delivers the event (Engine.publishEvent says what it answers and throws). */
  async publish(req: PublishRequest): Promise<EventOutcome> {
    const dedupKey = req.messageId ? `${req.organization}|${req.messageId}` : null;
    if (dedupKey === null) return this.deliver(req, null);
    // One event per message id at a time: a second waits for the first, then finds it seen.
    for (let earlier = this.publishing.get(dedupKey); earlier; earlier = this.publishing.get(dedupKey))
      await earlier.catch(() => undefined);
    const delivering = this.deliver(req, dedupKey);
    this.publishing.set(dedupKey, delivering);
    try {
      return await delivering;
    } finally {
      if (this.publishing.get(dedupKey) === delivering) this.publishing.delete(dedupKey);
    }
  }

  /**
   * Delivers kept event `id` (PendingThrow.here: thrown while what it wakes was not in memory)
   * to what waits here for it, read back first (the step names them), then writes it passed. A
   * crash between the two delivers it again after the restart, to what waits then.
   */
  async deliverKept(id: string): Promise<void> {
    const event = this.options.state.thrown[id];
    if (event === undefined) return;
    const { organization, eventType, correlationKey, data } = event;
    await this.options.step({ kind: 'thrown.deliver', event: { organization, eventType, correlationKey, data } });
    await this.options.step({ kind: 'thrown.passed', id });
  }

  /** Delivers every event kept to be delivered here (deliverKept), oldest first: after a restart. */
  async deliverAllKept(): Promise<void> {
    const kept = Object.values(this.options.state.thrown).filter((e) => e.here === true);
    kept.sort((a, b) => (a.thrownAt < b.thrownAt ? -1 : a.thrownAt > b.thrownAt ? 1 : 0));
    for (const event of kept) await this.deliverKept(event.id);
  }

  /** The deliveries under way under the message ids `leaving` names (their partition is handed over). */
  underWay(leaving: (key: string) => boolean): Array<Promise<unknown>> {
    return [...this.publishing].filter(([key]) => leaving(key)).map(([, p]) => p);
  }

  /** publish, with `dedupKey` (organization|messageId) not being delivered by another call. */
  private async deliver(req: PublishRequest, dedupKey: string | null): Promise<EventOutcome> {
    // Checked in the turn the delivery is registered: handOver waits for those it lets through.
    if (dedupKey !== null && this.options.holdsMessageId?.(dedupKey) === false)
      throw new WfxError('PARTITION_MOVING', 'the partition of this message id is moving to another daemon', {
        details: { retryAfter: 1 },
      });
    const now = this.options.now();
    if (eventSeen(this.options.state, dedupKey, now)) {
      await this.options.store.flush(); // the first one may still be on its way to disk
      return { status: 'duplicate', matched: [] };
    }
    const elsewhere = req.elsewhere ? await req.elsewhere() : [];
    return this.options.step(
      {
        kind: 'event',
        organization: req.organization,
        eventType: req.eventType,
        correlationKey: req.correlationKey,
        data: req.data ?? {},
        ttlSeconds: req.ttlSeconds ?? 0,
        messageId: req.messageId ?? null,
        dedupKey,
        elsewhere,
      },
      now,
    );
  }
}
