/**
 * A wfx daemon for a benchmark, started and stopped as a user does it (`wfx daemon start` in
 * the background, on a free port), so that what is measured goes over real HTTP to a real process.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const WFX = fileURLToPath(new URL('../../bin/wfx.js', import.meta.url));

/**
 * The options of a benchmark daemon that measures how fast one organization's starts go: the
 * org-starts-per-second limit raised out of reach, so that the figure is the daemon's, not the
 * pace it allows one organization (the check still runs on every start).
 */
export const UNPACED: readonly string[] = ['--limit', 'org-starts-per-second=100000000'];
/** The same for an engine in the benchmark's own process (EngineOptions.limits). */
export const UNPACED_LIMITS = { organizationStartsPerSecond: 100_000_000 } as const;

/** A daemon started for a benchmark: where it listens, and how to stop it (never throws). */
export interface BenchDaemon {
  readonly url: string;
  /** The daemon process's id (its /proc entry: RSS). */
  readonly pid: number;
  readonly stop: () => Promise<void>;
}

/**
 * Starts a daemon on `dataDir` with `args` besides its port and data directory; `wfx`: the
 * `bin/wfx.js` of another build (a baseline), else this one's.
 */
export async function startBenchDaemon(
  dataDir: string,
  args: readonly string[] = [],
  wfx: string = WFX,
): Promise<BenchDaemon> {
  const { stdout } = await run(process.execPath, [
    wfx,
    'daemon',
    'start',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--json',
    ...args,
  ]);
  const { url, pid } = JSON.parse(stdout) as { url: string; pid: number };
  const stop = async () => {
    await run(process.execPath, [wfx, 'daemon', 'stop', '--data-dir', dataDir]).catch(() => undefined);
  };
  return { url, pid, stop };
}
