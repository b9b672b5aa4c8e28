import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { acquireDataDirLock, lockOwnerPid } from '../../../src/daemon/store/lock.js';

t.test('a second lock on the same directory is refused while the first is held', async (t) => {
  const dir = t.testdir();
  const lock = await acquireDataDirLock(dir);
  t.equal((await stat(lock.path)).mode & 0o777, 0o600);
  await t.rejects(acquireDataDirLock(dir), { code: 'DATA_DIR_LOCKED', details: { pid: process.pid } });
  t.equal(await lockOwnerPid(dir), process.pid);
  await lock.release();
  t.equal(await lockOwnerPid(dir), null);
  const again = await acquireDataDirLock(dir);
  await again.release();
});

t.test('a lock left by a SIGKILLed process is stale and is taken over', async (t) => {
  const dir = t.testdir();
  // A child that takes the lock, says so, and waits to be killed.
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { acquireDataDirLock } = await import(${JSON.stringify(new URL('../../../src/daemon/store/lock.js', import.meta.url).href)}); await acquireDataDirLock(process.argv[1]); console.log('locked'); setInterval(() => {}, 1000);`,
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(child.stdout!, 'data');
  await t.rejects(acquireDataDirLock(dir), { code: 'DATA_DIR_LOCKED', details: { pid: child.pid } });
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
  t.equal(await lockOwnerPid(dir), null, 'a dead owner holds nothing');
  const lock = await acquireDataDirLock(dir);
  t.match(await readFile(lock.path, 'utf8'), `"pid":${process.pid}`);
  await lock.release();
});

t.test('a lock whose pid now belongs to another process is stale', async (t) => {
  const dir = t.testdir();
  // Our own pid with a start time that is not ours: what a reused pid looks like.
  await writeFile(join(dir, 'daemon.lock'), JSON.stringify({ pid: process.pid, startTime: '1' }));
  t.equal(await lockOwnerPid(dir), null);
  const lock = await acquireDataDirLock(dir);
  await lock.release();
});

t.test('an unreadable lock file is treated as stale', async (t) => {
  const dir = t.testdir({ 'daemon.lock': 'not json' });
  const lock = await acquireDataDirLock(dir);
  await lock.release();
});
