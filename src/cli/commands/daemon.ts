import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { DaemonOptions } from '../../daemon/daemon.js';
import { dataDirPaths, type DaemonInfo } from '../../shared/data-dir.js';
import { WfxError } from '../../shared/errors.js';
import { parseDuration } from '../../shared/duration.js';
import { parseCidrList } from '../../daemon/engine/work/cidr.js';
import { dataDirOf, globals, printJson, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { clientFor } from '../api.js';
import { table } from '../format.js';

interface TriggerRow {
  type: string;
  flowName: string;
  version: string;
  environment: string;
  state: string;
  cron?: string;
  timezone?: string;
  webhook?: string;
  connection?: string;
  lastFire: string | null;
  nextFire: string | null;
  lastError: string | null;
}

/** GET /admin/triggers with the CLI's credential, or null when there is none that may read it. */
async function triggerHealth(ctx: CliContext, cmd: Command): Promise<TriggerRow[] | null> {
  try {
    const client = await clientFor(ctx, cmd);
    return (await client.get<{ items: TriggerRow[] }>('/admin/triggers')).items;
  } catch {
    return null;
  }
}

interface StartOptions {
  readonly port: number;
  readonly host: string;
  readonly foreground?: boolean;
  readonly retention?: number;
  readonly flows?: string;
  readonly oidcIssuer?: string;
  readonly oidcAudience?: string;
  readonly oidcOrgClaim?: string;
  readonly maxJsonDepth?: number;
  readonly webhookReplayWindow?: number;
  readonly httpDeny?: string;
  readonly httpAllow?: string;
  /** Internal: this process is the background daemon started by `daemon start`. */
  readonly child?: boolean;
}

/** Message a background daemon sends its starter over IPC. */
type ChildMessage = { ready: DaemonInfo } | { error: { code: string; message: string } };

const STOP_TIMEOUT_MS = 30_000;

/** `wfx daemon start|stop|status|check|backup`. */
export function registerDaemon(program: Command, ctx: CliContext): void {
  const daemon = program.command('daemon').description('start, stop and inspect the local wfx daemon');

  daemon
    .command('start')
    .description('start the daemon (in the background unless --foreground)')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 7878)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--foreground', 'run in this terminal, logging readable lines, until Ctrl-C')
    .option('--retention <days>', 'keep finished executions this many days', parsePositive)
    .option('--flows <dir>', 'validate and publish the flow files of this directory at start (organization default, PRODUCTION)')
    .option('--oidc-issuer <url>', 'also accept bearer JWTs from this OIDC issuer (needs --oidc-audience)')
    .option('--oidc-audience <aud>', 'the audience bearer tokens must carry')
    .option('--oidc-org-claim <claim>', 'the token claim naming the organization', 'org_id')
    .option('--max-json-depth <n>', 'how deep untrusted JSON (request bodies, payloads, work results) may nest (default 64)', parseDepth)
    .option('--webhook-replay-window <duration>', 'how long a webhook delivery id makes a replay a duplicate (default 72h)', parseReplayWindow)
    .option('--http-deny <cidrs>', 'CIDRs serviceTask may never connect to, comma-separated (default $WFX_HTTP_DENY)', parseDeny)
    .option('--http-allow <cidrs>', 'CIDRs serviceTask may connect to though refused by default: own port, link-local (default $WFX_HTTP_ALLOW)', parseAllow)
    .addOption(new Option('--child').hideHelp())
    .addHelpText('after', '\nExamples:\n  $ wfx daemon start\n  $ wfx daemon start --port 0 --json\n  $ wfx daemon start --foreground --flows flows')
    .action(async (opts: StartOptions, cmd: Command) => {
      if (opts.child) return runChild(ctx, cmd, opts);
      if (opts.foreground) return runForeground(ctx, cmd, opts);
      return startInBackground(ctx, cmd, opts);
    });

  daemon
    .command('stop')
    .description('stop the daemon gracefully (finishes in-flight work, checkpoints)')
    .addHelpText('after', '\nExample:\n  $ wfx daemon stop')
    .action(async (_opts: unknown, cmd: Command) => stop(ctx, cmd));

  daemon
    .command('status')
    .description('whether the daemon runs, where it listens, and its health (exit 5 when not running)')
    .addHelpText('after', '\nExample:\n  $ wfx daemon status --json')
    .action(async (_opts: unknown, cmd: Command) => status(ctx, cmd));

  daemon
    .command('check')
    .description('check a stopped data directory without changing it: every damaged or missing file, with offsets (exit 1 when any)')
    .option('--accept-loss', 'when the only damage is in the last journal segment, cut it there (saying what is lost), then check again')
    .addHelpText('after', '\nExamples:\n  $ wfx daemon check\n  $ wfx daemon check --data-dir /srv/wfx --json')
    .action(async (opts: { acceptLoss?: boolean }, cmd: Command) => check(ctx, cmd, opts.acceptLoss === true));

  daemon
    .command('backup')
    .argument('<dir>', "where the copy goes: a directory that does not exist yet, or an empty one, on the daemon's host")
    .description('copy the running daemon\'s data directory, consistently, while it serves (needs a system admin key)')
    .addHelpText('after', '\nExamples:\n  $ wfx daemon backup /backups/wfx-2026-01-31\n  $ wfx daemon backup ./wfx-copy --json')
    .action(async (dir: string, _opts: unknown, cmd: Command) => backup(ctx, cmd, dir));
}

