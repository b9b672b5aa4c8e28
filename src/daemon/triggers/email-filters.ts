/**
 * Which emails an email trigger takes (its `filters:`): apart from the IMAP side, so that flow
 * tests (flow-tests/) judge a test's email start as the trigger would, loading nothing of IMAP.
 */
import type { Trigger } from '../../shared/flow/types.js';

type EmailTrigger = Extract<Trigger, { type: 'email' }>;

/** Whether an email passes a trigger's filters (substrings case-insensitive, sender a regex). */
export function passesFilters(
  filters: EmailTrigger['filters'],
  mail: { subject: string; sender: string; body: string },
): boolean {
  if (!filters) return true;
  const has = (text: string, part: string | undefined) =>
    part === undefined || text.toLowerCase().includes(part.toLowerCase());
  if (!has(mail.subject, filters.subjectContains) || !has(mail.body, filters.bodyContains)) return false;
  return filters.senderMatches === undefined || new RegExp(filters.senderMatches, 'i').test(mail.sender);
}
