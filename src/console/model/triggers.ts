/* Trigger health and webhook deliveries in words (the /triggers pages). Pure. */
import type { DeliveryView } from '../../shared/api/webhooks.js';
import type { TriggerHealth } from '../../shared/api/triggers.js';

/** What a trigger is, in a few words: a schedule's cron and zone, a webhook's registration, an email connection. */
export function triggerWords(t: TriggerHealth): string {
  switch (t.type) {
    case 'schedule':
      return `Schedule ${t.cron}${t.timezone !== 'UTC' ? ` (${t.timezone})` : ''}, missed runs: ${t.missedRuns}${t.overlap !== 'allow' ? `, overlap: ${t.overlap}` : ''}${t.waiting > 0 ? `, ${t.waiting} fire time${t.waiting === 1 ? '' : 's'} waiting` : ''}`;
    case 'webhook':
      return `Webhook ${t.webhook}`;
    case 'email':
      return `Email ${t.connection}`;
    case 'on-demand':
      return `On demand${t.description ? `: ${t.description}` : ''}`;
    case 'execution':
      return `When ${t.watchedProcessId === null ? 'any other flow' : `flow ${t.watchedProcessId}`} ends ${t.states.join(' or ')}`;
  }
}

/** The badge class of a trigger's state (the word is shown beside the colour). */
export const TRIGGER_STATE_CLASS = {
  active: 'state-completed',
  failing: 'state-failed',
  disabled: 'state-cancelled',
} as const;

/** Why a trigger does not fire, when it does not: its last error, or what its state says. */
export function notFiringReason(t: TriggerHealth): string | null {
  if (t.state === 'active') return t.type === 'on-demand' ? 'Nothing fires it: started by hand or over the API.' : null;
  if (t.type === 'schedule' && t.state === 'disabled')
    return 'Paused: wfx schedules resume (or a deploy with schedules: {FLOW: on}) fires it again.';
  return t.lastError ?? (t.state === 'disabled' ? 'Disabled.' : 'Failing.');
}

/** A delivery's signature verdict in a word: ok, refused, unread (too large), pending. */
export function verdictWord(d: DeliveryView): string {
  if ('pending' in d) return 'pending';
  if (d.refused === 'TOO_LARGE') return 'too large';
  if (d.refused === 'DUPLICATE') return 'duplicate';
  return d.signatureOk ? 'verified' : 'refused';
}

/** Whether a delivery can be redelivered: verified, processed, not refused, its body kept. */
export function redeliverable(d: DeliveryView): boolean {
  return !('pending' in d) && d.signatureOk && d.refused === undefined && d.kept !== undefined;
}
