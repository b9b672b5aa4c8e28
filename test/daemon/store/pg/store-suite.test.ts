import t from 'tap';
import { PgStore } from '../../../../src/daemon/store/pg/pg-store.js';
import { POSTGRES_SKIP, startPostgres } from '../../../helpers/postgres.js';
import { storeSuite, suiteReducer, type SuiteRecord, type SuiteState } from '../../../helpers/store-suite.js';

// The shared behaviour of durable stores (test/helpers/store-suite.ts), on the PostgreSQL store:
// one server for the file, a database per test.
t.test('the PostgreSQL store', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  storeSuite(t, async () => {
    const connectionString = await server.createDatabase(`suite_${++databases}`);
    return (options = {}) =>
      PgStore.open<SuiteState, SuiteRecord>({ connectionString, owner: 'suite', ...suiteReducer, ...options });
  });
});
