import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { WfxClient } from '../../src/client/client.js';
import { main } from '../../src/cli/main.js';
import { forgetDaemon, noteDaemon } from '../setup/daemons.js';

/** The built CLI entry point, as users run it. */
export const WFX_BIN = fileURLToPath(new URL('../../../bin/wfx.js', import.meta.url));

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** `wfxIn` only: stdout and stderr as they were written, interleaved (what a terminal shows). */
  readonly interleaved?: string;
}

/** How a test runs one `wfx` command: its directory, variables over this process's, its stdin. */
export interface CliOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Standard input of the command (default: empty). */
  readonly stdin?: string;
  /**
   * In-process only (`wfxIn`): which of stdin, stdout and stderr claim to be a terminal (`isTTY`),
   * and its width (default 80). Default: none, as in a pipe.
   */
  readonly tty?: {
    readonly stdin?: boolean;
    readonly stdout?: boolean;
    readonly stderr?: boolean;
    readonly columns?: number;
  };
}

/**
 * A config directory of this test process's own (XDG_CONFIG_HOME), so no command reads or writes
 * the user's `wfx login` credentials; removed at exit. A test may pass its own.
 */
let configHome: string | null = null;
function testConfigHome(): string {
  configHome ??= mkdtempSync(join(tmpdir(), 'wfx-config-'));
  return configHome;
}
process.once('exit', () => {
  if (configHome) rmSync(configHome, { recursive: true, force: true });
});

// The OS keyring library of an in-process command reads this process's environment, not the
// command's: without a D-Bus session it finds no keyring, so no test reads or writes the user's.
process.env.DBUS_SESSION_BUS_ADDRESS = 'disabled:';

/**
 * The environment of a command: this process's, no colour, a config dir of the test's own and
 * no D-Bus session (a real process then finds no OS keyring and never touches the user's).
 */
function commandEnv(env: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NO_COLOR: '1',
    XDG_CONFIG_HOME: testConfigHome(),
    DBUS_SESSION_BUS_ADDRESS: 'disabled:',
    // Daemons the tests start check that each step writes only what its input named (engine/touch-check.ts).
    WFX_TEST_CHECK_TOUCHED: '1',
    // Where no daemon of the test's is named, nothing answers: never the user's on 7878 (port 9: discard).
    WFX_DEFAULT_URL: 'http://127.0.0.1:9',
    ...env,
  };
}

/**
 * Daemons this test process started (background daemons outlive their starter). If the test
 * process ends without its teardowns (tap stops it on a timeout), they are killed here; if it
 * is killed outright, by the sweep tap runs after the suite (test/setup/daemons.ts).
 */
const startedDaemons = new Set<number>();
const killStarted = () => {
  for (const pid of startedDaemons) {
    killIfAlive(pid);
    forgetDaemon(pid);
  }
};
process.once('exit', killStarted);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    killStarted();
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });
}

/**
 * Runs `wfx ...args` as a child process, as users run it, and collects its exit code and output.
 * For what only a real process shows (bin/wfx.js's exit codes, signals, a foreground daemon);
 * everything else runs in-process with `wfxIn`.
 */
export function wfx(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return run(args, options).then((res) => noteStarted(args, res));
}

/**
 * Runs `wfx ...args` in this process through `main()`, with its own context (stdout and stderr
 * captured, `env` over this process's, `cwd`, `stdin`), and resolves to what the child process
 * would give: the exit code, and for an unexpected error the stack and exit 70 as bin/wfx.js
 * prints them. Never changes process.env, process.exitCode or the working directory.
 */
export async function wfxIn(args: string[], options: CliOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  let interleaved = '';
  const sink = (append: (s: string) => void, tty: boolean | undefined) =>
    Object.assign(
      new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          append(chunk.toString());
          interleaved += chunk.toString();
          done();
        },
      }),
      tty ? { isTTY: true, columns: options.tty?.columns ?? 80 } : {},
    );
  const stdin = Object.assign(
    Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    options.tty?.stdin ? { isTTY: true } : {},
  );
  const code = await main(['node', WFX_BIN, ...args], {
    stdin,
    stdout: sink((s) => (stdout += s), options.tty?.stdout),
    stderr: sink((s) => (stderr += s), options.tty?.stderr),
    env: commandEnv(options.env),
    cwd: options.cwd ?? process.cwd(),
    binPath: WFX_BIN,
  }).catch((err: unknown) => {
    stderr += `INTERNAL_ERROR: ${err instanceof Error && err.stack ? err.stack : String(err)}\nThis is a bug in wfx; please report it.\n`;
    return 70;
  });
  return noteStarted(args, { code, stdout, stderr, interleaved });
}

/** Notes a daemon started in the background, so it never outlives this process. */
function noteStarted(args: readonly string[], res: CliResult): CliResult {
  if (args[0] === 'daemon' && args[1] === 'start' && res.code === 0) {
    const pid = /"pid": (\d+)/.exec(res.stdout)?.[1] ?? /\(pid (\d+)\)/.exec(res.stdout)?.[1];
    if (pid) {
      startedDaemons.add(Number(pid));
      noteDaemon(Number(pid));
    }
  }
  return res;
}

