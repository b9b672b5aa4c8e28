/**
 * Claims on kept messages (migration 11, decision 043), for daemons sharing a database: a daemon
 * consumes a kept message only under a claim it won here. A claim is made for the partition of
 * the execution that consumes, under that partition's epoch, and holds while the partition
 * carries that epoch: its step is fenced by the same lease, so once the epoch moves on no step
 * under the old claim can commit, and the claim is free to take.
 */
import type pg from 'pg';

// Inserted only by the partition's holder at its epoch; a claim held already is taken over when
// its partition has moved on since (or it is this partition's own at this epoch: one claim per
// message at a time here, kept-claims.ts), or its message has expired.
const CLAIM = `
  INSERT INTO wfx_message_claims AS c (message_id, partition, epoch, expires_at)
  SELECT $1, p.partition, p.epoch, $4 FROM wfx_partitions p
   WHERE p.partition = $2 AND p.epoch = $3 AND p.owner = $5
  ON CONFLICT (message_id) DO UPDATE
     SET partition = excluded.partition, epoch = excluded.epoch, expires_at = excluded.expires_at
   WHERE (c.partition = excluded.partition AND c.epoch = excluded.epoch)
      OR c.expires_at <= now()
      OR NOT EXISTS (SELECT 1 FROM wfx_partitions p WHERE p.partition = c.partition AND p.epoch = c.epoch)
  RETURNING c.message_id`;

// Its own claim, and any other whose message has expired (nothing consumes it any more).
const RELEASE = `
  DELETE FROM wfx_message_claims
   WHERE (message_id = $1 AND partition = $2 AND epoch = $3) OR expires_at < now()`;

/** What a claim is fenced by: the claiming daemon, its executions' partitions and their epochs. */
export interface ClaimFence {
  readonly owner: string;
  readonly partitionOf: (executionId: string) => number;
  readonly epochOf: (partition: number) => number;
}

export class PgMessageClaims {
  constructor(
    private readonly pool: pg.Pool,
    private readonly fence: ClaimFence,
    /** Reads the shared journal up to entry `seq`; false when it could not. */
    private readonly readTo: (seq: number) => Promise<boolean>,
  ) {}

  /**
   * Claims kept message `messageId` for a step of execution `executionId`: true when won and
   * this daemon's copy of the shared journal holds every entry committed before (a step that
   * consumed the message under an earlier claim among them).
   */
  async claim(messageId: string, executionId: string, expiresAt: string): Promise<boolean> {
    const partition = this.fence.partitionOf(executionId);
    const epoch = this.fence.epochOf(partition);
    const won = await this.pool.query(CLAIM, [messageId, partition, epoch, expiresAt, this.fence.owner]);
    if (won.rowCount === 0) return false;
    // Read after the claim, in a statement of its own: it sees every commit the claim did,
    // among them the step of an earlier claim's holder (committed before its partition moved
    // on, or before it gave up its claim).
    const { rows } = await this.pool.query<{ seq: string }>('SELECT seq FROM wfx_shared_head');
    if (await this.readTo(Number(rows[0]!.seq))) return true;
    await this.release(messageId, executionId);
    throw new Error('the shared journal could not be read up to the claim');
  }

  /** Gives up this daemon's claim on `messageId` for execution `executionId`'s partition. */
  async release(messageId: string, executionId: string): Promise<void> {
    const partition = this.fence.partitionOf(executionId);
    let epoch: number;
    try {
      epoch = this.fence.epochOf(partition);
    } catch {
      return; // the partition has left this daemon: a claim made under it holds no more
    }
    await this.pool.query(RELEASE, [messageId, partition, epoch]);
  }
}
