/**
 * The connection pools of a daemon on PostgreSQL (the store's, the cluster member's). pg-pool
 * listens for errors on idle connections only: a connection checked out (a transaction, a
 * migration, a store opening) whose socket is reset emits 'error' with no listener, and Node
 * ends the process (issue #83: after a blackhole healed by resets). Here every connection has a
 * listener for its whole life; the query in flight fails with the same error anyway, and the
 * connection, no longer usable, is dropped when it is released.
 */
import pg from 'pg';

/** A pool on `config` whose connections' errors go to `broke` (once each), never to the process. */
export function newPool(config: pg.PoolConfig, broke: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool(config);
  // An idle connection's error reaches the pool as well as the connection: said once, below.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    let said = false;
    client.on('error', (err: Error) => {
      if (said) return;
      said = true;
      broke(err);
    });
  });
  return pool;
}
