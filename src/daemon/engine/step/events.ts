/**
 * The step's event inputs: a message or signal delivered (POST /process/event: resumed,
 * kept for its ttl, or refused), a kept message consumed under a claim won for it
 * (kept-claims.ts), an event another daemon threw delivered here. A repeat of a message id is
 * answered before the step (eventSeen): it must not reach other daemons again.
 */
import { WfxError } from '../../../shared/errors.js';
import { STATE, STATUS, type WfxState } from '../../state/state.js';
import { subscriptionsFor, type Subscription } from '../../state/subscriptions.js';
import type { ThrownEvent } from '../engine-events.js';
import type { Step } from './step.js';
import { execution } from '../../state/executions.js';

/** What POST /process/event did: the waits it resumed, or that it kept the event, or a repeat. */
export interface EventOutcome {
  readonly status: 'resumed' | 'buffered' | 'duplicate';
  readonly matched: Array<{ processInstanceId: string; nodeId: string }>;
}

/** The inputs of this file (index.ts, StepInput). */
export type EventInput =
  | {
      readonly kind: 'event';
      readonly organization: string;
      readonly eventType: string;
      readonly correlationKey: string | null;
      readonly data: Record<string, unknown>;
      readonly ttlSeconds: number;
      readonly messageId: string | null;
      /** `organization|messageId`, or null without a message id. */
      readonly dedupKey: string | null;
      /** What other daemons resumed with it (api/fan-out.ts), before this step. */
      readonly elsewhere: EventOutcome['matched'];
    }
  /** Consumes kept message `messageId` for the wait `sub` names: false, changing nothing, when it cannot. */
  | { readonly kind: 'kept.consume'; readonly messageId: string; readonly sub: Subscription }
  /** An event thrown on another daemon, delivered to what waits here. */
  | { readonly kind: 'thrown.deliver'; readonly event: ThrownEvent }
  /**
   * Events kept for other daemons by a daemon that shared this database (thrown-outbox.ts),
   * on one that shares it with none: passed, nothing to give them to.
   */
  | { readonly kind: 'thrown.forget' }
  /** Event `id`, kept until the other daemons had it, given to them (or given up on): passed. */
  | { readonly kind: 'thrown.passed'; readonly id: string };

/** What each input of this file answers. */
export interface EventAnswers {
  event: EventOutcome;
  'kept.consume': boolean;
  'thrown.deliver': void;
  'thrown.forget': void;
  'thrown.passed': void;
}

/** Whether message id `dedupKey` was seen and is remembered still at `now`: the event is a repeat. */
export function eventSeen(state: WfxState, dedupKey: string | null, now: Date): boolean {
  const seenUntil = dedupKey ? state.messageIds[dedupKey] : undefined;
  return seenUntil !== undefined && seenUntil > now.toISOString();
}

/**
 * Delivers the event: resumes what waits for it here, or keeps it for `ttlSeconds` when nothing
 * matched anywhere; with a ttl and a message id, remembers the id that long. Throws
 * NO_MATCHING_SUBSCRIPTION when nothing matched and there is no ttl.
 */
export function deliverEvent(s: Step, input: Extract<EventInput, { kind: 'event' }>): EventOutcome {
  const { elsewhere, dedupKey } = input;
  const now = s.now;
  const subs = subscriptionsFor(s.state, input.organization, input.eventType, input.correlationKey);
  const ttl = input.ttlSeconds;
  if (subs.length === 0 && elsewhere.length === 0 && ttl <= 0) {
    throw new WfxError(
      'NO_MATCHING_SUBSCRIPTION',
      `no execution waits for ${input.eventType} with correlation key ${input.correlationKey ?? '(none)'}`,
    );
  }
  const matched = [...subs.map((x) => ({ processInstanceId: x.instanceId, nodeId: x.nodeId })), ...elsewhere];
  const seen = dedupKey !== null && ttl > 0;
  if (subs.length === 0 && elsewhere.length > 0 && !seen) return { status: 'resumed', matched };
  if (seen)
    s.emit({ type: 'messageId.seen', key: dedupKey, until: new Date(now.getTime() + ttl * 1000).toISOString() });
  if (subs.length > 0) s.deliver(subs, input.data);
  else if (elsewhere.length === 0) {
    s.emit({
      type: 'message.buffered',
      message: {
        id: s.ctx.newId(now),
        organization: input.organization,
        eventType: input.eventType,
        correlationKey: input.correlationKey,
        data: input.data,
        messageId: input.messageId,
        receivedAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
      },
    });
  }
  return { status: matched.length > 0 ? 'resumed' : 'buffered', matched };
}

/**
 * Consumes kept message `id` for the node `sub` names, under the claim won for it
 * (kept-claims.ts). False, changing nothing, when the message is gone or that node no longer
 * waits for it.
 */
export function consumeKept(s: Step, id: string, sub: Subscription): boolean {
  const message = s.state.messages[id];
  const inst = execution(s.state, sub.instanceId);
  const ni = inst?.nodes[sub.nodeInstanceId];
  if (!message || !inst || !ni || inst.stateCd !== STATE.RUNNING || ni.statusCd !== STATUS.WAITING) return false;
  const wait = ni.wait;
  if (wait?.kind !== 'event') return false;
  const { messageRef: eventType, eventType: kind, correlationKey: key } = wait;
  if (!s.consumes(message, { organization: inst.organization, eventType, kind, key })) return false;
  s.emit({ type: 'message.removed', id });
  s.wake(inst, ni, { kind: 'event', data: message.data });
  s.drain();
  return true;
}

/** Delivers an event thrown elsewhere to what waits here for it. */
export function deliverThrown(s: Step, event: ThrownEvent): void {
  s.deliver(subscriptionsFor(s.state, event.organization, event.eventType, event.correlationKey), event.data);
}

/** Writes event `id` as passed, unless it was already (see EventInput, thrown.passed). */
export function passedThrown(s: Step, id: string): void {
  if (s.state.thrown[id]) s.emit({ type: 'event.passed', id });
}

/** Writes every event kept for other daemons as passed (see EventInput, thrown.forget). */
export function forgetThrown(s: Step): void {
  for (const id of Object.keys(s.state.thrown)) s.emit({ type: 'event.passed', id });
}
