import type { Environment, WfxState } from '../state/state.js';
import { unreachableWhy } from './webhook-route.js';
import { activeTriggers, subjectOf } from '../state/active-triggers.js';
import { lastTriggeredStart } from '../state/trigger-fires.js';
import type { ExecutionTriggerHealth, OnDemandHealth, TriggerHealth, WebhookHealth } from '../../shared/api/index.js';

/** What GET /admin/triggers shows of this trigger (the wire's type, shared/api). */
export type { ExecutionTriggerHealth, OnDemandHealth, TriggerHealth, WebhookHealth };

/**
 * The execution triggers of every active flow version. lastFire: the newest start one made
 * that this daemon noted (state/trigger-fires.ts: the executions it recovered or took, and each
 * start it applied since), so no read walks the executions.
 */
export function executionTriggerHealth(state: WfxState): ExecutionTriggerHealth[] {
  const triggers = activeTriggers(state, 'execution');
  if (triggers.length === 0) return [];
  return triggers.map((a) => ({
    type: 'execution',
    ...subjectOf(a),
    watchedProcessId: a.trigger.processId ?? null,
    states: a.trigger.states,
    state: 'active',
    lastFire: lastTriggeredStart(state, a.flow.processId, a.environment),
    nextFire: null,
    lastError: null,
  }));
}

/** The on-demand triggers of every active flow version: documentary, nothing fires them. */
export function onDemandHealth(state: WfxState): OnDemandHealth[] {
  return activeTriggers(state, 'on-demand').map((a) => ({
    type: 'on-demand',
    ...subjectOf(a),
    description: a.trigger.description ?? null,
    state: 'active',
    lastFire: null,
    nextFire: null,
    lastError: null,
  }));
}

/**
 * The webhook triggers of every active flow version, with what their registration's delivery
 * log says: the last delivery that started this flow, and the latest refusal after it. One that
 * no endpoint can fire (a DEVELOPMENT trigger on a SHARED registration the daemon runs in
 * PRODUCTION: webhook-route.ts, `sharedFallback` as the receiver's) is `disabled`, with why
 * and the way out in lastError, never `active`.
 */
export function webhookHealth(state: WfxState, sharedFallback?: Environment): WebhookHealth[] {
  const out: WebhookHealth[] = [];
  for (const a of activeTriggers(state, 'webhook')) {
    const { flow, environment, trigger } = a;
    const registration = Object.values(state.webhooks).find(
      (w) => w.organization === flow.organization && w.name === trigger.webhook,
    );
    const base = { type: 'webhook', ...subjectOf(a), webhook: trigger.webhook, nextFire: null } as const;
    if (!registration) {
      out.push({
        ...base,
        state: 'disabled',
        lastFire: null,
        lastError: `no webhook registration named "${trigger.webhook}"`,
      });
      continue;
    }
    const unreachable = unreachableWhy(registration, flow, environment, sharedFallback);
    if (unreachable !== null) {
      out.push({ ...base, state: 'disabled', lastFire: null, lastError: unreachable });
      continue;
    }
    const log = (state.webhookDeliveries[registration.webhookId] ?? []).filter(
      (d) => d.environment === 'ALL' || d.environment === environment,
    );
    // The receiver records a start it refused (the flow's inputs refused the payload, say)
    // as "<processId> not started: CODE: why" in the delivery's reason.
    const notStartedHere = (d: (typeof log)[number]) => d.reason?.includes(`${flow.processId} not started: `) ?? false;
    const fired = [...log]
      .reverse()
      .find(
        (d) =>
          d.startedInstanceIds.length > 0 &&
          !notStartedHere(d) &&
          (d.eventType === null || trigger.eventType === undefined || d.eventType === trigger.eventType),
      );
    const latest = log.at(-1);
    const refused =
      latest && (!latest.signatureOk || notStartedHere(latest)) && (!fired || latest.receivedAt > fired.receivedAt)
        ? latest
        : undefined;
    out.push({
      ...base,
      state: refused ? 'failing' : 'active',
      lastFire: fired?.receivedAt ?? null,
      lastError: refused ? `${refused.receivedAt}: ${refused.reason ?? 'refused'}` : null,
    });
  }
  return out;
}
