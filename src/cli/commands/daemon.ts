import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import {
  checkAndRepairDataDir,
  foregroundWithDaemonFlags,
  launchDaemon,
  runAsBackgroundChild,
  startInBackground,
  stopDaemon,
  type DaemonOptions,
} from '../../daemon/process/launcher.js';
import { dataDirPaths } from '../../shared/data-dir.js';
import { WfxError } from '../../shared/errors.js';
import { dataDirOf, globals, printJson, type CliContext } from '../context.js';
import {
  MAX_FILE_SIZE_HELP,
  parseAllow,
  parseDeny,
  parseDepth,
  parseMegabytes,
  parsePort,
  parsePositive,
  parseReplayWindow,
  REPLAY_WINDOW_HELP,
  storeOptions,
  secretsOptions,
  auditArgs,
  connectionArgs,
} from '../daemon-options.js';
import { addRunFlags, runOptions, type RunFlags } from '../run-flags.js';
import { EXIT } from '../exit-codes.js';
import { oidcArgs, oidcOptions } from '../oidc-options.js';
import { tracingArgs, tracingOptions } from '../tracing-options.js';
import { clientFor } from '../api.js';
import { status } from './daemon-status.js';
import { backupKeyLine, rotateSecrets, showSecrets } from './daemon-secrets.js';

interface StartOptions extends RunFlags {
  readonly foreground?: boolean;
  readonly retention?: number;
  readonly flows?: string;
  /** Internal: this process is the background daemon started by `daemon start`. */
  readonly child?: boolean;
}

/** `wfx daemon start|stop|status|check|backup`. */
export function registerDaemon(program: Command, ctx: CliContext): void {
  const daemon = program.command('daemon').description('start, stop and inspect the local wfx daemon');

  addRunFlags(
    daemon
      .command('start')
      .description('start the daemon (in the background unless --foreground)')
      .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 7878)
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--foreground', 'run in this terminal, logging readable lines, until Ctrl-C')
      .option('--retention <days>', 'keep finished executions this many days', parsePositive)
      .option(
        '--flows <dir>',
        'validate and publish the flow files of this directory at start (organization default, PRODUCTION)',
      )
      .option(
        '--max-json-depth <n>',
        'how deep untrusted JSON (request bodies, payloads, work results) may nest (default 64)',
        parseDepth,
      )
      .option('--max-file-size <MiB>', MAX_FILE_SIZE_HELP, parseMegabytes)
      .option('--webhook-replay-window <duration>', REPLAY_WINDOW_HELP, parseReplayWindow)
      .option(
        '--http-deny <cidrs>',
        'CIDRs serviceTask may never connect to, comma-separated (default $WFX_HTTP_DENY)',
        parseDeny,
      )
      .option(
        '--http-allow <cidrs>',
        'CIDRs serviceTask may connect to though refused by default: own port, link-local (default $WFX_HTTP_ALLOW)',
        parseAllow,
      ),
  )
    .addOption(new Option('--child').hideHelp())
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx daemon start\n  $ wfx daemon start --port 0 --json\n  $ wfx daemon start --foreground --flows flows',
    )
    .action(async (opts: StartOptions, cmd: Command) => {
      if (opts.child) return runAsBackgroundChild(daemonOptions(ctx, cmd, opts, false));
      if (opts.foreground) return runForeground(ctx, cmd, opts);
      return startBackground(ctx, cmd, opts);
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
    .description(
      'check a stopped data directory without changing it: every damaged or missing file, with offsets (exit 1 when any)',
    )
    .option(
      '--accept-loss',
      'when the only damage is in the last journal segment, cut it there (saying what is lost), then check again',
    )
    .option(
      '--adopt',
      'when the only finding is a missing store.manifest, write one for what the directory holds (only for a directory known to be whole), then check again',
    )
    .addHelpText('after', '\nExamples:\n  $ wfx daemon check\n  $ wfx daemon check --data-dir /srv/wfx --json')
    .action(async (opts: { acceptLoss?: boolean; adopt?: boolean }, cmd: Command) =>
      check(ctx, cmd, { acceptLoss: opts.acceptLoss === true, adopt: opts.adopt === true }),
    );

  daemon
    .command('backup')
    .argument(
      '<dir>',
      "where the copy goes: a directory that does not exist yet, or an empty one, on the daemon's host",
    )
    .description("copy the running daemon's data directory, consistently, while it serves (needs a system admin key)")
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx daemon backup /backups/wfx-2026-01-31\n  $ wfx daemon backup ./wfx-copy --json',
    )
    .action(async (dir: string, _opts: unknown, cmd: Command) => backup(ctx, cmd, dir));

  daemon
    .command('secrets')
    .description('the keys that encrypt stored secrets: where they are kept, and how many secrets each seals')
    .addHelpText('after', '\nExample:\n  $ wfx daemon secrets --json')
    .action(async (_opts: unknown, cmd: Command) => showSecrets(ctx, cmd));

  daemon
    .command('rotate-secrets-key')
    .description(
      'seal every stored secret again with a new key, added to the key file (or --key-id: one added there already)',
    )
    .option('--key-id <id>', "a key already in the key file (on a database: in every daemon's), by its id")
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx daemon rotate-secrets-key\n  $ wfx daemon rotate-secrets-key --key-id 3f9a0c1d22e4b5a6',
    )
    .action(async (opts: { keyId?: string }, cmd: Command) => rotateSecrets(ctx, cmd, opts.keyId));
}

