import type { EngineHarness } from './engine.js';
import type { Domain } from '../../src/daemon/state/state.js';

/** A domain `billing` with `charge` (input: amount required, a number; output: {receipt: string}) and `refund` (any). */
export const BILLING: Omit<Domain, 'organization' | 'createdAt' | 'updatedAt'> = {
  name: 'billing',
  description: 'payments',
  actions: {
    charge: {
      description: 'charge a card',
      input: {
        type: 'object',
        required: ['amount'],
        properties: { amount: { type: 'number' }, currency: { type: 'string' } },
      },
      output: {
        type: 'object',
        required: ['receipt'],
        properties: { receipt: { type: 'string' } },
      },
    },
    refund: { description: null, input: { type: 'object' }, output: {} },
  },
};

/** Registers BILLING (or `domain`) in `organization` straight in the store. */
export async function registerDomain(
  h: Pick<EngineHarness, 'store' | 'clock'>,
  organization = 'default',
  domain = BILLING,
): Promise<void> {
  const at = h.clock.now().toISOString();
  await h.store.commit({ type: 'domain.saved', domain: { ...domain, organization, createdAt: at, updatedAt: at } });
}

/** A flow: start -> charge (domainTask billing/charge with `extra` properties) -> done. */
export const chargeFlow = (extra = '') => `processId: AUTO
name: Charge
nodes:
  start: { type: startEvent, next: charge }
  charge:
    type: domainTask
    domain: billing
    action: charge
    input: { amount: "{amount}", currency: EUR }
${extra}    next: done
  done: { type: endEvent }
`;
