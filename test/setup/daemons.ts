/**
 * Where the test helpers note the processes that could outlive their test (one file per pid,
 * holding the process's start time): background daemons, foreground daemons and other `wfx`
 * processes tests spawn (test/helpers/cli.ts `spawnWfx`), a test's PostgreSQL server; and the
 * sweep tap runs after the whole suite (package.json's `after`): a test process that was killed
 * (a timeout ends it with SIGKILL if SIGTERM is not enough) ran no teardown, and a background
 * daemon outlives its starter by design.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The registry: beside tap's own files of this project. */
export const DAEMONS_DIR = join(process.env.TAP_CWD ?? process.cwd(), '.tap', 'wfx-daemons');

/**
 * The start time of process `pid` (field 22 of /proc/PID/stat, in clock ticks since boot): with
 * the pid, it names one process, never a later one that got the pid again. '' when it is gone or
 * there is no /proc (macOS).
 */
function startTimeOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/** Notes a process that must not outlive the suite (in `dir`: tests of the sweep pass their own). */
export function noteDaemon(pid: number, dir = DAEMONS_DIR): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, String(pid)), startTimeOf(pid));
}

/** Forgets a process its test stopped. */
export function forgetDaemon(pid: number, dir = DAEMONS_DIR): void {
  rmSync(join(dir, String(pid)), { force: true });
}

/**
 * True when `pid` is still the process that was noted (same start time), not one that got the
 * pid again. Without /proc (macOS) the pid was noted by this suite a moment ago: taken as noted.
 */
function isNoted(pid: number, noted: string): boolean {
  if (process.platform !== 'linux') return true;
  return noted !== '' && startTimeOf(pid) === noted;
}

/** SIGKILLs every noted process that still runs and empties the registry `dir`; returns their pids. */
export function sweepDaemons(dir = DAEMONS_DIR): number[] {
  let pids: number[];
  try {
    pids = readdirSync(dir).map(Number).filter(Number.isInteger);
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const pid of pids) {
    try {
      if (isNoted(pid, readFileSync(join(dir, String(pid)), 'utf8'))) {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      }
    } catch {
      // already gone
    }
    forgetDaemon(pid, dir);
  }
  return killed;
}
