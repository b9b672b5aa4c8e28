import { readFileSync } from 'node:fs';
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import { FILE_MODE } from '../disk/durable-files.js';

/** Who holds a data directory: written to `<data-dir>/daemon.lock`. */
interface LockOwner {
  readonly pid: number;
  /** Kernel start time of the process (Linux /proc), to tell a reused pid from the owner. */
  readonly startTime: string | null;
}

/** A held data-directory lock. */
export interface DataDirLock {
  readonly path: string;
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>;
}

/** Seconds after which a half-done steal (a crash while breaking a stale lock) is ignored. */
const STEAL_STALE_MS = 10_000;

/**
 * Takes the exclusive lock of `dataDir`, so two daemons never share one store.
 *
 * The lock file is created with O_EXCL and holds the owner's pid and process start time. A
 * lock whose owner is gone (kill -9, power cut; or the pid now belongs to another process, which
 * the start time reveals) is stale and is broken; breaking goes through a second O_EXCL file so
 * two starters cannot both break it and both win.
 *
 * Throws WfxError DATA_DIR_LOCKED naming the pid when a live process holds it.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, 'daemon.lock');
  const me: LockOwner = { pid: process.pid, startTime: processStartTime(process.pid) };
  const content = JSON.stringify(me);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createWithContent(path, content)) {
      return {
        path,
        release: async () => {
          const now = await readFile(path, 'utf8').catch(() => null);
          if (now === content) await unlink(path).catch(() => undefined);
        },
      };
    }
    const existing = await readFile(path, 'utf8').catch(() => null);
    if (existing === null) continue; // released meanwhile: try again
    const owner = parseOwner(existing);
    if (owner && isAlive(owner)) {
      throw new WfxError(
        'DATA_DIR_LOCKED',
        `the data directory ${dataDir} is in use by another wfx daemon (pid ${owner.pid})`,
        {
          details: { pid: owner.pid, lock: path },
        },
      );
    }
    await breakStaleLock(path, existing);
  }
  throw new WfxError(
    'DATA_DIR_LOCKED',
    `could not lock the data directory ${dataDir}: another process keeps taking it`,
  );
}

/**
 * Creates `path` holding `content` in one step, or returns false if it exists: the content goes
 * to a temporary file first, then link() puts it in place (which fails if `path` exists). A lock
 * file is therefore never seen empty, which another starter would take for a stale lock.
 */
async function createWithContent(path: string, content: string): Promise<boolean> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, content, { mode: FILE_MODE });
  try {
    await link(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function breakStaleLock(path: string, staleContent: string): Promise<void> {
  const steal = `${path}.steal`;
  try {
    await writeFile(steal, String(process.pid), { flag: 'wx', mode: FILE_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another starter is breaking it; unless that one died half-way, let it win.
    const st = await stat(steal).catch(() => null);
    if (st && Date.now() - st.mtimeMs > STEAL_STALE_MS) await unlink(steal).catch(() => undefined);
    return;
  }
  try {
    const now = await readFile(path, 'utf8').catch(() => null);
    if (now === staleContent) await unlink(path);
  } finally {
    await unlink(steal).catch(() => undefined);
  }
}

function parseOwner(text: string): LockOwner | null {
  try {
    const v = JSON.parse(text) as Partial<LockOwner>;
    if (typeof v.pid !== 'number' || !Number.isInteger(v.pid) || v.pid <= 0) return null;
    return { pid: v.pid, startTime: typeof v.startTime === 'string' ? v.startTime : null };
  } catch {
    return null;
  }
}

/**
 * True when the lock's owner process still runs: it exists, is not a zombie (a killed process
 * nobody reaped yet, common in containers without an init), and is the same process, not a
 * reuse of its pid.
 */
function isAlive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it exists but belongs to someone else; fall through to the /proc checks.
  }
  const proc = procStat(owner.pid);
  if (proc === null) return true; // no /proc (not Linux): kill(0) is all we can know
  if (proc.state === 'Z' || proc.state === 'X') return false;
  return owner.startTime === null || proc.startTime === owner.startTime;
}

/** State (field 3) and start time in clock ticks since boot (field 22) of /proc/PID/stat; null off Linux. */
function procStat(pid: number): { state: string; startTime: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', startTime: fields[19] ?? '' };
  } catch {
    return null;
  }
}

/** The kernel start time of process `pid` (Linux /proc; null elsewhere, or when it is gone). */
export function processStartTime(pid: number): string | null {
  return procStat(pid)?.startTime ?? null;
}

/**
 * Whether process `pid` still runs and is the one that started at `startTime` (processStartTime;
 * null: not known, the pid alone decides): not gone, not a zombie, not a reuse of its pid.
 */
export function processAlive(pid: number, startTime: string | null): boolean {
  return isAlive({ pid, startTime });
}

/**
 * The pid of the live process holding `dataDir`'s lock, or null when none does (no lock, or a
 * stale one). Used by `wfx daemon stop|status` so they never signal a process that merely
 * reuses a dead daemon's pid.
 */
export async function lockOwnerPid(dataDir: string): Promise<number | null> {
  const text = await readFile(join(dataDir, 'daemon.lock'), 'utf8').catch(() => null);
  const owner = text === null ? null : parseOwner(text);
  return owner && isAlive(owner) ? owner.pid : null;
}
