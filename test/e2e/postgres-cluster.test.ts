import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { runChaos } from '../helpers/chaos.js';
import { POSTGRES_SKIP } from '../helpers/postgres.js';

// Three daemons on one database, one serving and two standing by (`--standby`), the serving one
// SIGKILLed again and again under load: see test/helpers/chaos.ts.
t.test(
  'three daemons on one database, the serving one killed again and again under load',
  { skip: POSTGRES_SKIP },
  (t) => runChaos(t, '--standby'),
);
