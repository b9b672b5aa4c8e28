/** One transaction on a pooled connection, as every multi-statement write of the PostgreSQL store runs. */
import type pg from 'pg';

/**
 * Runs `work` in one transaction (opened by `begin`): committed once it resolves, rolled back if
 * it throws. Work that decides to write nothing (a fence or a lock refused) just returns: what
 * it read commits with nothing changed, and its row locks go.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