/**
 * `wfx daemon check`: the findings of checkDataDir, one a line (or JSON); exit 1 when there are
 * any. With `acceptLoss`, a damaged tail of the last segment is cut first (cutDamagedTail).
 */
async function check(ctx: CliContext, cmd: Command, acceptLoss: boolean): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const { checkDataDir, cutDamagedTail } = await import('../../daemon/check.js');
  let findings = await checkDataDir(dataDir);
  const cut = acceptLoss && findings.length > 0 ? await cutDamagedTail(dataDir, findings) : null;
  if (cut) {
    const kept = cut.lastKeptSeq === null ? 'none of its entries kept' : `entries after ${cut.lastKeptSeq} lost`;
    ctx.stderr.write(`cut ${cut.file} at byte ${cut.offset}: ${cut.bytes} bytes, ${kept}\n`);
    findings = await checkDataDir(dataDir);
  }
  if (g.json) printJson(ctx, { dataDir, ok: findings.length === 0, findings, ...(cut && { cut }) });
  else if (findings.length === 0) ctx.stdout.write(`${dataDir}: no problems found\n`);
  else {
    for (const f of findings) ctx.stdout.write(`${f.code}: ${f.file}${f.offset === undefined ? '' : ` at byte ${f.offset}`}: ${f.message}\n`);
    ctx.stdout.write(`${findings.length} problem${findings.length === 1 ? '' : 's'} found in ${dataDir}; see docs/operations.md, Checking a data directory\n`);
  }
  if (findings.length > 0) ctx.exitCode = EXIT.FAILED;
}

/** What POST /admin/backup answers (BackupReport on the wire). */
interface BackupAnswer {
  readonly directory: string;
  readonly snapshotSeq: number;
  readonly lastSeq: number;
  readonly files: number;
  readonly bytes: number;
}

/**
 * `wfx daemon backup DIR`: asks the daemon (over the API, as every command) to copy its data
 * directory into DIR, resolved against the CLI's working directory: the daemon writes it.
 */
async function backup(ctx: CliContext, cmd: Command, dir: string): Promise<void> {
  const directory = resolve(ctx.cwd, dir);
  const res = await (await clientFor(ctx, cmd)).request<BackupAnswer>('POST', '/admin/backup', { directory });
  if (globals(cmd).json) printJson(ctx, res);
  else ctx.stdout.write(`backed up to ${res.directory}: journal entries up to ${res.lastSeq} (snapshot at ${res.snapshotSeq}), ${res.files} files, ${res.bytes} bytes\n`);
}

/** commander's parser of a `--port` value: 0 to 65535, else a usage error (exit 2). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

/** A --max-json-depth value: a whole number from 1 to 10,000 (deeper would overflow what recurses over the data). */
export function parseDepth(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 10_000) throw new InvalidArgumentError('must be a whole number from 1 to 10000');
  return n;
}

