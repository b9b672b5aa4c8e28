import t from 'tap';
import { PgStore } from '../../../../src/daemon/store/pg/pg-store.js';
import { historySuite } from '../../../helpers/history-suite.js';
import { POSTGRES_SKIP, startPostgres } from '../../../helpers/postgres.js';
import { suiteReducer, type SuiteRecord, type SuiteState } from '../../../helpers/store-suite.js';

// The shared behaviour of histories (test/helpers/history-suite.ts), on the PostgreSQL store's
// table: each open is a store of its own on the test's database, as a restarted daemon's is.
t.test('history in PostgreSQL', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  historySuite(t, async () => {
    const connectionString = await server.createDatabase(`history_${++databases}`);
    return async () => {
      const store = await PgStore.open<SuiteState, SuiteRecord>({ connectionString, owner: 'suite', ...suiteReducer });
      return Object.assign(store.history(), { done: () => store.close() });
    };
  });
});
