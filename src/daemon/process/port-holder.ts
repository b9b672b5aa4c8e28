/**
 * Who holds a TCP port, for the message of a daemon that cannot listen (PORT_IN_USE). Best
 * effort and Linux only: /proc/net/tcp{,6} give the listening socket's inode, /proc/<pid>/fd
 * the process that has it open. Anything not readable (another user's processes, no /proc)
 * quietly gives no answer: the message then names the address alone.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA_DIR_NAME, dataDirPaths, type DaemonInfo } from '../../shared/data-dir.js';

/** The process listening on a port, and the wfx daemon it is when its daemon.json says so. */
export interface PortHolder {
  readonly pid: number;
  /** Its command line, shortened for a message. */
  readonly command: string;
  /** Set when the holder is a wfx daemon: its daemon.json names this pid. */
  readonly daemon?: DaemonInfo;
}

/** TCP state LISTEN in /proc/net/tcp. */
const LISTEN = '0A';
/** Bounds the scan of /proc on a machine with very many processes. */
const MAX_PROCESSES = 10_000;

/** Inodes of the sockets listening on `port` (any address), from /proc/net/tcp and tcp6. */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === LISTEN && f[1]!.endsWith(`:${hexPort}`) && f[9] !== '0') inodes.add(f[9]!);
    }
  }
  return inodes;
}

/** The pid that has one of `inodes` open, or null. */
async function ownerOf(inodes: Set<string>): Promise<number | null> {
  const pids = (await readdir('/proc').catch(() => [] as string[]))
    .filter((d) => /^\d+$/.test(d))
    .slice(0, MAX_PROCESSES);
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1]!)) return Number(pid);
    }
  }
  return null;
}

/** The wfx daemon `pid` is, read from the daemon.json of the data directory its command line names (or its cwd's .wfx). */
async function wfxDaemonOf(pid: number, argv: readonly string[]): Promise<DaemonInfo | undefined> {
  const at = argv.indexOf('--data-dir');
  const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => null);
  const dataDir = at >= 0 && argv[at + 1] ? argv[at + 1]! : cwd && join(cwd, DATA_DIR_NAME);
  if (!dataDir) return undefined;
  const text = await readFile(dataDirPaths(dataDir).daemonJson, 'utf8').catch(() => null);
  try {
    const info = text === null ? null : (JSON.parse(text) as DaemonInfo);
    return info?.pid === pid ? info : undefined;
  } catch {
    return undefined;
  }
}

/** The process listening on TCP `port`, or null when unknown (not Linux, not permitted, gone). Never throws. */
export async function portHolder(port: number): Promise<PortHolder | null> {
  if (process.platform !== 'linux' || port === 0) return null;
  try {
    const inodes = await listeningInodes(port);
    if (inodes.size === 0) return null;
    const pid = await ownerOf(inodes);
    if (pid === null) return null;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter((a) => a !== '');
    const command = argv.join(' ').slice(0, 120);
    const daemon = await wfxDaemonOf(pid, argv);
    return daemon ? { pid, command, daemon } : { pid, command };
  } catch {
    return null;
  }
}
