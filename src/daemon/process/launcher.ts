/**
 * The daemon's one entry point for the CLI (src/cli and src/tui import nothing else of
 * src/daemon): start a daemon here or in the background, find and stop a running one, check a
 * stopped data directory. `wfx daemon start` runs the CLI twice (the command, then the daemon
 * process it spawns), so this module loads only node: built-ins and small pure helpers; the
 * daemon's own code (Fastify, the engine, the store) is imported when a function runs one.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, realpathSync } from 'node:fs';
import { readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { dataDirPaths, type DaemonInfo } from '../../shared/data-dir.js';
import { WfxError } from '../../shared/errors.js';
import type { DaemonOptions, RunningDaemon } from './daemon.js';
import type { Finding, Loss } from '../ops/check.js';

export type { DaemonOptions, RunningDaemon } from './daemon.js';
export { TRACING_DEFAULTS, type TracingOptions } from '../observe/tracing-setup.js';
export type { Finding, Loss } from '../ops/check.js';
/** Checks a comma-separated CIDR list (--http-deny, --http-allow) without the network policy's modules. */
export { parseCidrList } from '../outbound/cidr.js';
export { parseLimit, type ExecutionLimits } from '../engine/limits.js';

/** Message a background daemon sends its starter over IPC. */
type ChildMessage = { ready: DaemonInfo } | { error: { code: string; message: string } };

/** How long `stopDaemon` waits for the daemon to finish its graceful stop. */
export const STOP_TIMEOUT_MS = 30_000;

/**
 * The young generation's size (32 MiB semi-spaces) trades throughput for tail latency: a
 * scavenge pauses every request in flight, and its pause grows with the young generation,
 * while a smaller one costs the engine executions/s (docs/decisions/004-young-generation-32-mib.md). V8 sizes
 * its heap when the process starts (`v8.setFlagsFromString` later changes nothing), so only the
 * background daemon, which gets it on its command line, has it; a foreground one started by
 * the `wfx` command (`--foreground`) replaces its process with one that has these flags where
 * Node can (`foregroundWithDaemonFlags`); `wfx dev` runs with Node's defaults.
 *
 * The old generation's limit after each full GC is twice what it left live
 * (`--heap-growing-percent=100`). V8's own factor goes from 1.1 to 4: once the daemon has been
 * idle its memory reducer leaves the heap a limit barely above what lives, and the first
 * requests after it reach that limit at once, with full GCs among them; under a long load the
 * heap may grow to 4 times what lives. A fixed factor keeps both the first requests after a
 * rest and the heap under load even (docs/decisions/081-fixed-old-generation-growth.md).
 */
const DAEMON_V8_FLAGS = ['--max-semi-space-size=32', '--heap-growing-percent=100'];

/** Set in the environment of a process `foregroundWithDaemonFlags` replaced: it never does so twice. */
const FLAGS_SET_ENV = 'WFX_DAEMON_V8_FLAGS';

/**
 * The flags of DAEMON_V8_FLAGS that neither Node's own arguments (`execArgv`) nor NODE_OPTIONS
 * set: a flag set there, to any value, is the user's choice. Pure.
 */
export function missingDaemonFlags(execArgv: readonly string[], nodeOptions: string): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.split('=')[0]);
  return DAEMON_V8_FLAGS.filter((flag) => !given.includes(flag.split('=')[0]));
}

/**
 * Gives a daemon about to run in the foreground (`wfx daemon start --foreground`, as a
 * supervisor such as systemd runs it) the V8 flags a background daemon gets: replaces this
 * process with Node started with them and the same arguments (`process.execve`: the same pid,
 * terminal and signals; nothing has started yet). Returns, doing nothing, where Node cannot
 * (before 22.15, or Windows), when this process is not the `wfx` command at `binPath` (the CLI
 * run inside a test), when it has an IPC channel (not kept across the replacement), when the
 * flags are set already, or when it was replaced once.
 */
export function foregroundWithDaemonFlags(binPath: string): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (typeof execve !== 'function' || process.channel !== undefined || process.env[FLAGS_SET_ENV] === '1') return;
  const entry = process.argv[1];
  if (entry === undefined || !samePath(entry, binPath)) return;
  const missing = missingDaemonFlags(process.execArgv, process.env.NODE_OPTIONS ?? '');
  if (missing.length === 0) return;
  execve.call(
    process,
    process.execPath,
    [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)],
    {
      ...process.env,
      [FLAGS_SET_ENV]: '1',
    },
  );
}

