import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import t from 'tap';
import { lockOwnerPid } from '../../src/daemon/store/lock.js';
import { encodeManifest, markOf, readManifest } from '../../src/daemon/store/manifest.js';
import { killIfAlive, spawnWfx, wfx, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

interface Info {
  pid: number;
  url: string;
  startedAt: string;
  dataDir: string;
}

/** Starts a background daemon on `dataDir`: by a real `wfx` process when `real`, else in-process. */
async function start(t: { teardown(fn: () => void): void }, dataDir: string, real = false): Promise<Info> {
  const res = await (real ? wfx : wfxIn)(['daemon', 'start', '--port', '0', '--data-dir', dataDir, '--json']);
  if (res.code !== 0) throw new Error(`daemon start failed (${res.code}): ${res.stderr}`);
  const info = JSON.parse(res.stdout) as Info;
  t.teardown(() => killIfAlive(info.pid));
  return info;
}

t.test(
  'start, status, health, stop over real processes; the first start: a 0600 key, never logged, in a 0700 dir',
  async (t) => {
    const dataDir = join(t.testdir(), 'data');
    const info = await start(t, dataDir, true);
    t.match(info, { url: /^http:\/\/127\.0\.0\.1:\d+$/, dataDir, startedAt: String });
    t.ok(info.pid > 0);

    // The first start creates a 0600 bootstrap key, never logged (looked for once stopped), in a 0700 data dir.
    t.equal((await stat(dataDir)).mode & 0o777, 0o700);
    const keyFile = join(dataDir, 'bootstrap.key');
    t.equal((await stat(keyFile)).mode & 0o777, 0o600);
    const key = (await readFile(keyFile, 'utf8')).trim();
    t.match(key, /^apk_[a-z0-9]{16}_[A-Za-z0-9_-]{43}$/);

    const health = await fetch(`${info.url}/health`);
    t.equal(health.status, 200);
    t.equal(((await health.json()) as { status: string }).status, 'ok');

    const status = await wfx(['daemon', 'status', '--json', '--data-dir', dataDir]);
    t.equal(status.code, 0);
    t.match(JSON.parse(status.stdout), {
      running: true,
      pid: info.pid,
      url: info.url,
      health: { status: 'ok', store: { kind: 'json' } },
    });
    t.equal(status.stderr, '', '--json prints nothing but the JSON');

    t.same(JSON.parse(await readFile(join(dataDir, 'daemon.json'), 'utf8')).url, info.url, 'daemon.json names the URL');

    const second = await wfx(['daemon', 'start', '--port', '0', '--data-dir', dataDir]);
    t.equal(second.code, 1, 'a second daemon on the same data dir is refused');
    t.match(second.stderr, /^DATA_DIR_LOCKED: .*pid \d+/);
    t.match(second.stderr, /hint: /);

    const stop = await wfx(['daemon', 'stop', '--data-dir', dataDir]);
    t.equal(stop.code, 0);
    t.match(stop.stdout, `wfx daemon stopped (pid ${info.pid})`);
    const after = await wfx(['daemon', 'status', '--json', '--data-dir', dataDir]);
    t.equal(after.code, 5, 'status exits 5 when no daemon runs');
    t.same(JSON.parse(after.stdout), { running: false, dataDir });
    t.notOk((await readdir(dataDir)).includes('daemon.json'), 'daemon.json removed on stop');
    t.match(
      await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8'),
      /checkpoint written[\s\S]*"msg":"stopped"/,
      'checkpointed on stop',
    );
    for (const name of await readdir(join(dataDir, 'logs'))) {
      const text = await readFile(join(dataDir, 'logs', name), 'utf8');
      t.notMatch(text, key.slice('apk_'.length + 16 + 1), `the secret is not in logs/${name}`);
    }
    for (const name of ['daemon.lock', 'snapshot.json']) {
      t.equal((await stat(join(dataDir, name)).catch(() => ({ mode: 0o600 }))).mode & 0o777, 0o600, `${name} is 0600`);
    }

    const idle = await wfx(['daemon', 'stop', '--data-dir', dataDir]);
    t.equal(idle.code, 0, 'stopping a stopped daemon is not an error');
  },
);

t.test('after kill -9 the stale lock does not block a restart, and state is kept', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const first = await start(t, dataDir);
  const key = await readFile(join(dataDir, 'bootstrap.key'), 'utf8');
  process.kill(first.pid, 'SIGKILL');
  // The daemon is not our child, so no exit event: look until the kernel says it is gone.
  await eventually('the killed daemon is gone', async () => (await lockOwnerPid(dataDir)) === null);
  t.equal(await lockOwnerPid(dataDir), null, 'the killed daemon is gone, its lock left behind');
  t.ok((await readdir(dataDir)).includes('daemon.lock'), 'a stale lock file is there');
  const second = await start(t, dataDir);
  t.not(second.pid, first.pid);
  t.equal(
    await readFile(join(dataDir, 'bootstrap.key'), 'utf8'),
    key,
    'not bootstrapped twice: the store kept its state',
  );
  t.equal((await fetch(`${second.url}/health`)).status, 200);
  t.equal((await wfxIn(['daemon', 'stop', '--data-dir', dataDir])).code, 0);
});

