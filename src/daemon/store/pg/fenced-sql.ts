/**
 * The PostgreSQL store's writes, each checked against the lease in the same transaction
 * (docs/decisions/035 and 037): a daemon whose partition another one has taken writes nothing.
 * Parameters $1 to $3 are the same in each: the owner, the partitions written, their epochs.
 */
import type pg from 'pg';
import { JOURNAL_CHANNEL } from './journal-follower.js';

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
// no write of a stale owner commits. While standbys follow the journal (journal-follower.ts)
// the same statement NOTIFYs them, at its commit, once per partition written; without any it
// does not, since a NOTIFY costs each commit a write to the queue.
const appendStatement = (notify: boolean): string => `
  WITH lease AS (${FENCE})${
    notify ? `, notified AS (SELECT partition, pg_notify('${JOURNAL_CHANNEL}', partition::text) FROM lease)` : ''
  }
  INSERT INTO wfx_journal (partition, seq, epoch, entry)
  SELECT e.partition, e.seq, e.epoch, e.entry
    FROM unnest($4::int[], $5::bigint[], $6::bigint[], $7::text[]) AS e(partition, seq, epoch, entry)
    JOIN ${notify ? 'notified' : 'lease'} USING (partition)
   WHERE (SELECT count(*) FROM lease) = cardinality($2::int[])`;
export const APPEND = appendStatement(false);
export const APPEND_NOTIFY = appendStatement(true);

// A checkpoint's snapshot of one partition (one statement each: a snapshot in a text[] would be
// escaped character by character into an array literal), and the journal the snapshots cover.
export const PUT_SNAPSHOT = `
  INSERT INTO wfx_snapshots (partition, seq, epoch, state) VALUES ($1, $2, $3, $4)
  ON CONFLICT (partition) DO UPDATE
     SET seq = excluded.seq, epoch = excluded.epoch, state = excluded.state, saved_at = now()`;
export const DELETE_COVERED = `
  DELETE FROM wfx_journal j USING unnest($1::int[], $2::bigint[]) AS c(partition, seq)
   WHERE j.partition = c.partition AND j.seq <= c.seq`;

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
