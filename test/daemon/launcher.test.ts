import t from 'tap';
import { daemonV8Flags } from '../../src/daemon/launcher.js';

t.test('daemonV8Flags: the young generation always, the old generation sized for a large snapshot', async (t) => {
  const young = '--max-semi-space-size=32';
  t.same(daemonV8Flags(0), [young], 'no snapshot');
  t.same(daemonV8Flags(32 * 2 ** 20 - 1), [young], 'under 32 MiB: V8 sizes the old generation itself');
  t.same(
    daemonV8Flags(131_767_975),
    [young, '--initial-old-space-size=377'],
    '100,000 waiting: 3 times the snapshot, in MiB',
  );
});