/** Whether two paths name the same file (through links). */
function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** A snapshot at least this large gets the old generation sized for its parse (`daemonV8Flags`): ~25,000 executions waiting. */
const LARGE_SNAPSHOT = 32 << 20;

/**
 * The V8 flags of a background daemon whose data directory's snapshot is `snapshotBytes` long
 * (0: none). Besides the young generation's size (DAEMON_V8_FLAGS), a large snapshot sets the old
 * generation's initial size (`--initial-old-space-size`) to 3 times the snapshot's.
 *
 * Parsing a snapshot makes about 2.9 times its size in heap (its text, then the objects), all
 * of it live until the parse ends. V8's default first limit is far lower: it starts marking the
 * heap partway through the parse, and every object the parse makes from then on is promoted into
 * a heap being marked. With the size set no full GC runs during the parse, which makes the
 * restart faster and steadier (docs/decisions/022-old-generation-sized-for-snapshot.md).
 *
 * The size is also a floor for the limits V8 sets after each full GC, so such a daemon's heap may
 * grow to it before its old generation is collected: the larger of 3 times its snapshot and
 * twice what the last full GC left live (the fixed growth of DAEMON_V8_FLAGS).
 */
export function daemonV8Flags(snapshotBytes: number): string[] {
  if (snapshotBytes < LARGE_SNAPSHOT) return [...DAEMON_V8_FLAGS];
  return [...DAEMON_V8_FLAGS, `--initial-old-space-size=${Math.ceil((3 * snapshotBytes) / 2 ** 20)}`];
}

/**
 * Starts a daemon in this process: its data directory locked and its snapshot's read started
 * first, so that the read goes on while the daemon's code loads (process/prepare.ts).
 */
export async function launchDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const { prepareDataDir } = await import('./prepare.js');
  const prepared = await prepareDataDir(options.dataDir);
  const { startDaemon } = await import('./daemon.js');
  if (options.store === undefined) return startDaemon(options, prepared);
  // On a database: started again in this process when it loses the database or its lease. The
  // cluster room loads here only (its entry, rejoin.ts): a daemon on the JSON store runs without it.
  const { rejoining } = await import('../cluster/rejoin.js');
  return rejoining(options, prepared, startDaemon);
}

/**
 * Runs this process as the background daemon `startInBackground` spawned: reports readiness (or
 * its start error, then rethrows it) to the starter over IPC, then serves until SIGINT/SIGTERM.
 */
export async function runAsBackgroundChild(options: DaemonOptions): Promise<void> {
  const send = (msg: ChildMessage): void => {
    if (process.send) process.send(msg);
  };
  const running = await launchDaemon(options).catch((err: unknown) => {
    // Not a start error wfx foresaw: its stack goes to logs/daemon.out (rethrown below), and the
    // starter names that file (startInBackground).
    const e = err instanceof WfxError ? err : new WfxError('DAEMON_START_FAILED', (err as Error).message);
    send({ error: { code: e.code, message: e.message } });
    throw err;
  });
  process.once('SIGINT', () => void running.stop());
  process.once('SIGTERM', () => void running.stop());
  send({ ready: running.info });
  process.disconnect?.();
  await running.stopped;
}

/** What `startInBackground` runs: the daemon process's command line and surroundings. */
export interface BackgroundStart {
  readonly dataDir: string;
  /** The arguments after Node's own (the V8 flags come first): bin/wfx.js and its arguments. */
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Spawns the daemon detached, with its V8 flags, its output in logs/daemon.out, and waits for
 * its IPC message; resolves to its info once it serves (then lets it go: disconnect, unref).
 * @throws WfxError with the daemon's own start error code, or DAEMON_START_FAILED (naming
 * logs/daemon.out and logs/daemon.log) when it could not be spawned, failed unexpectedly or
 * exited before it was ready; a data directory that cannot be written throws as a start would.
 */
