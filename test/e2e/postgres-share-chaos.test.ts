import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { runChaos } from '../helpers/chaos.js';
import { POSTGRES_SKIP } from '../helpers/postgres.js';

// Three daemons sharing one database's executions (`--share`), any one of them SIGKILLed again and
// again under load, partition 0's holder included: see test/helpers/chaos.ts.
t.test('three daemons sharing one database, one killed again and again under load', { skip: POSTGRES_SKIP }, (t) =>
  runChaos(t, '--share'),
);
