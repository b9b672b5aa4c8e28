/**
 * What each kind of trigger starts its flow with: the variables of its start data, and nothing
 * else. A flow whose `inputs:` require another variable, or allow none of these, would have every
 * start its trigger makes refused (VALIDATION_ERROR on each delivery, email or fire): such a flow
 * is refused at publish instead, with a problem at the trigger. The producers name their start
 * data's keys with these types, so a variable added there is added here.
 */
import { isRecord } from '../json-object.js';

export const TRIGGER_START_KEYS = {
  webhook: [
    'webhookPayload',
    'webhookEventType',
    'webhookHeaders',
    'webhookProvider',
    'webhookEventId',
    'webhookTraceId',
    'webhookRawBody',
    'webhookEventTimestamp',
  ],
  email: [
    'emailSubject',
    'emailBody',
    'emailSender',
    'emailRecipients',
    'emailMessageId',
    'emailDate',
    'triggerType',
    'emailAttachments',
  ],
  schedule: ['scheduledTime', 'triggerType'],
  execution: ['triggerType', 'endedExecution'],
} as const;

/** The kinds of trigger that start a flow with data of their own. */
export type DataTrigger = keyof typeof TRIGGER_START_KEYS;

/** The variables a trigger of `kind` starts its flow with. */
export type TriggerStartKey<K extends DataTrigger> = (typeof TRIGGER_START_KEYS)[K][number];

/**
 * Why no start a `type` trigger makes can pass the flow's `inputs` (null: one can, or the
 * trigger starts with no data of its own, as on-demand does). Pure.
 */
export function triggerInputsProblem(type: unknown, inputs: Record<string, unknown>): string | null {
  if (typeof type !== 'string' || !Object.hasOwn(TRIGGER_START_KEYS, type)) return null;
  const keys: readonly string[] = TRIGGER_START_KEYS[type as DataTrigger];
  const properties = isRecord(inputs.properties) ? inputs.properties : {};
  const given = `a ${type} trigger starts the flow with ${keys.join(', ')}`;
  // A required property with a default is filled in before the check.
  const required = Array.isArray(inputs.required) ? inputs.required.filter((k) => typeof k === 'string') : [];
  const unmet = required.filter(
    (k) => !keys.includes(k) && !(isRecord(properties[k]) && Object.hasOwn(properties[k], 'default')),
  );
  if (unmet.length > 0)
    return `inputs require ${unmet.map((k) => `"${k}"`).join(', ')}, but ${given} only: each start it makes would be refused (read what the flow needs from those, or make it optional)`;
  if (inputs.additionalProperties === false) {
    const refused = keys.filter((k) => !Object.hasOwn(properties, k));
    if (refused.length > 0)
      return `inputs allow no property they do not list, and ${given}: each start it makes would be refused for ${refused.map((k) => `"${k}"`).join(', ')} (list them, or allow other properties)`;
  }
  return null;
}
