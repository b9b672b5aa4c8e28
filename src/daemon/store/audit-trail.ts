/**
 * Where the audit trail is kept: outside the live state, so that neither memory, snapshots nor
 * restarts grow with it (docs/decisions/067-audit.md). On the JSON store, append-only day files
 * in `<data-dir>/audit/` (FileAuditTrail, the history's file format); on PostgreSQL, a table
 * every daemon of the database writes and reads (store/pg/pg-audit.ts).
 */
import type { AuditEntry, AuditListQuery, AuditPage, WithDefaults } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { memoByText } from '../../shared/memo.js';
import { bucketOf } from '../state/ids.js';
import type { History } from './history.js';

/** The filters of a page, the organization settled (null: every organization, a system admin's). */
export type AuditFilter = Omit<WithDefaults<AuditListQuery, 'limit'>, 'organization'> & {
  readonly organization: string | null;
};

/** What the recorder, GET /admin/audit and the retention sweep ask of the trail. */
export interface AuditTrail {
  /** Keeps `entry`; resolves once it is durable. */
  record(entry: AuditEntry): Promise<void>;
  /**
   * A page of records newest first, below `filter.cursor`, as `filter` selects. A page may hold
   * fewer than `limit` records with a `nextCursor` (a search that read its budget of records
   * stops there): the caller follows `nextCursor` until it is null.
   */
  page(filter: AuditFilter): Promise<AuditPage>;
  /** Removes the records written before `cutoff` (whole days on files); resolves to how many days or rows went. */
  sweep(cutoff: Date): Promise<number>;
  close(): Promise<void>;
}

/** Records a page reads at most before it answers with what it found and a cursor to go on from. */
export const PAGE_SCAN_BUDGET = 20_000;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Refuses a cursor that is not a record's id (VALIDATION_ERROR). */
export function checkCursor(cursor: string | undefined): void {
  if (cursor !== undefined && !UUID_RE.test(cursor))
    throw new WfxError('VALIDATION_ERROR', 'cursor is not one this list gave (a record id)');
}

/** Whether `actor` (an actor, a bare key id or a token subject) names the record's actor `recorded`. */
export function actorMatches(recorded: string, actor: string): boolean {
  return recorded === actor || recorded === `key:${actor}` || recorded === `oidc:${actor}`;
}

/** Whether `entry` is one `filter` selects (the organization aside); `since` and `until` as ISO text (isoBounds). */
function entryMatches(entry: AuditEntry, filter: AuditFilter): boolean {
  if (filter.since !== undefined && entry.at < filter.since) return false;
  if (filter.until !== undefined && entry.at > filter.until) return false;
  if (filter.actor !== undefined && !actorMatches(entry.actor, filter.actor)) return false;
  if (filter.action !== undefined && !entry.action.includes(filter.action)) return false;
  if (filter.target !== undefined && !Object.values(entry.targets).includes(filter.target)) return false;
  return true;
}

/** The frame tags of a record: its organization, actor and action, so a page filters on them without reading it. */
function tagsOf(entry: AuditEntry): string[] {
  return [
    entry.organization === null ? '-' : `o:${encoded(entry.organization)}`,
    encoded(entry.actor),
    encoded(entry.action),
  ];
}

/** `encodeURIComponent`, remembered: organizations, actors and actions are few, and every record has three. */
const encoded = memoByText(encodeURIComponent, 1_024);

/** `filter` with its date-time bounds as the ISO text records hold, so each record compares as text. */
function isoBounds(filter: AuditFilter): AuditFilter {
  const iso = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
  const { since, until, ...rest } = filter;
  return {
    ...rest,
    ...(since !== undefined && { since: iso(since) }),
    ...(until !== undefined && { until: iso(until) }),
  };
}

/**
 * The trail in day files (`audit/YYYY-MM-DD.jsonl`, the history's frames keyed by record id,
 * tagged with organization, actor and action): a record is appended and synced before the
 * answer leaves (group-committed with the other records of the moment); retention deletes whole
 * days.
 */
export class FileAuditTrail implements AuditTrail {
  constructor(
    /** The history files of the audit directory (History.open on `<data-dir>/audit`). */
    readonly files: History,
  ) {}

  record(entry: AuditEntry): Promise<void> {
    const day = bucketOf(entry.id);
    if (day === null) return Promise.reject(new TypeError(`not an audit record id: ${entry.id}`));
    return this.files.putJson(day, entry.id, JSON.stringify(entry), tagsOf(entry));
  }

  async page(asked: AuditFilter): Promise<AuditPage> {
    checkCursor(asked.cursor);
    const filter = isoBounds(asked);
    const org = filter.organization === null ? null : `o:${encodeURIComponent(filter.organization)}`;
    const sinceDay = filter.since?.slice(0, 10) ?? null;
    const untilDay = filter.until?.slice(0, 10) ?? null;
    const cursorDay = filter.cursor === undefined ? null : bucketOf(filter.cursor);
    const items: AuditEntry[] = [];
    let budget = PAGE_SCAN_BUDGET;
    let last: string | null = null;
    for (const bucket of await this.files.buckets()) {
      if ((cursorDay !== null && bucket > cursorDay) || (untilDay !== null && bucket > untilDay)) continue;
      if (sinceDay !== null && bucket < sinceDay) break;
      const listed = await this.files.list(bucket, {
        ...(filter.cursor !== undefined && { below: filter.cursor }),
        limit: budget,
        ...(org !== null && { tags: [[0, org]] }),
        passing: true,
      });
      for (const { id, tags } of listed) {
        budget--;
        last = id;
        if (org !== null && tags[0] !== org) continue; // a record put without tags
        if (filter.actor !== undefined && tags[1] !== undefined && !actorMatches(decode(tags[1]), filter.actor))
          continue;
        if (filter.action !== undefined && tags[2] !== undefined && !decode(tags[2]).includes(filter.action)) continue;
        const entry = await this.files.get<AuditEntry>(bucket, id);
        if (entry === null || !entryMatches(entry, filter)) continue;
        items.push(entry);
        if (items.length === filter.limit) return { items, nextCursor: id };
      }
      if (budget <= 0) return { items, nextCursor: last };
    }
    return { items, nextCursor: null };
  }

  async sweep(cutoff: Date): Promise<number> {
    return (await this.files.prune(cutoff)).buckets;
  }

  close(): Promise<void> {
    return this.files.close();
  }
}

function decode(tag: string): string {
  try {
    return decodeURIComponent(tag);
  } catch {
    return tag;
  }
}
