import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { join } from 'node:path';
import t from 'tap';
import { daemonV8Flags, startInBackground } from '../../../src/daemon/process/launcher.js';

t.test(
  "daemonV8Flags: the young generation and the old one's growth always, the old one's size for a large snapshot",
  async (t) => {
    const always = ['--max-semi-space-size=32', '--heap-growing-percent=100'];
    t.same(daemonV8Flags(0), always, 'no snapshot');
    t.same(daemonV8Flags(32 * 2 ** 20 - 1), always, "under 32 MiB: V8 sizes the old generation's first limit itself");
    t.same(
      daemonV8Flags(131_767_975),
      [...always, '--initial-old-space-size=377'],
      '100,000 waiting: 3 times the snapshot, in MiB',
    );
  },
);

t.test('DAEMON_START_FAILED names logs/daemon.out and logs/daemon.log on every background path', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const logs = [join(dataDir, 'logs', 'daemon.out'), join(dataDir, 'logs', 'daemon.log')];
  const named = (what: string, message: RegExp) => ({ code: 'DAEMON_START_FAILED', message, what });
  const cases = [
    // The process cannot be spawned at all (here: its working directory does not exist).
    {
      ...named('a spawn error', /^cannot start the daemon process: spawn .*ENOENT/),
      start: { args: ['-e', ''], cwd: join(dataDir, 'no-such-dir') },
    },
    // An error the daemon process did not foresee: it reports it over IPC as DAEMON_START_FAILED.
    {
      ...named('an unexpected error in the daemon process', /^boom/),
      start: {
        args: [
          '-e',
          "process.send({ error: { code: 'DAEMON_START_FAILED', message: 'boom' } }, () => process.exit(1))",
        ],
        cwd: dataDir,
      },
    },
    {
      ...named('an exit before it was ready', /^the daemon exited with code 3/),
      start: { args: ['-e', 'process.exit(3)'], cwd: dataDir },
    },
  ];
  for (const c of cases) {
    const err = await startInBackground({ dataDir, env: process.env, ...c.start }).then(
      () => null,
      (e: unknown) => e as { code: string; message: string },
    );
    t.match(err, { code: c.code, message: c.message }, c.what);
    for (const log of logs) t.ok(err?.message.includes(log), `${c.what}: names ${log}`);
  }
});
