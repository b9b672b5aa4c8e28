import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { Store } from '../../../src/daemon/store/store.js';
import { storeSuite, suiteReducer, type SuiteRecord, type SuiteState } from '../../helpers/store-suite.js';

// The shared behaviour of durable stores (test/helpers/store-suite.ts), on the JSON store.
storeSuite(t, async (t) => {
  const dir = t.testdir();
  return (options = {}) => Store.open<SuiteState, SuiteRecord>({ dir, ...suiteReducer, ...options });
});
