import type { AiProvider, WfxState } from '../state/state.js';
import type { AiProviderLookup } from './types.js';

/**
 * Finds providers in the live state: by organization and name, or the organization's default
 * when `name` is null. Reads only; a provider deleted meanwhile is simply not found.
 */
export function providerLookup(state: Pick<WfxState, 'aiProviders'>): AiProviderLookup {
  return (organization, name) => {
    for (const p of Object.values(state.aiProviders) as AiProvider[]) {
      if (p.organization !== organization) continue;
      if (name === null ? p.isDefault : p.name === name) return p;
    }
    return undefined;
  };
}
