/**
 * History in PostgreSQL: finished executions as rows of `wfx_history`, by the day bucket their
 * id names, so that a daemon taking over a database serves them as the one before it did.
 * Writes are group-committed and fenced by the writer's lease exactly as journal entries are
 * (pg-store.ts): an execution started and finished in one step is acknowledged once its row is
 * written, so a daemon that lost its lease must not be able to write one.
 */
import type pg from 'pg';
import type { JsonPieces } from '../frame.js';
import {
  jsonText,
  pairsOf,
  PAIRS_TAG,
  type HistoryDamageReport,
  type HistoryStore,
  type ListRange,
  type PruneReport,
} from '../history-store.js';
import { FENCE } from './fenced-sql.js';
import { GroupCommit } from './group-commit.js';
import { describePartitions } from './lease.js';

/**
 * Whose writes are allowed: the lease rows that must still carry this owner and the epochs it
 * holds. An execution's history is written under its partition's lease; a prune under
 * partition 0's.
 */
export interface Fence {
  readonly owner: string;
  /** The partition of an execution id. */
  readonly partitionOf: (id: string) => number;
  /** The epoch this daemon holds `partition` with (throws if it does not hold it). */
  readonly epochOf: (partition: number) => number;
}

interface Row {
  readonly bucket: string;
  readonly id: string;
  readonly tags: string;
  /** The pairs of its pairs tag (PAIRS_TAG) as a JSON object's text, or null for none. */
  readonly search: string | null;
  readonly doc: string;
}

const BUCKET = /^\d{4}-\d{2}-\d{2}$/;

const LEASE = 'SELECT 1 FROM wfx_partitions WHERE partition = $1 AND owner = $2 AND epoch = $3 FOR KEY SHARE';

// Fenced as journal appends are (pg-store.ts): every partition written must still carry this
// daemon's epoch, its row locked (FENCE) in partition order, or nothing is written.
const PUT = `
  WITH lease AS (${FENCE})
  INSERT INTO wfx_history (bucket, id, tags, doc, epoch, search)
  SELECT h.bucket, h.id, h.tags, h.doc, h.epoch, h.search
    FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::jsonb[])
           AS h(bucket, id, tags, doc, epoch, search)
   WHERE (SELECT count(*) FROM lease) = cardinality($2::int[])
  ON CONFLICT (bucket, id) DO UPDATE
    SET tags = excluded.tags, doc = excluded.doc, epoch = excluded.epoch, search = excluded.search,
        written_at = now()`;

// The buckets, newest first, one index probe each (PostgreSQL has no skip scan of its own).
const BUCKETS = `
  WITH RECURSIVE b AS (
    (SELECT bucket FROM wfx_history ORDER BY bucket DESC LIMIT 1)
    UNION ALL
    SELECT (SELECT h.bucket FROM wfx_history h WHERE h.bucket < b.bucket ORDER BY h.bucket DESC LIMIT 1)
      FROM b WHERE b.bucket IS NOT NULL
  )
  SELECT bucket FROM b WHERE bucket IS NOT NULL`;

const PRUNE = `
  WITH lease AS (${LEASE}),
  old AS (SELECT bucket FROM wfx_history GROUP BY bucket HAVING max(written_at) < $4),
  gone AS (
    DELETE FROM wfx_history
     WHERE bucket IN (SELECT bucket FROM old) AND EXISTS (SELECT 1 FROM lease)
    RETURNING bucket, octet_length(doc) AS bytes
  )
  SELECT count(DISTINCT bucket)::int AS buckets, coalesce(sum(bytes), 0)::bigint AS bytes FROM gone`;

export class PgHistory implements HistoryStore {
  /** What reached the database: upserts (group commits) that committed, rows and bytes written. */
  readonly counters = { writes: 0, rows: 0, bytes: 0 };
  private readonly writes = new GroupCommit<Row>(
    (rows) => this.write(rows),
    { items: 1_000, bytes: 8 << 20 },
    (r) => r.doc.length,
  );

  constructor(
    private readonly pool: pg.Pool,
    private readonly fence: Fence,
    /** Turns a failed or fenced write into the error the put rejects with (the store fails by it). */
    private readonly failed: (err: unknown, fenced: boolean) => unknown,
  ) {}

  putJson(bucket: string, id: string, json: string | JsonPieces, tags: readonly string[] = []): Promise<void> {
    if (!BUCKET.test(bucket)) return Promise.reject(new TypeError(`not a history bucket: ${bucket}`));
    if (/[\s|]/.test(id) || tags.some((tag) => /[\s|]/.test(tag)))
      return Promise.reject(new TypeError('history ids and tags may not hold white space or |'));
    const pairs = pairsOf(tags[PAIRS_TAG]);
    const search = pairs.size === 0 ? null : JSON.stringify(Object.fromEntries(pairs));
    return this.writes.add({ bucket, id, tags: tags.join('|'), search, doc: jsonText(json) });
  }

