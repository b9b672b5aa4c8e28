/** The audit trail's retention, and the move of records an older daemon kept in the state into the trail. */
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { DurableStore } from './store.js';
import type { AuditTrail } from './audit-trail.js';

/** How long audit records are kept by default (`--audit-retention`). */
export const DEFAULT_AUDIT_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

/** Records one `audit.removed` names at most: a long move is several small journal entries. */
const REMOVED_PER_RECORD = 5_000;

/**
 * Moves the records a daemon before the trail's own files kept in the state (`state.audit`)
 * into `trail`, each durable there before the journal entry that removes it from the state: a
 * crash between the two writes it again (the same id: harmless). Resolves to how many moved.
 */
export async function moveStateAudit(store: DurableStore<WfxState, WfxRecord>, trail: AuditTrail): Promise<number> {
  const ids = Object.keys(store.state.audit);
  for (let i = 0; i < ids.length; i += REMOVED_PER_RECORD) {
    const part = ids.slice(i, i + REMOVED_PER_RECORD);
    await Promise.all(part.map((id) => trail.record(store.state.audit[id]!)));
    await store.commit({ type: 'audit.removed', ids: part });
  }
  return ids.length;
}
