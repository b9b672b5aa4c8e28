// A worker of the billing domain: wfx worker run workers/billing.js (one function per action).
import { JobError } from 'wfx/worker';

export const domain = 'billing';

/** Charges the order (a stand-in: amounts over 1000 are declined, which no retry cures). */
export async function charge(input, job) {
  if (input.amount > 1000) throw new JobError('CARD_DECLINED', `the bank declined ${input.amount}`, { retry: false });
  return { receipt: `r-${input.orderId}-${job.key.slice(-6)}` };
}

/** Refunds the order. */
export async function refund(input) {
  return { refunded: input.orderId };
}
