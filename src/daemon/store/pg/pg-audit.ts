/**
 * The audit trail in PostgreSQL: rows of `wfx_audit`, written by whichever daemon of the
 * database served the request (group-committed, as history is) and read by all of them. Not
 * fenced by a lease: a record names a request its daemon answered, whatever it holds.
 */
import type pg from 'pg';
import type { AuditEntry, AuditPage } from '../../../shared/api/index.js';
import { checkCursor, type AuditFilter, type AuditTrail } from '../audit-trail.js';
import { GroupCommit } from './group-commit.js';

const INSERT = `
  INSERT INTO wfx_audit (id, at, organization, actor, action, doc)
  SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[])
  ON CONFLICT (id) DO NOTHING`;

/** The audit trail of a PostgreSQL store (trail.ts). */
export class PgAuditTrail implements AuditTrail {
  private readonly writes = new GroupCommit<AuditEntry>(
    (entries) => this.write(entries),
    { items: 1_000, bytes: 4 << 20 },
    () => 512,
  );

  constructor(private readonly pool: pg.Pool) {}

  record(entry: AuditEntry): Promise<void> {
    return this.writes.add(entry);
  }

  private async write(entries: readonly AuditEntry[]): Promise<void> {
    await this.pool.query(INSERT, [
      entries.map((e) => e.id),
      entries.map((e) => e.at),
      entries.map((e) => e.organization),
      entries.map((e) => e.actor),
      entries.map((e) => e.action),
      entries.map((e) => JSON.stringify(e)),
    ]);
  }

  async page(filter: AuditFilter): Promise<AuditPage> {
    checkCursor(filter.cursor);
    const where: string[] = [];
    const args: unknown[] = [];
    const arg = (v: unknown): string => {
      args.push(v);
      return `$${args.length}`;
    };
    if (filter.organization !== null) where.push(`organization = ${arg(filter.organization)}`);
    if (filter.cursor !== undefined) where.push(`id < ${arg(filter.cursor)}`);
    if (filter.since !== undefined) where.push(`at >= ${arg(filter.since)}::timestamptz`);
    if (filter.until !== undefined) where.push(`at <= ${arg(filter.until)}::timestamptz`);
    if (filter.actor !== undefined) {
      const a = arg(filter.actor);
      where.push(`actor IN (${a}, 'key:' || ${a}, 'oidc:' || ${a})`);
    }
    if (filter.action !== undefined) where.push(`strpos(action, ${arg(filter.action)}) > 0`);
    if (filter.target !== undefined)
      where.push(
        `EXISTS (SELECT 1 FROM jsonb_each_text(doc::jsonb -> 'targets') t WHERE t.value = ${arg(filter.target)})`,
      );
    const limit = arg(filter.limit + 1);
    const { rows } = await this.pool.query<{ doc: string }>(
      `SELECT doc FROM wfx_audit ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limit}`,
      args,
    );
    const items = rows.slice(0, filter.limit).map((r) => JSON.parse(r.doc) as AuditEntry);
    return { items, nextCursor: rows.length > filter.limit ? items.at(-1)!.id : null };
  }

  async sweep(cutoff: Date): Promise<number> {
    return (await this.pool.query('DELETE FROM wfx_audit WHERE at < $1', [cutoff])).rowCount ?? 0;
  }

  /** Rejects the writes waiting and in flight, and every later one (the store failed: GroupCommit.abandon). */
  abandon(err: unknown): void {
    this.writes.abandon(err);
  }

  /** Waits for the records queued (the pool is the store's to end). */
  async close(): Promise<void> {
    await this.writes.idle();
  }
}