export async function startInBackground(start: BackgroundStart): Promise<DaemonInfo> {
  const { dataDir } = start;
  const { ensurePrivateDir } = await import('../disk/durable-files.js');
  const { snapshotPathIn } = await import('../store/snapshot-file.js');
  const { dataDirError } = await import('./start-errors.js');
  const paths = dataDirPaths(dataDir);
  const snapshotBytes = await stat(snapshotPathIn(dataDir)).then(
    (st) => st.size,
    () => 0,
  );
  // Whatever the daemon prints outside its structured log (a crash) lands here.
  const outFile = join(paths.logs, 'daemon.out');
  let out: number;
  try {
    await ensurePrivateDir(paths.logs);
    out = openSync(outFile, 'a', 0o600);
  } catch (err) {
    throw dataDirError(err, dataDir);
  }
  const child = spawn(process.execPath, [...daemonV8Flags(snapshotBytes), ...start.args], {
    cwd: start.cwd,
    env: start.env,
    detached: true,
    stdio: ['ignore', out, out, 'ipc'],
  });
  closeSync(out);

  const outcome = await new Promise<ChildMessage | { exited: number | null }>((resolve) => {
    child.once('message', (msg: ChildMessage) => resolve(msg));
    child.once('exit', (code) => resolve({ exited: code }));
    child.once('error', (err) =>
      resolve({ error: { code: 'DAEMON_START_FAILED', message: `cannot start the daemon process: ${err.message}` } }),
    );
  });
  child.removeAllListeners();
  if ('ready' in outcome) {
    child.disconnect();
    child.unref();
    return outcome.ready;
  }
  // The hint of DAEMON_START_FAILED says to read the log: every path names it.
  const logs = `see ${outFile} and ${paths.daemonLog}`;
  if ('error' in outcome) {
    const code = outcome.error.code as ConstructorParameters<typeof WfxError>[0];
    throw new WfxError(
      code,
      code === 'DAEMON_START_FAILED' ? `${outcome.error.message}; ${logs}` : outcome.error.message,
    );
  }
  throw new WfxError(
    'DAEMON_START_FAILED',
    `the daemon exited with code ${outcome.exited} before it was ready; ${logs}`,
  );
}

async function readDaemonInfo(dataDir: string): Promise<DaemonInfo | null> {
  const text = await readFile(dataDirPaths(dataDir).daemonJson, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as DaemonInfo;
  } catch {
    return null;
  }
}

/** The daemon that holds `dataDir`'s lock and wrote its daemon.json, or null when none runs. */
export async function runningDaemon(dataDir: string): Promise<DaemonInfo | null> {
  const { lockOwnerPid } = await import('../store/lock.js');
  const pid = await lockOwnerPid(dataDir);
  const info = pid === null ? null : await readDaemonInfo(dataDir);
  return info !== null && info.pid === pid ? info : null;
}

/**
 * Stops the daemon holding `dataDir`'s lock (SIGTERM, then a bounded wait for the lock to go).
 * When none runs, removes a daemon.json left by a daemon that was killed.
 * @throws WfxError DAEMON_START_FAILED when it has not stopped within STOP_TIMEOUT_MS.
 */
export async function stopDaemon(dataDir: string): Promise<{ stopped: false } | { stopped: true; pid: number }> {
  const { lockOwnerPid } = await import('../store/lock.js');
  const pid = await lockOwnerPid(dataDir);
  if (pid === null) {
    await unlink(dataDirPaths(dataDir).daemonJson).catch(() => undefined);
    return { stopped: false };
  }
  process.kill(pid, 'SIGTERM');
  for (const start = Date.now(); Date.now() - start < STOP_TIMEOUT_MS;) {
    if ((await lockOwnerPid(dataDir)) === null) return { stopped: true, pid };
    await delay(50);
  }
  throw new WfxError(
    'DAEMON_START_FAILED',
    `the daemon (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s; see ${dataDirPaths(dataDir).daemonLog}`,
  );
}

/**
 * Checks a stopped data directory (ops/check.ts `checkDataDir`), repairing it only as asked.
 * With `acceptLoss`, a damaged tail of the last journal segment is cut first (`cut`, reported
 * through `onCut` before the second check); with `adopt`, a missing manifest is written for what
 * the directory holds (`adopted`, reported through `onAdopt`); then the directory is checked
 * again.
 */
export async function checkAndRepairDataDir(
  dataDir: string,
  options: {
    readonly acceptLoss?: boolean;
    readonly adopt?: boolean;
    readonly onCut?: (cut: Loss) => void;
    readonly onAdopt?: (file: string) => void;
  } = {},
): Promise<{ findings: Finding[]; cut: Loss | null; adopted: boolean }> {
  const { checkDataDir: check, cutDamagedTail, adoptDataDir } = await import('../ops/check.js');
  let findings = await check(dataDir);
  const cut = options.acceptLoss && findings.length > 0 ? await cutDamagedTail(dataDir, findings) : null;
  const adopted = options.adopt && findings.length > 0 ? (await adoptDataDir(dataDir, findings)) !== null : false;
  if (cut) options.onCut?.(cut);
  if (adopted) options.onAdopt?.(findings[0]!.file);
  if (cut || adopted) findings = await check(dataDir);
  return { findings, cut, adopted };
}