function run(args: string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [WFX_BIN, ...args],
      { cwd: options.cwd, env: commandEnv(options.env), timeout: 60_000 },
      (err, stdout, stderr) => {
        if (child.pid) forgetDaemon(child.pid);
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    // A `daemon start --foreground` that should have failed would serve on: swept if left.
    if (child.pid) noteDaemon(child.pid);
    child.stdin?.end(options.stdin ?? '');
  });
}

/** Every process `spawnWfx` started that has not exited: killed when this process exits. */
const spawnedProcesses = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of spawnedProcesses) killIfAlive(child.pid);
});

/**
 * Spawns `wfx ...args` as a real process (stdin ignored, stdout and stderr piped), in
 * `options.cwd` with the environment `wfx` gives (no colour, a config dir of the test's own, no
 * D-Bus), for what a test must watch as it runs: a foreground daemon, `wfx dev`, a `--follow`.
 * It is noted for the sweep after the suite (test/setup/daemons.ts) and killed at teardown, or
 * when this process exits, whichever comes first.
 */
export function spawnWfx(
  t: { teardown(fn: () => unknown): void },
  args: readonly string[],
  options: Pick<CliOptions, 'cwd' | 'env'> = {},
): ChildProcess & { readonly stdout: Readable; readonly stderr: Readable } {
  const child = spawn(process.execPath, [WFX_BIN, ...args], {
    cwd: options.cwd,
    env: commandEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid !== undefined) noteDaemon(pid);
  spawnedProcesses.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      spawnedProcesses.delete(child);
      if (pid !== undefined) forgetDaemon(pid);
      resolve();
    }),
  );
  t.teardown(async () => {
    if (pid !== undefined && child.exitCode === null && child.signalCode === null) {
      killIfAlive(pid);
      await exited;
    }
    if (pid !== undefined) forgetDaemon(pid);
  });
  return child as ChildProcess & { readonly stdout: Readable; readonly stderr: Readable };
}

/** SIGKILLs `pid` if it still runs (test cleanup). */
export function killIfAlive(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Starts a background daemon on port 0, in `cwd` (its default data dir there) or on `dataDir`,
 * with `env` over this process's environment; at teardown it is stopped, and killed if it still
 * runs. Returns its pid and URL.
 */
export async function startDaemon(
  t: { teardown(fn: () => unknown): void },
  where: {
    readonly cwd?: string;
    readonly dataDir?: string;
    readonly args?: readonly string[];
    readonly env?: NodeJS.ProcessEnv;
  },
): Promise<{ pid: number; url: string }> {
  const dir = where.dataDir ? ['--data-dir', where.dataDir] : [];
  const res = await wfxIn(['daemon', 'start', '--port', '0', '--json', ...dir, ...(where.args ?? [])], {
    cwd: where.cwd,
    ...(where.env && { env: where.env }),
  });
  if (res.code !== 0) throw new Error(`daemon start failed (${res.code}): ${res.stderr}`);
  const info = JSON.parse(res.stdout) as { pid: number; url: string };
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await wfxIn(['daemon', 'stop', ...dir], { cwd: where.cwd });
      killIfAlive(info.pid);
      startedDaemons.delete(info.pid);
      forgetDaemon(info.pid);
    })());
  beforeFixtureRemoval(t, stop);
  t.teardown(stop);
  return info;
}

/**
 * Runs `fn` as test `t` ends, before tap removes its `t.testdir()` fixture: tap removes the
 * fixture before it runs the teardowns, and a daemon still writing into it (an execution being
 * archived) makes the removal fail with ENOTEMPTY. Chained on the test's end-of-file hook, the one
 * tap's fixture plugin removes the fixture in; without it (another tap), left to the teardown.
 */
export function beforeFixtureRemoval(t: object, fn: () => Promise<void>): void {
  const base = (t as { t?: { onEOF?: () => unknown } }).t;
  const next = base?.onEOF;
  if (base === undefined || typeof next !== 'function') return;
  base.onEOF = async () => {
    await fn();
    await next.call(base);
  };
}

/** An API client with the bootstrap admin key of the daemon started in `cwd` (its default data dir). */
export async function adminClient(cwd: string, url: string): Promise<WfxClient> {
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  return new WfxClient({ url, apiKey: key, credentialSource: 'test' });
}

/**
 * One JSON request to the daemon at `url` with API key `key` (a JSON body when given), bounded
 * at 30 s: the status and the parsed answer.
 */
export async function callDaemon(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: object,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A step of a process's output: once a line matches `until`, `then` runs (a file to change, a signal to send). */
export interface LineStep {
  readonly until: RegExp;
  /** Called with the line that ended the wait. */
  readonly then: (line: string) => Promise<unknown>;
}

/**
 * Reads `input` line by line to its end, taking `steps` in order as the lines they wait for come:
 * every line seen, and how many steps were taken (all of them, when the output went as expected).
 */
export async function stepThroughLines(
  input: Readable,
  steps: readonly LineStep[],
): Promise<{ seen: string[]; taken: number }> {
  const seen: string[] = [];
  let taken = 0;
  for await (const line of createInterface({ input })) {
    seen.push(line);
    if (taken < steps.length && steps[taken]!.until.test(line)) await steps[taken++]!.then(line);
  }
  return { seen, taken };
}
