/**
 * The PostgreSQL store's writes, each checked against the lease in the same transaction
 * (docs/decisions/035 and 037): a daemon whose partition another one has taken writes nothing.
 * Parameters $1 to $3 are the same in each: the owner, the partitions written, their epochs.
 */
import type pg from 'pg';
import { JOURNAL_CHANNEL } from './journal-listener.js';
import { COMMONS_PARTITION } from './partition-state.js';
import { writeRows, type RowChanges } from './pg-execution-rows.js';
import { inTransaction } from './transaction.js';

// The lease rows of the partitions written ($2, with the epochs $3), locked FOR KEY SHARE in
// partition order. That lock conflicts with a takeover's FOR UPDATE (taken in the same order:
// the two cannot deadlock), not with the owner's own renewals (FOR NO KEY UPDATE): under a
// steady stream of overlapping appends a stronger FOR SHARE would keep a renewal waiting.
export const FENCE = `
  SELECT p.partition FROM wfx_partitions p
    JOIN unnest($2::int[], $3::bigint[]) AS l(partition, epoch) ON p.partition = l.partition AND p.epoch = l.epoch
   WHERE p.owner = $1 ORDER BY p.partition FOR KEY SHARE OF p`;

// The fence: the INSERT takes the lease rows of the partitions it writes (FENCE) and inserts
// nothing unless every one still carries this daemon's epoch. A takeover's lock on such a row
// waits for this statement's commit, or this statement sees the new epoch and inserts nothing;
// no write of a stale owner commits. The shared partition's entries ($8 of them, numbered 1..$8
// in $5) are numbered after the last one under wfx_shared_head's lock, held to the commit: its
// writers commit in the order of their numbers, and a fenced statement takes none (no gap).
// Each names its writer, so that a daemon reading the shared journal knows its own entries.
// While standbys follow the journal (journal-follower.ts) the same statement NOTIFYs them, at
// its commit, once per partition written; without any it does not, since a NOTIFY costs each
// commit a write to the queue.
const appendStatement = (notify: boolean): string => `
  WITH lease AS (${FENCE}),
  fenced AS (SELECT count(*) = cardinality($2::int[]) AS ok FROM lease),
  head AS (
    UPDATE wfx_shared_head SET seq = seq + $8 WHERE $8 > 0 AND (SELECT ok FROM fenced) RETURNING seq - $8 AS base
  )${
    notify
      ? `, notified AS (
    SELECT pg_notify('${JOURNAL_CHANNEL}', n.partition)
      FROM (SELECT partition::text AS partition FROM lease UNION ALL SELECT '${COMMONS_PARTITION}' FROM head) n)`
      : ''
  }
  INSERT INTO wfx_journal (partition, seq, epoch, entry, writer)
  SELECT e.partition, CASE WHEN e.partition = ${COMMONS_PARTITION} THEN (SELECT base FROM head) + e.seq ELSE e.seq END,
         e.epoch, e.entry, CASE WHEN e.partition = ${COMMONS_PARTITION} THEN $1 END
    FROM unnest($4::int[], $5::bigint[], $6::bigint[], $7::text[]) AS e(partition, seq, epoch, entry)
   WHERE (SELECT ok FROM fenced)${notify ? ' AND (SELECT count(*) FROM notified) >= 0' : ''}
  RETURNING partition, seq`;
export const APPEND = appendStatement(false);
export const APPEND_NOTIFY = appendStatement(true);

// A checkpoint's snapshot of one partition (one statement each: a snapshot in a text[] would be
// escaped character by character into an array literal), and the journal the snapshots cover.
const PUT_SNAPSHOT = `
  INSERT INTO wfx_snapshots (partition, seq, epoch, state) VALUES ($1, $2, $3, $4)
  ON CONFLICT (partition) DO UPDATE
     SET seq = excluded.seq, epoch = excluded.epoch, state = excluded.state, saved_at = now()`;
// The shared partition's journal (-1) is deleted no further than every live daemon sharing the
// database has read it (wfx_daemons.shared_seq, said with its registration; none said yet, as
// while it loads, holds it all): one that found a gap there would have to load afresh, its own
// writes since being in no snapshot.
const DELETE_COVERED = `
  DELETE FROM wfx_journal j USING unnest($1::int[], $2::bigint[]) AS c(partition, seq)
   WHERE j.partition = c.partition
     AND j.seq <= CASE WHEN c.partition <> -1 THEN c.seq ELSE least(c.seq, coalesce(
           (SELECT min(coalesce(d.shared_seq, 0)) FROM wfx_daemons d
             WHERE d.shares AND d.seen_at > now() - $3 * interval '1 millisecond'),
           c.seq)) END`;

/**
 * A checkpoint: each partition's snapshot, the rows of its executions changed since the last
 * (`rows`), and the journal up to each `covered` seq deleted, in one transaction fenced on the
 * `fenced` partitions' leases. Returns false, writing nothing, when one of them no longer
 * carries its epoch; otherwise, per partition, how many rows it has more than before.
 */
export async function putSnapshots(
  pool: pg.Pool,
  checkpoint: {
    readonly owner: string;
    readonly fenced: ReadonlyArray<{ readonly partition: number; readonly epoch: number }>;
    readonly snapshots: ReadonlyArray<{ partition: number; seq: number; epoch: number; state: string }>;
    readonly covered: ReadonlyArray<{ readonly partition: number; readonly seq: number }>;
    /** How long a daemon not seen since is still live (its lease). */
    readonly leaseMs: number;
    readonly rows?: RowChanges;
  },
): Promise<Map<number, number> | false> {
  const { owner, fenced, snapshots, covered } = checkpoint;
  return inTransaction(pool, async (client) => {
    const fence = await client.query(FENCE, [owner, fenced.map((f) => f.partition), fenced.map((f) => f.epoch)]);
    if (fence.rowCount !== fenced.length) return false;
    for (const s of snapshots) await client.query(PUT_SNAPSHOT, [s.partition, s.seq, s.epoch, s.state]);
    const grown = checkpoint.rows ? await writeRows(client, checkpoint.rows) : new Map<number, number>();
    await client.query(DELETE_COVERED, [
      covered.map((c) => c.partition),
      covered.map((c) => c.seq),
      checkpoint.leaseMs,
    ]);
    return grown;
  });
}

/**
 * The database's partition count (wfx_cluster): the one it was first used with, or `wanted` for
 * a database not used before.
 */
export async function partitionCount(client: pg.ClientBase, wanted: number): Promise<number> {
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > 1024)
    throw new RangeError(`a database has 1 to 1024 partitions, not ${wanted}`);
  await client.query('INSERT INTO wfx_cluster (partitions) VALUES ($1) ON CONFLICT DO NOTHING', [wanted]);
  const { rows } = await client.query<{ partitions: number }>('SELECT partitions FROM wfx_cluster');
  return rows[0]!.partitions;
}
