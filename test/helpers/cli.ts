import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WfxClient } from '../../src/client/client.js';

/** The built CLI entry point, as users run it. */
export const WFX_BIN = fileURLToPath(new URL('../../../bin/wfx.js', import.meta.url));

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Daemons this test process started (background daemons outlive their starter). If the test
 * process ends without its teardowns (tap kills it on a timeout), they are killed here.
 */
const startedDaemons = new Set<number>();
const killStarted = () => {
  for (const pid of startedDaemons) killIfAlive(pid);
};
process.once('exit', killStarted);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    killStarted();
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });
}

/** Runs `wfx ...args` as a child process and collects its exit code and output. */
export function wfx(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return run(args, options).then((res) => {
    // Note a daemon started in the background, so it never outlives this process.
    if (args[0] === 'daemon' && args[1] === 'start' && res.code === 0) {
      const pid = /"pid": (\d+)/.exec(res.stdout)?.[1] ?? /\(pid (\d+)\)/.exec(res.stdout)?.[1];
      if (pid) startedDaemons.add(Number(pid));
    }
    return res;
  });
}

function run(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [WFX_BIN, ...args],
      { cwd: options.cwd, env: { ...process.env, NO_COLOR: '1', ...options.env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
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
 * Starts a background daemon on port 0, in `cwd` (its default data dir there) or on `dataDir`;
 * at teardown it is stopped, and killed if it still runs. Returns its pid and URL.
 */
export async function startDaemon(
  t: { teardown(fn: () => unknown): void },
  where: { readonly cwd?: string; readonly dataDir?: string; readonly args?: readonly string[] },
): Promise<{ pid: number; url: string }> {
  const dir = where.dataDir ? ['--data-dir', where.dataDir] : [];
  const res = await wfx(['daemon', 'start', '--port', '0', '--json', ...dir, ...(where.args ?? [])], { cwd: where.cwd });
  if (res.code !== 0) throw new Error(`daemon start failed (${res.code}): ${res.stderr}`);
  const info = JSON.parse(res.stdout) as { pid: number; url: string };
  t.teardown(async () => {
    await wfx(['daemon', 'stop', ...dir], { cwd: where.cwd });
    killIfAlive(info.pid);
  });
  return info;
}

/** An API client with the bootstrap admin key of the daemon started in `cwd` (its default data dir). */
export async function adminClient(cwd: string, url: string): Promise<WfxClient> {
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  return new WfxClient({ url, apiKey: key, credentialSource: 'test' });
}
