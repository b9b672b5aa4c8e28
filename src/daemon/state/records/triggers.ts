/**
 * Records of the triggers that start executions from outside: webhook registrations and their
 * deliveries, schedules fired and armed, email connections and the messages they processed.
 */
import { createHash } from 'node:crypto';
import { rememberIds } from '../seen-ids.js';
import {
  DEFAULT_REPLAY_WINDOW_MS,
  EMAIL_SEEN_IDS,
  type DeliveryRecord,
  type EmailConnection,
  type PendingDelivery,
  type DebouncedStart,
  type ScheduleFires,
  type WebhookRegistration,
  type Writable,
  type WfxState,
} from '../state.js';
import { appendDeliveries } from '../webhook-log.js';
import type { Handlers } from './handlers.js';

/** The records of webhooks, schedules and email connections (WfxRecord). */
export type TriggerRecord =
  /** A registration created or changed (endpoints, secrets): the whole registration. */
  | { readonly type: 'webhook.saved'; readonly webhook: WebhookRegistration }
  | { readonly type: 'webhook.deleted'; readonly webhookId: string }
  | { readonly type: 'webhook.received'; readonly delivery: PendingDelivery }
  /**
   * A delivery's outcome. A signed one's event id and body hash are remembered until `until`
   * (its replay window; absent in records of earlier versions: the default window from receipt).
   */
  | {
      readonly type: 'webhook.processed';
      readonly webhookId: string;
      readonly record: DeliveryRecord;
      readonly until?: string;
    }
  /**
   * Deliveries refused as they arrived (webhook-refusals.ts), written together: `records`
   * for the log (never a body), `count` how many were refused in all (more than `records` when
   * the log would have dropped some at once).
   */
  | {
      readonly type: 'webhook.refused';
      readonly webhookId: string;
      readonly records: readonly DeliveryRecord[];
      readonly count: number;
    }
  /** A schedule trigger fired for the instant `at` (with the starts it made), or was armed from `at` (no fire before it). */
  | { readonly type: 'schedule.fired'; readonly key: string; readonly at: string }
  | { readonly type: 'schedule.armed'; readonly key: string; readonly at: string }
  /** A schedule stopped (its version is no longer active): re-activated later, it fires from then on. */
  | { readonly type: 'schedule.disarmed'; readonly key: string; readonly at: string }
  /**
   * A schedule's overlap state (triggers/schedule-overlap.ts): the executions its fires started
   * that hold back the next, and the fire times waiting their turn; written with the starts.
   */
  | {
      readonly type: 'schedule.overlap';
      readonly key: string;
      readonly at: string;
      readonly runs: readonly string[];
      readonly pending: readonly string[];
    }
  /** A trigger's debounce holds a start back until `start.due` (triggers/start-pacing.ts); a later one of the same key replaces it. */
  | { readonly type: 'start.debounced'; readonly key: string; readonly start: DebouncedStart }
  /** The debounced start of `key` started (its executions are in the same entry), or its flow no longer takes it. */
  | { readonly type: 'start.undebounced'; readonly key: string }
  /** An email was processed (the executions it started are in the same entry): never again for that Message-ID. */
  | { readonly type: 'email.processed'; readonly connectionId: string; readonly messageId: string }
  | { readonly type: 'emailConnection.saved'; readonly connection: EmailConnection }
  | { readonly type: 'emailConnection.deleted'; readonly connectionId: string };

/** `next`, with the overlap state (runs, pending) of `was` carried over. */
function overlapKept(next: Writable<ScheduleFires>, was: ScheduleFires | undefined): ScheduleFires {
  if (was?.runs !== undefined) next.runs = was.runs;
  if (was?.pending !== undefined) next.pending = was.pending;
  return next;
}

