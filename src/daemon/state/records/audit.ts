/**
 * Records of the audit trail (state.audit): one per change made through the API, and the
 * sweep's removal of those past retention. Each sets or removes the entries it names (commons.ts),
 * so on a database cut into partitions any daemon writes them to the shared partition.
 */
import type { AuditEntry } from '../../../shared/api/index.js';
import type { Handlers } from './handlers.js';

/** The records of the audit trail (WfxRecord). */
export type AuditRecord =
  | { readonly type: 'audit.recorded'; readonly entry: AuditEntry }
  /** Entries past the retention or the cap, removed by the sweep (audit/sweep.ts). */
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
