/** The audit trail's retention: records older than the retention, and the oldest beyond the cap, removed. */
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { DurableStore } from '../store/store.js';

/** How long audit records are kept by default (`--audit-retention`). */
export const DEFAULT_AUDIT_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;
/** How many audit records are kept at most by default (`--audit-max`). */
export const DEFAULT_AUDIT_MAX = 100_000;
/** Ids one `audit.removed` record names at most: a sweep of a long trail is several small journal entries. */
const REMOVED_PER_RECORD = 5_000;

/** The retention of the audit trail (daemon options). */
export interface AuditRetention {
  readonly retentionMs: number;
  readonly maxEntries: number;
}

/** The ids past `retention` at `now` (the oldest first): older than the retention, or beyond the cap. */
export function auditExpired(
  audit: Readonly<Record<string, { readonly at: string }>>,
  retention: AuditRetention,
  now: Date,
): string[] {
  const ids = Object.keys(audit); // oldest first (insertion order)
  const cutoff = new Date(now.getTime() - retention.retentionMs).toISOString();
  const overCap = Math.max(0, ids.length - retention.maxEntries);
  const out: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (i >= overCap && audit[ids[i]!]!.at >= cutoff) break;
    out.push(ids[i]!);
  }
  return out;
}

/** Removes the audit records past `retention`; resolves to how many, once journaled. */
export async function sweepAudit(
  store: DurableStore<WfxState, WfxRecord>,
  retention: AuditRetention,
  now: Date = new Date(),
): Promise<number> {
  const expired = auditExpired(store.state.audit, retention, now);
  for (let i = 0; i < expired.length; i += REMOVED_PER_RECORD)
    await store.commit({ type: 'audit.removed', ids: expired.slice(i, i + REMOVED_PER_RECORD) });
  return expired.length;
}
