/**
 * Where a backup goes (src/daemon/backup.ts): the target's checks, the partial directory the copy
 * is assembled in beside it, and the rename that puts the whole copy at the target's name. See
 * docs/operations.md "Backups".
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { DIR_MODE, fsyncDir } from '../disk/durable-files.js';
import { crashPoint } from '../store/crash-point.js';
import { processAlive, processStartTime } from '../store/lock.js';

/** What a partial copy's name adds to its target's: `<target>.partial-<pid>-<start time>-<random>`. */
const PARTIAL_RE = /^\.partial-(\d+)-(\d+|x)-[0-9a-f]+$/;

/**
 * Throws unless `target` (absolute) is missing or an empty directory on its parent's file
 * system: BACKUP_TARGET_NOT_EMPTY, or BACKUP_TARGET_INVALID (a mount point, which the whole copy
 * cannot be renamed over; or a path that cannot be read).
 */
export async function checkTarget(target: string): Promise<void> {
  const st = await lstat(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw invalidTarget(target, err);
  });
  if (st === null) return;
  if (!st.isDirectory()) throw notEmpty(target);
  const entries = await readdir(target).catch((err: NodeJS.ErrnoException) => {
    throw invalidTarget(target, err);
  });
  if (entries.length > 0) throw notEmpty(target);
  const parent = await stat(dirname(target));
  if (parent.dev !== st.dev)
    throw new WfxError(
      'BACKUP_TARGET_INVALID',
      `the backup directory ${target} is a mount point, which the copy cannot replace: name a directory inside it`,
      { details: { directory: target, reason: 'EBUSY' } },
    );
}

/**
 * Removes the partial copies beside `target` that a backup to it left when its process died
 * (one whose process still runs is another backup under way, and is kept); returns their paths.
 */
export async function removeLeftovers(target: string): Promise<string[]> {
  const parent = dirname(target);
  const prefix = basename(target);
  const names = await readdir(parent).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const owner = PARTIAL_RE.exec(name.slice(prefix.length));
    if (owner === null || processAlive(Number(owner[1]), owner[2] === 'x' ? null : owner[2]!)) continue;
    await rm(join(parent, name), { recursive: true, force: true });
    removed.push(join(parent, name));
  }
  if (removed.length > 0) await fsyncDir(parent);
  return removed;
}

/**
 * Creates (0700) the directory a copy to `target` is assembled in: beside it, so that the rename
 * that ends the backup stays on one file system, and named after the process writing it, so that
 * the next backup to `target` can tell a leftover from a copy under way. Throws
 * BACKUP_TARGET_INVALID when it cannot be created (no parent, not permitted).
 */
export async function createPartial(target: string): Promise<string> {
  const start = processStartTime(process.pid) ?? 'x';
  const partial = `${target}.partial-${process.pid}-${start}-${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(partial, { mode: DIR_MODE });
  } catch (err) {
    throw invalidTarget(target, err as NodeJS.ErrnoException);
  }
  return partial;
}

/**
 * Renames the whole copy `partial` to `target` (replacing it if it is an empty directory), and
 * makes the name durable. Throws BACKUP_TARGET_NOT_EMPTY when `target` was filled meanwhile,
 * BACKUP_TARGET_INVALID when it cannot be replaced (a mount point); the rename's error otherwise.
 */
export async function publish(partial: string, target: string): Promise<void> {
  try {
    await rename(partial, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') throw notEmpty(target);
    if (code === 'EBUSY' || code === 'EXDEV') throw invalidTarget(target, err as NodeJS.ErrnoException);
    throw err;
  }
  crashPoint('backup:renamed'); // the whole copy at its name, the parent not yet synced
  await fsyncDir(dirname(target));
}

function notEmpty(target: string): WfxError {
  return new WfxError('BACKUP_TARGET_NOT_EMPTY', `${target} exists and is not an empty directory`, {
    details: { directory: target },
  });
}

/** BACKUP_TARGET_INVALID naming the system error that kept `target` from being written. */
export function invalidTarget(target: string, err: NodeJS.ErrnoException): WfxError {
  return new WfxError(
    'BACKUP_TARGET_INVALID',
    `the backup directory ${target} cannot be created: ${err.code ?? err.message}`,
    { details: { directory: target, reason: err.code } },
  );
}
