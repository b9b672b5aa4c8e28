import type { ApiKey, ApiKeyStatus, WfxState } from './state.js';

/**
 * Every change to the live state is one of these records, journaled before it is acknowledged
 * and replayed on recovery. A record says what happened, with every value it needs (times and
 * ids included), so applying it is deterministic.
 */
export type WfxRecord =
  | { readonly type: 'organization.created'; readonly name: string; readonly at: string }
  | { readonly type: 'apiKey.created'; readonly key: ApiKey }
  | { readonly type: 'apiKey.statusChanged'; readonly keyId: string; readonly status: ApiKeyStatus; readonly at: string };

/** One handler per record type: the compiler reports a record type without one. */
type Handlers = {
  readonly [T in WfxRecord['type']]: (state: WfxState, record: Extract<WfxRecord, { type: T }>) => void;
};

const handlers: Handlers = {
  'organization.created': (state, r) => {
    state.organizations[r.name] ??= { name: r.name, createdAt: r.at };
  },
  'apiKey.created': (state, r) => {
    state.apiKeys[r.key.keyId] = { ...r.key };
  },
  'apiKey.statusChanged': (state, r) => {
    const key = state.apiKeys[r.keyId];
    if (!key) return;
    key.status = r.status;
    key.updatedAt = r.at;
  },
};

/** Applies one record to the state in place. Deterministic; the store's reducer. */
export function applyRecord(state: WfxState, record: WfxRecord): void {
  (handlers[record.type] as (s: WfxState, r: WfxRecord) => void)(state, record);
}
