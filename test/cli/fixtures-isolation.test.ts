import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { killIfAlive, spawnWfx, startDaemon, WFX_BIN } from '../helpers/cli.js';
import { DAEMONS_DIR, noteDaemon, sweepDaemons } from '../setup/daemons.js';

const SETUP = fileURLToPath(new URL('../setup/fixtures.js', import.meta.url));
const PROJECT = realpathSync(process.env.TAP_CWD ?? process.cwd());

t.test('a fixture lives under the OS temp dir, outside the project', async (t) => {
  const dir = realpathSync(t.testdir({}));
  t.ok(dir.startsWith(realpathSync(tmpdir()) + sep), dir);
  t.notOk(dir.startsWith(PROJECT + sep), 'not under the project, where a developer runs the quick start');
});

/**
 * A test file of a project whose root holds a running daemon's `.wfx`: it starts a daemon in a
 * fixture, as many of wfx's tests do, and prints what the CLI said.
 */
const PROBE = `import t from ${JSON.stringify(import.meta.resolve('tap'))};
import { execFileSync } from 'node:child_process';
t.test('a daemon in a fixture', async (t) => {
  const cwd = t.testdir({});
  const run = (args) => {
    try {
      return { code: 0, out: execFileSync(process.execPath, [${JSON.stringify(WFX_BIN)}, ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }) };
    } catch (err) {
      return { code: err.status, out: String(err.stderr) };
    }
  };
  const started = run(['daemon', 'start', '--port', '0', '--json']);
  if (started.code === 0) run(['daemon', 'stop']);
  console.error('PROBE ' + JSON.stringify({ cwd, ...started }));
});
`;

/** Runs the probe in `root` as tap runs a test file there: with the setup imported first, or not. */
function probe(root: string, preload: boolean): Promise<{ cwd: string; code: number; out: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...(preload ? [`--import=${SETUP}`] : []), join(root, 'probe.test.mjs')],
      {
        cwd: root,
        env: { ...process.env, TAP_CWD: root, NO_COLOR: '1', DBUS_SESSION_BUS_ADDRESS: 'disabled:' },
        timeout: 60_000,
      },
      (_err, _stdout, stderr) => {
        const line = /^PROBE (.*)$/m.exec(stderr)?.[1];
        if (!line) return reject(new Error(`the probe printed no result: ${stderr}`));
        resolve(JSON.parse(line) as { cwd: string; code: number; out: string });
      },
    );
  });
}

t.test("the quick start, then the tests: the project's running daemon is never found", async (t) => {
  // The project root of a developer who followed the README: its daemon runs on <root>/.wfx.
  const root = mkdtempSync(join(tmpdir(), 'wfx-project-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  await startDaemon(t, { cwd: root });
  writeFileSync(join(root, 'probe.test.mjs'), PROBE);

  const withSetup = await probe(root, true);
  t.equal(withSetup.code, 0, withSetup.out);
  const started = JSON.parse(withSetup.out) as { pid: number; dataDir: string };
  killIfAlive(started.pid);
  t.equal(started.dataDir, join(withSetup.cwd, '.wfx'), "the fixture's own data directory");
  t.notOk(withSetup.cwd.startsWith(root), 'the fixture is outside the project');

  // What tap's default fixture place (.tap/fixtures under the project) did: the CLI found the
  // project's .wfx, held by its daemon.
  const without = await probe(root, false);
  t.not(without.code, 0);
  t.match(without.out, /DATA_DIR_LOCKED/);
  t.ok(without.cwd.startsWith(join(root, '.tap', 'fixtures')), without.cwd);
});

t.test('every test file that makes fixtures imports the setup first', async (t) => {
  const root = join(PROJECT, 'test');
  const missing: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.test\.tsx?$/.test(entry.name)) {
        const text = readFileSync(path, 'utf8');
        if (text.includes('testdir(') && !/^import '[./]+\/setup\/fixtures\.js';/m.test(text)) missing.push(path);
      }
    }
  };
  walk(root);
  t.same(missing, [], 'import "../setup/fixtures.js" (the right depth) at the top of these');
});

/** A harmless process that runs until killed; SIGKILLed at teardown if it still runs. */
function sleeper(t: Test) {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.teardown(() => killIfAlive(child.pid));
  return { pid: child.pid!, exited: once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]> };
}

t.test('the sweep after the suite kills a process a test left running, and only that one', async (t) => {
  // A registry of this test's own: the suite's holds the processes of tests running now.
  const registry = join(t.testdir({}), 'registry');
  const left = sleeper(t);
  noteDaemon(left.pid, registry);
  // A noted pid that another process holds now (its start time differs): never killed.
  const other = sleeper(t);
  writeFileSync(join(registry, String(other.pid)), '1');
  t.same(sweepDaemons(registry), [left.pid], 'the noted process, not the other');
  t.same((await left.exited)[1], 'SIGKILL', 'it is gone');
  t.same(readdirSync(registry), [], 'the registry is empty');
  t.doesNotThrow(() => process.kill(other.pid, 0), 'the other one still runs');
  t.same(sweepDaemons(join(registry, 'none')), [], 'no registry: nothing to do');
});

t.test('a foreground daemon a test spawns is noted while it runs, forgotten once it stopped', async (t) => {
  const child = spawnWfx(t, ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', join(t.testdir({}), 'd')]);
  const exited = once(child, 'exit');
  t.ok(existsSync(join(DAEMONS_DIR, String(child.pid))), 'noted for the sweep');
  for await (const chunk of child.stdout) if (String(chunk).includes('press Ctrl-C')) break;
  child.kill('SIGINT');
  t.same((await exited)[0], 0);
  t.notOk(existsSync(join(DAEMONS_DIR, String(child.pid))), 'forgotten');
});
