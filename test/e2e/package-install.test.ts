import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { forgetDaemon, noteDaemon } from '../setup/daemons.js';
import { killIfAlive } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

// wfx as users install it: `npm pack`, then `npm install -g` of the tarball into a prefix of the
// test's own, on a directory that is not the repository. Dependencies come from the npm registry
// through npm's cache (`--prefer-offline`: `npm ci` filled it); `--omit=optional` leaves out
// node-llama-cpp, whose GPU builds a global install would fetch (the repository's `overrides`
// apply to its own tree only): the daemon loads it only when a `local` provider is used.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HAVE_TMUX = spawnSync('tmux', ['-V']).status === 0;
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `file args` in `cwd` with `env`; never rejects (the exit code says). */
function exec(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

t.test('npm pack, npm install -g of the tarball, then wfx works with nothing extra', async (t) => {
  const dir = t.testdir({ project: {}, config: {}, pack: {} });
  // The Node that runs this test runs npm and wfx too (CI runs the suite on several).
  const env = {
    ...process.env,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    XDG_CONFIG_HOME: join(dir, 'config'),
    DBUS_SESSION_BUS_ADDRESS: 'disabled:',
    NO_COLOR: '1',
    npm_config_update_notifier: 'false',
  };
  // --ignore-scripts: the suite runs on the build `pretest` made; `prepare` would rebuild dist/
  // under the other test files.
  const packed = await exec(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', join(dir, 'pack')],
    ROOT,
    env,
  );
  t.equal(packed.code, 0, `npm pack: ${packed.stderr}`);
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  const files = info!.files.map((f) => f.path);
  for (const needed of [
    'bin/wfx.js',
    'dist/src/cli/main.js',
    'dist/src/daemon/process/daemon.js',
    'dist/console/index.html',
    'dist/src/worker/index.d.ts',
    'package.json',
    'README.md',
  ])
    t.ok(files.includes(needed), `the package has ${needed}`);
  t.ok(
    files.some((f) => /^dist\/console\/assets\/main-.*\.js$/.test(f)),
    "the console's bundle",
  );
  const extra = files.filter(
    (f) =>
      /^(test|bench|scripts|src)\/|^dist\/(test|bench)\//.test(f) ||
      /fixtures|\.test\.|(?<!\.d)\.ts$|^dist\/src\/.*\.map$/.test(f),
  );
  t.same(extra, [], 'no tests, fixtures, benchmarks, sources or source maps of the compiled code');

  const prefix = join(dir, 'prefix');
  const installed = await exec(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--omit=optional',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      join(dir, 'pack', info!.filename),
    ],
    join(dir, 'project'),
    env,
  );
  t.equal(installed.code, 0, `npm install -g: ${installed.stderr}`);
  t.notMatch(installed.stderr, /EBADENGINE/, 'no dependency refuses this Node');
  t.notMatch(installed.stderr, /install-scripts|allow-scripts/, "the README's command: npm asks to allow no script");
  const bin = join(prefix, 'bin', 'wfx');
  const wfx = (...args: string[]) => exec(bin, args, join(dir, 'project'), env);

  t.same(await wfx('--version'), { code: 0, stdout: `${VERSION}\n`, stderr: '' }, 'wfx --version');
  t.equal((await wfx('init')).code, 0, 'wfx init writes its first flow (templates are in the package)');
  const started = await wfx('daemon', 'start', '--port', '0', '--json');
  t.equal(started.code, 0, `daemon start: ${started.stderr}`);
  const daemon = JSON.parse(started.stdout) as { pid: number; url: string };
  noteDaemon(daemon.pid);
  t.teardown(() => {
    killIfAlive(daemon.pid);
    forgetDaemon(daemon.pid);
  });

  const ran = await wfx('run', 'flows/hello.yaml', '--wait');
  t.equal(ran.code, 0, `wfx run --wait: ${ran.stderr}`);
  t.match(ran.stdout, /^output: \{"greeting":"Hello, world!"\}$/m, 'the flow ran to its output');

  // The TUI as installed: its React and Ink come from the package's own dependencies. It needs a
  // terminal: a tmux pane, in the project directory so it finds the daemon and its credential.
  if (HAVE_TMUX || process.env.CI) {
    const socket = `wfx-pkg-${process.pid}-${Date.now()}`;
    const tmux = (...args: string[]) =>
      exec('tmux', ['-L', socket, '-f', '/dev/null', ...args], join(dir, 'project'), env);
    t.teardown(() => tmux('kill-server'));
    const opened = await tmux(
      'new-session',
      '-d',
      '-s',
      'tui',
      '-x',
      '100',
      '-y',
      '30',
      '-c',
      join(dir, 'project'),
      `NO_COLOR=1 '${bin}' tui`,
    );
    t.equal(opened.code, 0, `tmux: ${opened.stderr}`);
    let pane = '';
    await eventually('the installed TUI lists the run', async () => {
      pane = (await tmux('capture-pane', '-p', '-t', 'tui')).stdout;
      return /· live/.test(pane) && /✔ completed\s+Hello v1/.test(pane);
    }).catch((err: Error) => {
      throw new Error(`${err.message}; the pane shows:\n${pane}`);
    });
    t.pass('wfx tui runs from the package');
    await tmux('send-keys', '-t', 'tui', 'q');
    await eventually('q ends the TUI', async () => (await tmux('has-session', '-t', 'tui')).code !== 0);
  }

  const page = await fetch(`${daemon.url}/`);
  t.equal(page.status, 200, 'the console is served');
  const html = await page.text();
  const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  t.ok(asset, 'its page names its bundle');
  t.equal((await fetch(`${daemon.url}${asset}`)).status, 200, 'and the bundle is served');

  const stopped = await wfx('daemon', 'stop');
  t.equal(stopped.code, 0, `daemon stop: ${stopped.stderr}`);
});
