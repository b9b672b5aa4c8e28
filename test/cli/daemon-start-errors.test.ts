import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon, wfx, wfxIn, WFX_BIN, type CliResult } from '../helpers/cli.js';

/** A foreseeable start failure: its code first on stderr, a hint, exit 1, and nothing that reads as a bug. */
function refusedWith(t: Test, res: CliResult, code: string, what: string): void {
  t.equal(res.code, 1, `${what}: exit 1 (${res.stderr.trim()})`);
  t.match(res.stderr, new RegExp(`^${code}: `), `${what}: ${code}`);
  t.match(res.stderr, /\nhint: /, `${what}: a hint`);
  t.notMatch(res.stderr + res.stdout, /INTERNAL_ERROR|This is a bug|\n\s+at .*:\d+:\d+/, `${what}: no stack, no "bug"`);
}

/** Listens on 127.0.0.1, port 0; closed at teardown. */
async function holdPort(t: Test): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

const READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1"';

/** Runs `wfx args` with `dir` bind-mounted read-only over itself (in a mount namespace of its own). */
function wfxReadOnly(dir: string, args: string[]): CliResult {
  const script = `${READ_ONLY} && shift && exec "$@"`;
  const res = spawnSync('unshare', ['-rm', 'sh', '-c', script, 'sh', dir, process.execPath, WFX_BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  });
  return { code: res.status ?? 1, stdout: res.stdout, stderr: res.stderr };
}

t.test('a data directory under a regular file: DATA_DIR_INVALID, foreground and background', async (t) => {
  const root = t.testdir({ file: 'not a directory' });
  const dataDir = join(root, 'file', 'data');
  refusedWith(
    t,
    await wfx(['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir]),
    'DATA_DIR_INVALID',
    'foreground',
  );
  refusedWith(
    t,
    await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', dataDir]),
    'DATA_DIR_INVALID',
    'background',
  );
});

t.test('a read-only data directory: DATA_DIR_INVALID, foreground and background', async (t) => {
  const dataDir = join(t.testdir({}), 'data');
  mkdirSync(dataDir);
  // A real read-only file system, as root too (where chmod does not stop writes): a read-only
  // bind mount in a mount namespace of the child's own (unshare -rm), where the machine allows one.
  if (spawnSync('unshare', ['-rm', 'sh', '-c', READ_ONLY, 'sh', dataDir]).status !== 0) {
    t.pass('skipped: no unprivileged mount namespaces here');
    return;
  }
  // An existing data directory, already private, so that only a write can fail.
  mkdirSync(join(dataDir, 'logs'));
  chmodSync(dataDir, 0o700);
  chmodSync(join(dataDir, 'logs'), 0o700);
  refusedWith(
    t,
    wfxReadOnly(dataDir, ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir]),
    'DATA_DIR_INVALID',
    'foreground',
  );
  refusedWith(
    t,
    wfxReadOnly(dataDir, ['daemon', 'start', '--port', '0', '--data-dir', dataDir]),
    'DATA_DIR_INVALID',
    'background',
  );
});

t.test(
  'a port another listener holds: PORT_IN_USE naming the address and the holder, foreground and background',
  async (t) => {
    const port = await holdPort(t);
    const dataDir = join(t.testdir({}), 'data');
    for (const [what, extra, runner] of [
      ['foreground', ['--foreground'], wfx],
      ['background', [], wfxIn],
    ] as const) {
      const res = await runner(['daemon', 'start', ...extra, '--port', String(port), '--data-dir', dataDir]);
      refusedWith(t, res, 'PORT_IN_USE', what);
      t.match(res.stderr, `127.0.0.1:${port}`, `${what}: names the address`);
      if (process.platform === 'linux')
        t.match(res.stderr, `pid ${process.pid}`, `${what}: names the process that holds it`);
    }
  },
);

t.test('wfx dev: a taken port is PORT_IN_USE, a --port that is no port a usage error', async (t) => {
  const port = await holdPort(t);
  const cwd = t.testdir({ flows: {} });
  const res = await wfx(['dev', '--port', String(port)], { cwd });
  refusedWith(t, res, 'PORT_IN_USE', 'wfx dev');
  for (const bad of ['abc', '70000']) {
    const usage = await wfxIn(['dev', '--port', bad], { cwd });
    t.equal(usage.code, 2, `--port ${bad}: exit 2`);
    t.notMatch(usage.stderr, /INTERNAL_ERROR|This is a bug/, `--port ${bad}: not a bug`);
  }
});

t.test('a port another wfx daemon holds: PORT_IN_USE says which daemon', async (t) => {
  const root = t.testdir({});
  const first = join(root, 'first');
  const running = await startDaemon(t, { dataDir: first });
  const port = new URL(running.url).port;
  const res = await wfxIn(['daemon', 'start', '--port', port, '--data-dir', join(root, 'second')]);
  refusedWith(t, res, 'PORT_IN_USE', 'background');
  if (process.platform === 'linux') t.match(res.stderr, `wfx daemon (pid ${running.pid}) of data directory ${first}`);
  t.equal((await wfxIn(['daemon', 'status', '--data-dir', first])).code, 0, 'the first daemon still runs');
});

t.test(
  'a --host that is not an address of this machine: LISTEN_FAILED (refused by bind, nothing is sent)',
  async (t) => {
    const dataDir = join(t.testdir({}), 'data');
    // 192.0.2.1 is TEST-NET-1: never a local address; listening on it fails in bind().
    refusedWith(
      t,
      await wfx(['daemon', 'start', '--foreground', '--port', '0', '--host', '192.0.2.1', '--data-dir', dataDir]),
      'LISTEN_FAILED',
      'foreground',
    );
  },
);
