import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Name of a data directory when none is given: `.wfx`, found like git finds `.git`. */
export const DATA_DIR_NAME = '.wfx';

/**
 * The data directory to use: `--data-dir`, then `WFX_DATA_DIR`, then the nearest `.wfx/` in
 * `cwd` or a parent, then `<cwd>/.wfx` (which a daemon start creates). Always absolute.
 */
export function resolveDataDir(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): string {
  if (flag) return resolve(cwd, flag);
  if (env.WFX_DATA_DIR) return resolve(cwd, env.WFX_DATA_DIR);
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, DATA_DIR_NAME);
    if (existsSync(candidate) && statSync(candidate).isDirectory()) return candidate;
    if (dirname(dir) === dir) break;
  }
  return join(resolve(cwd), DATA_DIR_NAME);
}

/** Paths of the files in a data directory (docs/architecture.md describes each). */
export function dataDirPaths(dataDir: string) {
  return {
    daemonJson: join(dataDir, 'daemon.json'),
    bootstrapKey: join(dataDir, 'bootstrap.key'),
    lock: join(dataDir, 'daemon.lock'),
    history: join(dataDir, 'history'),
    audit: join(dataDir, 'audit'),
    files: join(dataDir, 'files'),
    logs: join(dataDir, 'logs'),
    daemonLog: join(dataDir, 'logs', 'daemon.log'),
  } as const;
}

/** Content of `daemon.json`: how a local CLI finds the running daemon. */
export interface DaemonInfo {
  readonly pid: number;
  readonly url: string;
  readonly startedAt: string;
  readonly version: string;
  readonly dataDir: string;
  /**
   * The environment the daemon publishes its flow files to, when it is `wfx dev`'s (DEVELOPMENT):
   * the CLI's default environment for the commands that read or set one. Absent otherwise.
   */
  readonly flowsEnvironment?: 'DEVELOPMENT';
}