/** The key of the token index: a SHA-256, so looking a token up reveals nothing about it. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function unindex(state: WfxState, webhookId: string): void {
  const w = state.webhooks[webhookId];
  if (w) for (const e of w.endpoints) delete state.webhookTokens[tokenKey(e.token)];
}

/** The reducer's part for webhooks, schedules and email connections (records.ts). */
export const triggerHandlers: Handlers<TriggerRecord> = {
  'webhook.saved': (state, r) => {
    unindex(state, r.webhook.webhookId);
    state.webhooks[r.webhook.webhookId] = r.webhook;
    for (const e of r.webhook.endpoints)
      state.webhookTokens[tokenKey(e.token)] = { webhookId: r.webhook.webhookId, environment: e.environment };
  },
  'webhook.deleted': (state, r) => {
    unindex(state, r.webhookId);
    delete state.webhooks[r.webhookId];
    delete state.webhookDeliveries[r.webhookId];
    delete state.webhookRefused[r.webhookId];
    delete state.webhookEventIds[r.webhookId];
  },
  'webhook.received': (state, r) => {
    state.pendingDeliveries[r.delivery.deliveryId] = r.delivery;
  },
  'webhook.processed': (state, r) => {
    delete state.pendingDeliveries[r.record.deliveryId];
    if (!state.webhooks[r.webhookId]) return; // deleted meanwhile
    appendDeliveries(state, r.webhookId, [r.record]);
    if (r.record.refused) state.webhookRefused[r.webhookId] = (state.webhookRefused[r.webhookId] ?? 0) + 1;
    if (r.record.signatureOk) {
      const at = r.record.receivedAt;
      const until = r.until ?? new Date(Date.parse(at) + DEFAULT_REPLAY_WINDOW_MS).toISOString();
      rememberIds(state.webhookEventIds, r.webhookId, [r.record.eventId, r.record.bodyHash], at, until);
    }
  },
  'webhook.refused': (state, r) => {
    if (!state.webhooks[r.webhookId]) return; // deleted meanwhile
    appendDeliveries(state, r.webhookId, r.records);
    state.webhookRefused[r.webhookId] = (state.webhookRefused[r.webhookId] ?? 0) + r.count;
  },
  'schedule.fired': (state, r) => {
    state.scheduleFires[r.key] = overlapKept({ at: r.at, lastFire: r.at }, state.scheduleFires[r.key]);
  },
  'schedule.armed': (state, r) => {
    const was = state.scheduleFires[r.key];
    state.scheduleFires[r.key] = overlapKept({ at: r.at, lastFire: was?.lastFire ?? null }, was);
  },
  'schedule.disarmed': (state, r) => {
    const was = state.scheduleFires[r.key];
    state.scheduleFires[r.key] = overlapKept({ at: r.at, lastFire: was?.lastFire ?? null, inactive: true }, was);
  },
  'schedule.overlap': (state, r) => {
    const was = state.scheduleFires[r.key];
    const kept: Writable<ScheduleFires> = { at: was?.at ?? r.at, lastFire: was?.lastFire ?? null };
    // Never armed (a backfill of a paused schedule): armed later, it fires from then on.
    if (was === undefined || was.inactive === true) kept.inactive = true;
    if (r.runs.length > 0) kept.runs = r.runs;
    if (r.pending.length > 0) kept.pending = r.pending;
    state.scheduleFires[r.key] = kept;
  },
  'start.debounced': (state, r) => {
    state.debounced[r.key] = r.start;
  },
  'start.undebounced': (state, r) => {
    delete state.debounced[r.key];
  },
  'email.processed': (state, r) => {
    const ids = (state.emailSeen[r.connectionId] ??= []);
    if (!ids.includes(r.messageId)) ids.push(r.messageId);
    if (ids.length > EMAIL_SEEN_IDS) ids.splice(0, ids.length - EMAIL_SEEN_IDS);
  },
  'emailConnection.saved': (state, r) => {
    state.emailConnections[r.connection.connectionId] = r.connection;
  },
  'emailConnection.deleted': (state, r) => {
    delete state.emailConnections[r.connectionId];
    delete state.emailSeen[r.connectionId];
  },
};
