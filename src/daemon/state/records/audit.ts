/**
 * Records of the audit trail as a daemon before the trail's own files (store/audit-trail.ts) kept it,
 * in the state: still read from such a store's snapshot and journal, then moved to the trail at
 * start (store/audit-sweep.ts, moveStateAudit), which removes them. Each sets or removes the entries it
 * names (commons.ts), so on a database cut into partitions any daemon writes them to the shared
 * partition.
 */
import type { AuditEntry } from '../../../shared/api/index.js';
import type { Handlers } from './handlers.js';

/** The records of the audit trail (WfxRecord). */
export type AuditRecord =
  | { readonly type: 'audit.recorded'; readonly entry: AuditEntry }
  /** Entries moved to the trail (store/audit-sweep.ts). */
  | { readonly type: 'audit.removed'; readonly ids: readonly string[] };

/** The reducer's part for the audit trail (records.ts). Entries keep their insertion order: oldest first. */
export const auditHandlers: Handlers<AuditRecord> = {
  'audit.recorded': (state, r) => {
    state.audit[r.entry.id] = r.entry;
  },
  'audit.removed': (state, r) => {
    for (const id of r.ids) delete state.audit[id];
  },
};