/**
 * `wfx daemon check`: the findings of checkAndRepairDataDir, one a line (or JSON); exit 1 when there are
 * any. With `acceptLoss`, a damaged tail of the last segment is cut first (cutDamagedTail); with
 * `adopt`, a missing manifest is written (adoptDataDir).
 */
async function check(ctx: CliContext, cmd: Command, opts: { acceptLoss: boolean; adopt: boolean }): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const { findings, cut, adopted } = await checkAndRepairDataDir(dataDir, {
    ...opts,
    onCut: (loss) => {
      const kept = loss.lastKeptSeq === null ? 'none of its entries kept' : `entries after ${loss.lastKeptSeq} lost`;
      ctx.stderr.write(`cut ${loss.file} at byte ${loss.offset}: ${loss.bytes} bytes, ${kept}\n`);
    },
    onAdopt: (file) => ctx.stderr.write(`wrote ${file} for what the directory holds\n`),
  });
  if (g.json)
    printJson(ctx, { dataDir, ok: findings.length === 0, findings, ...(cut && { cut }), ...(adopted && { adopted }) });
  else if (findings.length === 0) ctx.stdout.write(`${dataDir}: no problems found\n`);
  else {
    for (const f of findings)
      ctx.stdout.write(`${f.code}: ${f.file}${f.offset === undefined ? '' : ` at byte ${f.offset}`}: ${f.message}\n`);
    ctx.stdout.write(
      `${findings.length} problem${findings.length === 1 ? '' : 's'} found in ${dataDir}; see docs/operations.md, Checking a data directory\n`,
    );
  }
  if (findings.length > 0) ctx.exitCode = EXIT.FAILED;
}

/**
 * `wfx daemon backup DIR`: asks the daemon (over the API, as every command) to copy its data
 * directory into DIR, resolved against the CLI's working directory: the daemon writes it.
 */
async function backup(ctx: CliContext, cmd: Command, dir: string): Promise<void> {
  const directory = resolve(ctx.cwd, dir);
  const res = await (await clientFor(ctx, cmd)).admin.backup(directory);
  if (globals(cmd).json) return printJson(ctx, res);
  for (const partial of res.removedPartials ?? [])
    ctx.stderr.write(`removed ${partial}: a partial copy left by a backup a crash cut\n`);
  ctx.stdout.write(
    `backed up to ${res.directory}: journal entries up to ${res.lastSeq} (snapshot at ${res.snapshotSeq}), ${res.files} files, ${res.bytes} bytes\n`,
  );
  if (res.secretsKey) ctx.stdout.write(backupKeyLine(res.secretsKey));
}

/** The DaemonOptions of `daemon start`'s options. */
function daemonOptions(ctx: CliContext, cmd: Command, opts: StartOptions, foreground: boolean): DaemonOptions {
  return {
    ...oidcOptions(ctx, opts),
    ...tracingOptions(ctx, opts),
    ...runOptions(ctx, cmd, opts),
    foreground,
    retentionMs: opts.retention === undefined ? undefined : opts.retention * 24 * 60 * 60 * 1000,
    flowsDir: opts.flows === undefined ? undefined : resolve(ctx.cwd, opts.flows),
  };
}

