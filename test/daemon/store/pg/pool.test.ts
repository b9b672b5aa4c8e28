import '../../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { newPool } from '../../../../src/daemon/store/pg/pool.js';
import { eventually } from '../../../helpers/eventually.js';
import { startFaultProxy } from '../../../helpers/fault-proxy.js';
import { POSTGRES_SKIP, startPostgres } from '../../../helpers/postgres.js';

// Connections reset under a checked-out client (issue #83): pg-pool listens on idle ones only,
// and an 'error' with no listener would end this process (the test with it).
t.test(
  "a checked-out connection reset after a blackhole: said once, never the process's end",
  { skip: POSTGRES_SKIP },
  async (t) => {
    const server = await startPostgres(t);
    await server.createDatabase('pool');
    const proxy = await startFaultProxy(t, server.socketDir);
    const broken: Error[] = [];
    const pool = newPool({ connectionString: proxy.urlOf('pool'), max: 2 }, (err) => broken.push(err));
    t.teardown(() => pool.end());

    const idle = await pool.connect(); // checked out, no query in flight
    const busy = await pool.connect(); // checked out, a query in flight
    const inFlight = busy.query('SELECT pg_sleep(30)').then(
      () => null,
      (err: Error) => err,
    );
    proxy.blackhole();
    await proxy.heal('reset');
    const failed = await inFlight;
    t.ok(failed, 'the query in flight fails');
    t.match(failed?.message ?? '', /ECONNRESET|terminated/, `with the connection's error (${failed?.message})`);
    await eventually('both connections said broken', () => broken.length === 2);
    t.equal(broken.length, 2, 'once each');
    idle.release();
    busy.release();
    t.equal(pool.totalCount, 0, 'the broken connections are dropped when released');
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    t.equal(rows[0]!.one, 1, 'and the pool connects anew');
  },
);