t.test(
  'a background daemon gets its V8 flags: the old generation sized for its snapshot when that is large',
  async (t) => {
    const always = ['--max-semi-space-size=32', '--heap-growing-percent=100'];
    // A real daemon (the flags themselves: test/daemon/launcher.test.ts): its snapshot grown past 32 MiB with JSON's whitespace, which it parses as before.
    const dataDir = join(t.testdir(), 'data');
    const cmdline = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    const first = await start(t, dataDir);
    if (process.platform === 'linux') {
      const args = await cmdline(first.pid);
      t.ok(
        always.every((flag) => args.includes(flag)) && !args.some((a) => a.startsWith('--initial-old-space-size')),
        "a first start: the young generation and the old one's growth set, not the old one's first size",
      );
    }
    t.equal((await wfxIn(['daemon', 'stop', '--data-dir', dataDir])).code, 0);
    const snapshot = join(dataDir, 'snapshot.json');
    await appendFile(snapshot, ' '.repeat(32 * 2 ** 20));
    const size = (await stat(snapshot)).size;
    // The manifest vouches for the padded snapshot, as it would for one the daemon wrote that large.
    const manifest = (await readManifest(dataDir))!;
    await writeFile(
      join(dataDir, 'store.manifest'),
      encodeManifest({ ...manifest, snapshot: markOf(manifest.snapshot!.seq, await readFile(snapshot)) }),
    );
    const second = await start(t, dataDir);
    if (process.platform === 'linux')
      t.ok(
        (await cmdline(second.pid)).includes(`--initial-old-space-size=${Math.ceil((3 * size) / 2 ** 20)}`),
        'a restart on the large snapshot: the old generation set',
      );
    t.equal((await fetch(`${second.url}/health`)).status, 200);
    t.equal((await wfxIn(['daemon', 'stop', '--data-dir', dataDir])).code, 0);
  },
);

t.test('foreground: readable output, Ctrl-C stops gracefully with exit 0', async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const child = spawnWfx(t, ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir]);
  const exited = once(child, 'exit');
  const lines: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    lines.push(line);
    if (line.startsWith('press Ctrl-C')) break;
  }
  const listening = lines.find((l) => l.startsWith('wfx daemon listening on '));
  t.ok(listening, 'says where it listens');
  t.ok(
    lines.some((l) => l === `admin credential: ${join(dataDir, 'bootstrap.key')}`),
    'says where the credential is',
  );
  t.ok(
    lines.some((l) => /INFO.*first start/.test(l)),
    'readable log lines on the terminal',
  );
  child.kill('SIGINT');
  const [code] = await exited;
  t.equal(code, 0);
});

t.test('usage errors exit 2', async (t) => {
  const bad = await wfxIn(['daemon', 'start', '--port', '99999']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /port number/);
  t.equal((await wfxIn(['no-such-command'])).code, 2);
  const help = await wfxIn(['daemon', '--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /start[\s\S]*stop[\s\S]*status/);
});
