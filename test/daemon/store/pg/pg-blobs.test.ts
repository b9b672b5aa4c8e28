import '../../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { PgStore } from '../../../../src/daemon/store/pg/pg-store.js';
import { blobSuite } from '../../../helpers/blob-suite.js';
import { POSTGRES_SKIP, startPostgres } from '../../../helpers/postgres.js';
import { suiteReducer, type SuiteRecord, type SuiteState } from '../../../helpers/store-suite.js';

// The shared behaviour of blob stores (test/helpers/blob-suite.ts), on PostgreSQL.
t.test('blobs in PostgreSQL', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  blobSuite(t, async (t) => {
    const connectionString = await server.createDatabase(`blobs_${++databases}`);
    const store = await PgStore.open<SuiteState, SuiteRecord>({ connectionString, owner: 'suite', ...suiteReducer });
    t.teardown(() => store.close());
    return { blobs: store.blobs(), tmpDir: t.testdir() };
  });
});