  private async write(rows: readonly Row[]): Promise<void> {
    // One row per document: a later copy in the same batch wins, as a later write would.
    const last = new Map<string, Row>();
    for (const row of rows) last.set(`${row.bucket}/${row.id}`, row);
    const unique = [...last.values()];
    const { owner, partitionOf, epochOf } = this.fence;
    let written: number | null;
    let partitions: number[] = [];
    try {
      const rowPartitions = unique.map((r) => partitionOf(r.id));
      partitions = [...new Set(rowPartitions)];
      written = (
        await this.pool.query(PUT, [
          owner,
          partitions,
          partitions.map(epochOf),
          unique.map((r) => r.bucket),
          unique.map((r) => r.id),
          unique.map((r) => r.tags),
          unique.map((r) => r.doc),
          rowPartitions.map(epochOf),
          unique.map((r) => r.search),
        ])
      ).rowCount;
    } catch (err) {
      throw this.failed(err, false);
    }
    if (written !== unique.length)
      throw this.failed(new Error(`${describePartitions(partitions)} no longer carry this daemon's epochs`), true);
    this.counters.writes++;
    this.counters.rows += unique.length;
    for (const row of unique) this.counters.bytes += row.doc.length;
  }

  async get<T = unknown>(bucket: string, id: string): Promise<T | null> {
    const { rows } = await this.pool.query<{ doc: string }>(
      'SELECT doc FROM wfx_history WHERE bucket = $1 AND id = $2',
      [bucket, id],
    );
    return rows[0] ? (JSON.parse(rows[0].doc) as T) : null;
  }

  async list(bucket: string, range: ListRange = {}): Promise<Array<{ id: string; tags: readonly string[] }>> {
    // The primary key (bucket, id) serves the range and the order: a listing that stops early
    // reads no more. Tags are narrowed here: what the caller would refuse never crosses the wire.
    const params: unknown[] = [bucket, range.below ?? null, range.limit ?? null];
    const narrow = (range.tags ?? []).map(([at, value]) => {
      params.push(at, value);
      const [p, v] = [params.length - 1, params.length];
      // The tag at position $p (0-based) is $v, or there is none there: no tags, or fewer `|`.
      return ` AND (split_part(tags, '|', $${p}::int + 1) = $${v} OR tags = ''
        OR length(tags) - length(replace(tags, '|', '')) < $${p}::int)`;
    });
    let from = 'wfx_history';
    if (range.pairs !== undefined && range.pairs.length > 0) {
      // By the index of the pairs alone (migration 15; a row written before it has none, as it
      // had none), read apart: left in the query, the planner walks the bucket by id for its
      // order and limit and tests every row's pairs, and before the table's statistics it ANDs
      // the index with the whole bucket's keys. Pairs are selective: what they find is few rows.
      params.push(JSON.stringify(Object.fromEntries(range.pairs)));
      from = `(WITH paired AS MATERIALIZED (
          SELECT bucket, id, tags FROM wfx_history WHERE search @> $${params.length}::jsonb AND bucket || '' = $1
        ) SELECT bucket, id, tags FROM paired) AS h`;
    }
    const { rows } = await this.pool.query<{ id: string; tags: string }>(
      `SELECT id, tags FROM ${from} WHERE bucket = $1 AND ($2::text IS NULL OR id < $2)${narrow.join('')}
        ORDER BY id DESC LIMIT $3`,
      params,
    );
    return rows.map((r) => ({ id: r.id, tags: r.tags === '' ? [] : r.tags.split('|') }));
  }

  async buckets(): Promise<string[]> {
    return (await this.pool.query<{ bucket: string }>(BUCKETS)).rows.map((r) => r.bucket);
  }

  async prune(cutoff: Date): Promise<PruneReport> {
    const { owner, epochOf } = this.fence;
    const { rows } = await this.pool.query<{ buckets: number; bytes: string }>(PRUNE, [0, owner, epochOf(0), cutoff]);
    return { buckets: rows[0]?.buckets ?? 0, bytes: Number(rows[0]?.bytes ?? 0) };
  }

  damage(): HistoryDamageReport {
    return { damagedRecords: 0, findings: [] };
  }

  /** Rejects the writes waiting and in flight, and every later one (the store failed: GroupCommit.abandon). */
  abandon(err: unknown): void {
    this.writes.abandon(err);
  }

  /** Writes what is waiting. The pool is the store's: it closes it. */
  async close(): Promise<void> {
    await this.writes.idle();
  }
}
