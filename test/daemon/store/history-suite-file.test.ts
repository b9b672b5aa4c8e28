import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { History } from '../../../src/daemon/store/history.js';
import { historySuite } from '../../helpers/history-suite.js';

// The shared behaviour of histories (test/helpers/history-suite.ts), on history's files.
historySuite(t, async (t) => {
  const dir = t.testdir();
  return () => History.open(dir);
});
