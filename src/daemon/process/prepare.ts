/**
 * What a daemon does with its data directory before the rest of its code loads: create it,
 * take its lock, and start reading its snapshot. Kept apart from daemon.ts (which loads
 * Fastify, Ajv, pino and the engine) so that the read of a large snapshot goes on while that
 * code loads instead of after it (docs/decisions/019-restart-path.md). Only after the lock:
 * another daemon stopping may still be writing its last snapshot until it lets the lock go.
 */
import { dataDirPaths } from '../../shared/data-dir.js';
import { WfxError } from '../../shared/errors.js';
import { dataDirError } from './start-errors.js';
import { ensurePrivateDir } from '../disk/durable-files.js';
import { acquireDataDirLock, type DataDirLock } from '../store/lock.js';
import { readFileBytes, snapshotPathIn } from '../store/snapshot-file.js';

/** A data directory this process holds, its snapshot being read. */
export interface PreparedDataDir {
  readonly dataDir: string;
  readonly lock: DataDirLock;
  /** The store's `snapshot.json` (null: none yet), read since the lock was taken. */
  readonly snapshotBytes: Promise<Buffer | null>;
}

/**
 * Creates `dataDir` and its logs directory (0700), takes its lock, and starts reading its
 * snapshot. Throws WfxError DATA_DIR_INVALID or DATA_DIR_LOCKED.
 */
export async function prepareDataDir(dataDir: string): Promise<PreparedDataDir> {
  try {
    await ensurePrivateDir(dataDir);
    await ensurePrivateDir(dataDirPaths(dataDir).logs);
  } catch (err) {
    throw new WfxError('DATA_DIR_INVALID', `cannot use ${dataDir} as a data directory: ${(err as Error).message}`);
  }
  // A directory that exists but cannot be written (read-only, full) fails here, at the lock.
  const lock = await acquireDataDirLock(dataDir).catch((err: unknown) => {
    throw dataDirError(err, dataDir);
  });
  return { dataDir, lock, snapshotBytes: readFileBytes(snapshotPathIn(dataDir)) };
}
