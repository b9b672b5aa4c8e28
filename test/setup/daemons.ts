/**
 * Where the test helpers note the background daemons they start (one empty file per pid),
 * and the sweep tap runs after the whole suite (package.json's `after`): a test process that
 * was killed (a timeout ends it with SIGKILL if SIGTERM is not enough) ran no teardown, and a
 * background daemon outlives its starter by design.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The registry: beside tap's own files of this project. */
export const DAEMONS_DIR = join(process.env.TAP_CWD ?? process.cwd(), '.tap', 'wfx-daemons');

/** Notes a daemon started in the background. */
export function noteDaemon(pid: number): void {
  mkdirSync(DAEMONS_DIR, { recursive: true });
  writeFileSync(join(DAEMONS_DIR, String(pid)), '');
}

/** Forgets a daemon its test stopped. */
export function forgetDaemon(pid: number): void {
  rmSync(join(DAEMONS_DIR, String(pid)), { force: true });
}

/**
 * True when `pid` still runs bin/wfx.js or a test's PostgreSQL server (test/helpers/postgres.ts),
 * not a process that got a noted pid again.
 */
function isWfx(pid: number): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('wfx.js') || cmdline.includes('wfx-pg-');
  } catch {
    // No /proc (macOS): the pid was noted a moment ago by this suite; take it as noted.
    return process.platform !== 'linux';
  }
}

/** SIGKILLs every noted daemon that still runs and empties the registry; returns their pids. */
export function sweepDaemons(): number[] {
  let pids: number[];
  try {
    pids = readdirSync(DAEMONS_DIR).map(Number).filter(Number.isInteger);
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const pid of pids) {
    try {
      if (isWfx(pid)) {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      }
    } catch {
      // already gone
    }
    forgetDaemon(pid);
  }
  return killed;
}
