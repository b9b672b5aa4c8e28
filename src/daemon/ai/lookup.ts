import type { SecretBox } from '../secrets/secret-box.js';
import { providerKeyContext } from '../state/secret-fields.js';
import type { AiProvider, WfxState } from '../state/state.js';
import type { WorkResult } from '../outbound/result.js';
import type { AiProviderLookup } from './types.js';

/**
 * Finds providers in the live state, as stored (the API key sealed): by organization and name,
 * or the organization's default when `name` is null. Reads only; a provider deleted meanwhile is
 * simply not found.
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

/** `p` with its API key opened (a copy for one call: never put back in the state). Throws as SecretBox.open. */
export function withOpenedKey(p: AiProvider, secrets: SecretBox): AiProvider {
  return p.apiKey === undefined ? p : { ...p, apiKey: secrets.open(p.apiKey, providerKeyContext(p)) };
}

/**
 * providerLookup for a model call: the provider found with its API key opened. Throws WfxError
 * SECRETS_KEY_MISSING or SECRET_UNREADABLE when the key cannot be opened (the runners make
 * that the call's AI_KEY_UNREADABLE).
 */
export function openedProviderLookup(state: Pick<WfxState, 'aiProviders'>, secrets: SecretBox): AiProviderLookup {
  const find = providerLookup(state);
  return (organization, name) => {
    const p = find(organization, name);
    return p && withOpenedKey(p, secrets);
  };
}

/**
 * The provider of `call` (undefined: none), or the failure AI_KEY_UNREADABLE when its API key
 * cannot be opened (the secrets key it was sealed with is missing, or the value was changed).
 */
export function findProvider(
  providers: AiProviderLookup,
  call: { readonly organization: string; readonly provider: string | null },
): { provider: AiProvider | undefined } | { failure: WorkResult } {
  try {
    return { provider: providers(call.organization, call.provider) };
  } catch (err) {
    return { failure: { ok: false, code: 'AI_KEY_UNREADABLE', message: (err as Error).message } };
  }
}
