import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { missingDaemonFlags } from '../../src/daemon/process/launcher.js';
import { lockOwnerPid } from '../../src/daemon/store/lock.js';
import { spawnWfx } from '../helpers/cli.js';

// A daemon in the foreground (as a supervisor runs it) gets the V8 flags a background daemon
// gets on its command line, by replacing its process (process.execve, Node 22.15 and later).
// CI runs this file on Node 24 and 22 too (.ci/other-nodes).

t.test('the flags a foreground daemon lacks', async (t) => {
  t.same(missingDaemonFlags([], ''), ['--max-semi-space-size=32', '--heap-growing-percent=100'], 'none given: both');
  t.same(
    missingDaemonFlags(['--max-semi-space-size=64'], ''),
    ['--heap-growing-percent=100'],
    "a young generation given to Node is the user's: kept",
  );
  t.same(
    missingDaemonFlags([], '--enable-source-maps  --max-semi-space-size=8'),
    ['--heap-growing-percent=100'],
    'NODE_OPTIONS counts too',
  );
  t.same(missingDaemonFlags(['--heap-growing-percent=100', '--max-semi-space-size=32'], ''), [], 'all given: none');
});

const canReplace = typeof (process as { execve?: unknown }).execve === 'function';

t.test('a foreground daemon runs with the V8 flags of a background one, where Node can', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const child = spawnWfx(t, ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir], {
    env: { NODE_OPTIONS: '' },
  });
  const exited = once(child, 'exit');
  let listening = false;
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith('wfx daemon listening on ')) listening = true;
    if (line.startsWith('press Ctrl-C')) break;
  }
  t.ok(listening, 'it serves');
  const args = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0');
  t.equal(await lockOwnerPid(dataDir), child.pid, 'the process started is the daemon (the same pid)');
  if (canReplace) {
    t.ok(args.includes('--max-semi-space-size=32'), 'with the young generation of a background daemon');
    t.ok(args.includes('--heap-growing-percent=100'), "and its old generation's growth");
    t.same(
      args.slice(args.indexOf('daemon')).filter(Boolean),
      ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir],
      'and the same command',
    );
  } else {
    t.notOk(args.includes('--heap-growing-percent=100'), `Node ${process.version} cannot: it runs as started`);
  }
  child.kill('SIGTERM');
  const [code] = await exited;
  t.equal(code, 0, 'SIGTERM stops it gracefully');
});