/** `--webhook-replay-window`: a duration (72h, 3d, PT72H) in milliseconds. */
export function parseReplayWindow(value: string): number {
  try {
    const ms = parseDuration(value);
    if (ms > 0) return ms;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError('must be a positive duration, e.g. 72h or 3d');
}

/** `--http-deny`/`--http-allow`: a comma-separated list of CIDRs, checked, kept as given. */
function parseCidrs(value: string, what: string): string {
  try {
    parseCidrList(value, what);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return value;
}
const parseDeny = (value: string): string => parseCidrs(value, '--http-deny');
const parseAllow = (value: string): string => parseCidrs(value, '--http-allow');

/**
 * The network policy and replay window options of `daemon start` and `dev`: a flag, else its
 * environment variable (WFX_HTTP_DENY, WFX_HTTP_ALLOW). Throws USAGE_ERROR on a malformed CIDR.
 */
export function safetyOptions(ctx: CliContext, opts: { webhookReplayWindow?: number; httpDeny?: string; httpAllow?: string }): Pick<DaemonOptions, 'webhookReplayWindowMs' | 'httpDeny' | 'httpAllow'> {
  return {
    webhookReplayWindowMs: opts.webhookReplayWindow,
    httpDeny: parseCidrList(opts.httpDeny ?? ctx.env.WFX_HTTP_DENY, opts.httpDeny === undefined ? 'WFX_HTTP_DENY' : '--http-deny'),
    httpAllow: parseCidrList(opts.httpAllow ?? ctx.env.WFX_HTTP_ALLOW, opts.httpAllow === undefined ? 'WFX_HTTP_ALLOW' : '--http-allow'),
  };
}

function daemonOptions(ctx: CliContext, cmd: Command, opts: StartOptions, foreground: boolean) {
  if ((opts.oidcIssuer === undefined) !== (opts.oidcAudience === undefined)) {
    throw new WfxError('USAGE_ERROR', '--oidc-issuer and --oidc-audience go together');
  }
  return {
    oidc: opts.oidcIssuer === undefined ? undefined : { issuer: opts.oidcIssuer, audience: opts.oidcAudience!, orgClaim: opts.oidcOrgClaim },
    dataDir: dataDirOf(ctx, globals(cmd)),
    host: opts.host,
    port: opts.port,
    foreground,
    retentionMs: opts.retention === undefined ? undefined : opts.retention * 24 * 60 * 60 * 1000,
    flowsDir: opts.flows === undefined ? undefined : resolve(ctx.cwd, opts.flows),
    maxJsonDepth: opts.maxJsonDepth,
    ...safetyOptions(ctx, opts),
  };
}

/**
 * The young generation's size (32 MiB semi-spaces) trades throughput for tail latency: a
 * scavenge pauses every request in flight, and its pause grows with the young generation
 * (median 1.3 ms at 8 MiB, 4.3 at 32, 7.5 at 64 under load), while a smaller one costs the
 * engine executions/s (8 MiB: -12 %). See docs/performance.md. V8 sizes its heap when the
 * process starts (`v8.setFlagsFromString` later changes nothing), so only the background daemon,
 * which gets it on its command line, has it; a foreground one (`wfx dev`, `--foreground`) runs
 * with Node's default (16 MiB) unless NODE_OPTIONS sets it.
 */
const DAEMON_V8_FLAGS = ['--max-semi-space-size=32'];

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
 * restart faster and steadier (measured in docs/performance.md, Restart).
 *
 * The size is also a floor for the limits V8 sets after each full GC, so such a daemon's heap may
 * grow to it before its old generation is collected: at most 3 times its snapshot, where V8
 * alone, under load, let the old generation reach ~4 times what was live.
 */
export function daemonV8Flags(snapshotBytes: number): string[] {
  if (snapshotBytes < LARGE_SNAPSHOT) return [...DAEMON_V8_FLAGS];
  return [...DAEMON_V8_FLAGS, `--initial-old-space-size=${Math.ceil((3 * snapshotBytes) / 2 ** 20)}`];
}

/** Loads the daemon's code, only for the commands that run one. */
async function loadDaemon() {
  return import('../../daemon/daemon.js');
}

/**
 * Starts a daemon: its data directory locked and its snapshot's read started first, so that
 * the read goes on while the daemon's code loads (src/daemon/prepare.ts).
 */
export async function launchDaemon(options: DaemonOptions) {
  const { prepareDataDir } = await import('../../daemon/prepare.js');
  const prepared = await prepareDataDir(options.dataDir);
  const { startDaemon } = await loadDaemon();
  return startDaemon(options, prepared);
}

/** Runs the daemon until SIGINT/SIGTERM. */
async function runForeground(ctx: CliContext, cmd: Command, opts: StartOptions): Promise<void> {
  const running = await launchDaemon(daemonOptions(ctx, cmd, opts, true));
  const onSignal = (): void => void running.stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  if (globals(cmd).json) printJson(ctx, running.info);
  else {
    ctx.stdout.write(
      `wfx daemon listening on ${running.info.url}\n` +
        `admin credential: ${dataDirPaths(running.info.dataDir).bootstrapKey}\n` +
        'press Ctrl-C to stop\n',
    );
  }
  try {
    await running.stopped;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** The background daemon: reports readiness (or its start error) to the starter over IPC. */
async function runChild(ctx: CliContext, cmd: Command, opts: StartOptions): Promise<void> {
  const send = (msg: ChildMessage): void => {
    if (process.send) process.send(msg);
  };
  const running = await launchDaemon(daemonOptions(ctx, cmd, opts, false)).catch((err: unknown) => {
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

async function startInBackground(ctx: CliContext, cmd: Command, opts: StartOptions): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const { ensurePrivateDir } = await import('../../daemon/store/fs-util.js');
  const { snapshotPathIn } = await import('../../daemon/store/snapshot-file.js');
  const { dataDirError } = await import('../../daemon/start-errors.js');
  const paths = dataDirPaths(dataDir);
  const snapshotBytes = await stat(snapshotPathIn(dataDir)).then((st) => st.size, () => 0);
  // Whatever the daemon prints outside its structured log (a crash) lands here.
  const outFile = join(paths.logs, 'daemon.out');
  let out: number;
  try {
    await ensurePrivateDir(paths.logs);
    out = openSync(outFile, 'a', 0o600);
  } catch (err) {
    throw dataDirError(err, dataDir);
  }
  const args = [ctx.binPath, 'daemon', 'start', '--child', '--data-dir', dataDir, '--port', String(opts.port), '--host', opts.host];
  if (opts.retention !== undefined) args.push('--retention', String(opts.retention));
  if (opts.flows !== undefined) args.push('--flows', resolve(ctx.cwd, opts.flows));
  if (opts.oidcIssuer !== undefined) args.push('--oidc-issuer', opts.oidcIssuer);
  if (opts.oidcAudience !== undefined) args.push('--oidc-audience', opts.oidcAudience);
  if (opts.oidcOrgClaim !== undefined) args.push('--oidc-org-claim', opts.oidcOrgClaim);
  if (opts.maxJsonDepth !== undefined) args.push('--max-json-depth', String(opts.maxJsonDepth));
  if (opts.webhookReplayWindow !== undefined) args.push('--webhook-replay-window', `${opts.webhookReplayWindow}ms`);
  if (opts.httpDeny !== undefined) args.push('--http-deny', opts.httpDeny);
  if (opts.httpAllow !== undefined) args.push('--http-allow', opts.httpAllow);
  const child = spawn(process.execPath, [...daemonV8Flags(snapshotBytes), ...args], {
    cwd: ctx.cwd,
    env: ctx.env,
    detached: true,
    stdio: ['ignore', out, out, 'ipc'],
  });
  closeSync(out);

  const outcome = await new Promise<ChildMessage | { exited: number | null }>((resolve) => {
    child.once('message', (msg: ChildMessage) => resolve(msg));
    child.once('exit', (code) => resolve({ exited: code }));
    child.once('error', (err) => resolve({ error: { code: 'DAEMON_START_FAILED', message: err.message } }));
  });
  child.removeAllListeners();
  if ('ready' in outcome) {
    child.disconnect();
    child.unref();
    const info = outcome.ready;
    if (g.json) printJson(ctx, info);
    else {
      ctx.stdout.write(
        `wfx daemon started (pid ${info.pid})\n` +
          `  listening on      ${info.url}\n` +
          `  data directory    ${info.dataDir}\n` +
          `  admin credential  ${paths.bootstrapKey}\n` +
          `  log               ${paths.daemonLog}\n`,
      );
    }
    return;
  }
  if ('error' in outcome) {
    const code = outcome.error.code as ConstructorParameters<typeof WfxError>[0];
    throw new WfxError(code, outcome.error.message);
  }
  throw new WfxError('DAEMON_START_FAILED', `the daemon exited with code ${outcome.exited} before it was ready; see ${outFile} and ${paths.daemonLog}`);
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

async function stop(ctx: CliContext, cmd: Command): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const { lockOwnerPid } = await import('../../daemon/store/lock.js');
  const pid = await lockOwnerPid(dataDir);
  if (pid === null) {
    // Nothing runs: tidy a daemon.json left by a daemon that was killed.
    await unlink(dataDirPaths(dataDir).daemonJson).catch(() => undefined);
    if (g.json) printJson(ctx, { stopped: false, running: false, dataDir });
    else ctx.stdout.write(`no wfx daemon is running on ${dataDir}\n`);
    return;
  }
  process.kill(pid, 'SIGTERM');
  // Bounded wait for the process to finish its graceful stop.
  for (const start = Date.now(); Date.now() - start < STOP_TIMEOUT_MS; ) {
    if ((await lockOwnerPid(dataDir)) === null) {
      if (g.json) printJson(ctx, { stopped: true, pid, dataDir });
      else ctx.stdout.write(`wfx daemon stopped (pid ${pid})\n`);
      return;
    }
    await delay(50);
  }
  throw new WfxError('DAEMON_START_FAILED', `the daemon (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s; see ${dataDirPaths(dataDir).daemonLog}`);
}

/** What GET /health reports of damage found in history (HistoryDamageReport on the wire). */
interface HistoryDamage {
  readonly damagedRecords: number;
  readonly findings: ReadonlyArray<{ file: string; offset: number; code: string }>;
}

async function status(ctx: CliContext, cmd: Command): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const { lockOwnerPid } = await import('../../daemon/store/lock.js');
  const pid = await lockOwnerPid(dataDir);
  const info = pid === null ? null : await readDaemonInfo(dataDir);
  if (pid === null || info === null || info.pid !== pid) {
    if (g.json) printJson(ctx, { running: false, dataDir });
    else ctx.stdout.write(`no wfx daemon is running on ${dataDir}\nstart one with: wfx daemon start\n`);
    ctx.exitCode = EXIT.UNREACHABLE;
    return;
  }
  let health: { status: string; version: string; history?: HistoryDamage } | { status: 'unreachable'; error: string };
  try {
    const res = await fetch(`${info.url}/health`, { signal: AbortSignal.timeout(5000) });
    health = (await res.json()) as { status: string; version: string; history?: HistoryDamage };
  } catch (err) {
    health = { status: 'unreachable', error: (err as Error).message };
  }
  // Trigger health needs a credential that may read flows; without one the section is left out.
  const triggers = health.status === 'ok' ? await triggerHealth(ctx, cmd) : null;
  if (g.json) printJson(ctx, { running: true, ...info, health, ...(triggers && { triggers }) });
  else {
    ctx.stdout.write(
      `wfx daemon running (pid ${info.pid})\n` +
        `  url             ${info.url}\n` +
        `  health          ${health.status}\n` +
        `  version         ${info.version}\n` +
        `  started         ${info.startedAt}\n` +
        `  data directory  ${info.dataDir}\n`,
    );
    const damage = 'history' in health ? health.history : undefined;
    if (damage && damage.findings.length > 0) {
      ctx.stdout.write(`  history         ${damage.damagedRecords} damaged record${damage.damagedRecords === 1 ? '' : 's'} (restore from a backup: docs/operations.md)\n`);
      for (const f of damage.findings) ctx.stdout.write(`    ${f.code} ${f.file} at byte ${f.offset}\n`);
    }
    if (triggers) {
      const failing = triggers.filter((tr) => tr.state !== 'active').length;
      ctx.stdout.write(`  triggers        ${triggers.length}${failing ? ` (${failing} not active)` : ''}\n`);
      if (triggers.length > 0) {
        ctx.stdout.write(
          `\n${table(
            ['TRIGGER', 'FLOW', 'ENV', 'STATE', 'LAST FIRE', 'NEXT FIRE', 'LAST ERROR'],
            triggers.map((tr) => [
              tr.type === 'schedule'
                ? `schedule ${tr.cron}${tr.timezone && tr.timezone !== 'UTC' ? ` ${tr.timezone}` : ''}`
                : tr.type === 'email'
                  ? `email ${tr.connection ?? ''}`
                  : `webhook ${tr.webhook ?? ''}`,
              `${tr.flowName} v${tr.version}`,
              tr.environment,
              tr.state,
              tr.lastFire ?? '-',
              tr.nextFire ?? '-',
              tr.lastError ?? '',
            ]),
          )}`,
        );
      }
    }
  }
  if (health.status !== 'ok') ctx.exitCode = EXIT.UNREACHABLE;
}