/** Runs the daemon until SIGINT/SIGTERM. */
async function runForeground(ctx: CliContext, cmd: Command, opts: StartOptions): Promise<void> {
  const options = daemonOptions(ctx, cmd, opts, true);
  // Its options are good: now, before anything starts, as a background daemon runs (V8's flags).
  foregroundWithDaemonFlags(ctx.binPath);
  const running = await launchDaemon(options);
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

/**
 * `wfx daemon start`: the daemon spawned in the background with this command's options (and
 * `--child`), its address printed once it serves.
 */
async function startBackground(ctx: CliContext, cmd: Command, opts: StartOptions): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const paths = dataDirPaths(dataDir);
  const args = [
    ctx.binPath,
    'daemon',
    'start',
    '--child',
    '--data-dir',
    dataDir,
    '--port',
    String(opts.port),
    '--host',
    opts.host,
  ];
  if (opts.retention !== undefined) args.push('--retention', String(opts.retention));
  if (opts.flows !== undefined) args.push('--flows', resolve(ctx.cwd, opts.flows));
  args.push(...oidcArgs(ctx, opts));
  if (opts.maxJsonDepth !== undefined) args.push('--max-json-depth', String(opts.maxJsonDepth));
  if (opts.maxFileSize !== undefined) args.push('--max-file-size', String(opts.maxFileSize / (1024 * 1024)));
  if (opts.webhookReplayWindow !== undefined) args.push('--webhook-replay-window', `${opts.webhookReplayWindow}ms`);
  if (opts.httpDeny !== undefined) args.push('--http-deny', opts.httpDeny);
  if (opts.httpAllow !== undefined) args.push('--http-allow', opts.httpAllow);
  for (const limit of opts.limit ?? []) args.push('--limit', limit);
  if (opts.bulkRate !== undefined) args.push('--bulk-rate', String(opts.bulkRate));
  if (opts.executionCache !== undefined) args.push('--execution-cache', String(opts.executionCache));
  if (opts.lease !== undefined) args.push('--lease', `${opts.lease}ms`);
  if (opts.partitions !== undefined) args.push('--partitions', String(opts.partitions));
  if (opts.share) args.push('--share');
  if (opts.advertiseUrl !== undefined) args.push('--advertise-url', opts.advertiseUrl);
  // The keys' file by its path; WFX_SECRETS_KEY goes in the child's environment, as given.
  const { secretsKey, secretsDir } = secretsOptions(ctx, opts);
  if (secretsDir !== undefined) args.push('--secrets-dir', secretsDir);
  if (secretsKey?.file !== undefined) args.push('--secrets-key-file', secretsKey.file);
  if (secretsKey?.keyring) args.push('--secrets-keyring');
  if (secretsKey?.forgetMissing) args.push('--forget-secrets-without-key');
  args.push(...connectionArgs(opts));
  args.push(...tracingArgs(opts));
  args.push(...auditArgs(opts));
  const { store, standby } = storeOptions(ctx, opts);
  // A standby serves nothing until it takes over: it runs in the foreground, under a supervisor.
  if (standby)
    throw new WfxError('USAGE_ERROR', '--standby runs with --foreground (under a supervisor such as systemd)');
  // The connection string goes in the child's environment, never on its command line (`ps`).
  const env = store === undefined ? ctx.env : { ...ctx.env, WFX_STORE: store };
  const info = await startInBackground({ dataDir, args, cwd: ctx.cwd, env });
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
}

async function stop(ctx: CliContext, cmd: Command): Promise<void> {
  const g = globals(cmd);
  const dataDir = dataDirOf(ctx, g);
  const res = await stopDaemon(dataDir);
  if (!res.stopped) {
    if (g.json) printJson(ctx, { stopped: false, running: false, dataDir });
    else ctx.stdout.write(`no wfx daemon is running on ${dataDir}\n`);
    return;
  }
  if (g.json) printJson(ctx, { stopped: true, pid: res.pid, dataDir });
  else ctx.stdout.write(`wfx daemon stopped (pid ${res.pid})\n`);
}
