import { dataDirPaths, type DaemonInfo } from '../../shared/data-dir.js';
import { VERSION } from '../../shared/version.js';
import { writeFileAtomic } from '../disk/durable-files.js';

/**
 * Writes the data directory's daemon.json, the file by which `wfx` finds this daemon: its pid,
 * where it answers (`url`), since when, and under `wfx dev` the environment it publishes to. Written by the daemon once it listens, and by a
 * standby's listener (rejoin.ts) while it stands by on that port.
 */
export async function writeDaemonJson(
  dataDir: string,
  url: string,
  flowsEnvironment?: 'DEVELOPMENT',
): Promise<DaemonInfo> {
  const info: DaemonInfo = {
    pid: process.pid,
    url,
    startedAt: new Date().toISOString(),
    version: VERSION,
    dataDir,
    ...(flowsEnvironment !== undefined && { flowsEnvironment }),
  };
  await writeFileAtomic(dataDirPaths(dataDir).daemonJson, `${JSON.stringify(info, null, 2)}\n`);
  return info;
}
