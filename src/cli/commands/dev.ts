import { addOidcFlags, oidcOptions, type OidcFlags } from '../oidc-options.js';
import { addTracingFlags, tracingOptions, type TracingFlags } from '../tracing-options.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { launchDaemon } from '../../daemon/process/launcher.js';
import { isFlowFile } from '../../shared/flow/files.js';
import { dataDirOf, globals, type CliContext } from '../context.js';
import {
  parseDepth,
  parseMegabytes,
  parsePort,
  parseReplayWindow,
  safetyOptions,
  LEASE_HELP,
  PARTITIONS_HELP,
  ADVERTISE_HELP,
  parseAdvertiseUrl,
  parseLease,
  parsePartitions,
  STANDBY_HELP,
  SHARE_HELP,
  STORE_HELP,
  LIMIT_HELP,
  BULK_RATE_HELP,
  parseBulkRate,
  EXECUTION_CACHE_HELP,
  parseExecutionCache,
  collectLimit,
  storeOptions,
  SECRETS_KEY_FILE_HELP,
  SECRETS_KEYRING_HELP,
  FORGET_SECRETS_HELP,
  secretsOptions,
  type SecretsFlags,
  type StoreFlags,
  addAuditFlags,
  addConnectionFlags,
  auditOptions,
  connectionOptions,
  type AuditFlags,
  type ConnectionFlags,
} from '../daemon-options.js';

/**
 * `wfx dev`: the daemon in the foreground with readable logs, publishing every flow file of the
 * flows directory to DEVELOPMENT at start and again whenever one changes. A file that does not
 * validate is reported with file:line:column; the daemon keeps running.
 */
export function registerDev(program: Command, ctx: CliContext): void {
  const dev = program
    .command('dev')
    .description('run the daemon here and republish flows/ to DEVELOPMENT whenever a file changes')
    .option('--flows <dir>', 'the flow files to watch', 'flows')
    .option('--port <port>', 'port to listen on (0 picks a free one)', parsePort, 7878)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--max-json-depth <n>', 'how deep untrusted JSON may nest (default 64)', parseDepth)
    .option('--max-file-size <MiB>', 'the largest file the file store takes, in megabytes (default 25)', parseMegabytes)
    .option(
      '--webhook-replay-window <duration>',
      'how long a webhook delivery id makes a replay a duplicate (default 72h)',
      parseReplayWindow,
    )
    .option('--http-deny <cidrs>', 'CIDRs serviceTask may never connect to, comma-separated (default $WFX_HTTP_DENY)')
    .option(
      '--http-allow <cidrs>',
      'CIDRs serviceTask may connect to though refused by default: own port, link-local (default $WFX_HTTP_ALLOW)',
    )
    .option('--limit <name=value>', LIMIT_HELP, collectLimit)
    .option('--bulk-rate <n>', BULK_RATE_HELP, parseBulkRate)
    .option('--execution-cache <n>', EXECUTION_CACHE_HELP, parseExecutionCache)
    .option('--store <url>', STORE_HELP)
    .option('--standby', STANDBY_HELP)
    .option('--share', SHARE_HELP)
    .option('--lease <duration>', LEASE_HELP, parseLease)
    .option('--partitions <n>', PARTITIONS_HELP, parsePartitions)
    .option('--advertise-url <url>', ADVERTISE_HELP, parseAdvertiseUrl)
    .option('--secrets-key-file <file>', SECRETS_KEY_FILE_HELP)
    .option('--secrets-keyring', SECRETS_KEYRING_HELP)
    .option('--forget-secrets-without-key', FORGET_SECRETS_HELP)
    .addHelpText('after', '\nExamples:\n  $ wfx dev\n  $ wfx dev --flows ./workflows --port 0')
    .action(
      async (
        opts: {
          flows: string;
          port: number;
          host: string;
          webhookReplayWindow?: number;
          httpDeny?: string;
          httpAllow?: string;
          limit?: readonly string[];
          bulkRate?: number;
          executionCache?: number;
          maxJsonDepth?: number;
          maxFileSize?: number;
        } & StoreFlags &
          SecretsFlags &
          ConnectionFlags &
          AuditFlags &
          OidcFlags &
          TracingFlags,
        cmd: Command,
      ) => {
        const flowsDir = resolve(ctx.cwd, opts.flows);
        const running = await launchDaemon({
          dataDir: dataDirOf(ctx, globals(cmd)),
          host: opts.host,
          port: opts.port,
          foreground: true,
          flowsDir,
          flowsEnvironment: 'DEVELOPMENT',
          maxJsonDepth: opts.maxJsonDepth,
          maxFileBytes: opts.maxFileSize,
          ...safetyOptions(ctx, opts),
          ...storeOptions(ctx, opts),
          ...secretsOptions(ctx, opts),
          ...connectionOptions(opts),
          ...auditOptions(opts),
          ...oidcOptions(ctx, opts),
          ...tracingOptions(ctx, opts),
        });
        const { watch } = await import('chokidar');
        const watcher = watch(flowsDir, {
          ignoreInitial: true,
          // A save can come as several writes: publish once the file has been still for a moment.
          awaitWriteFinish: { stabilityThreshold: 150, pollInterval: 50 },
        });
        const publish = (file: string) => {
          if (isFlowFile(file)) void running.publishFile(file, 'DEVELOPMENT');
        };
        watcher.on('add', publish).on('change', publish);
        await new Promise<void>((resolve) => watcher.on('ready', () => resolve()));
        ctx.stdout.write(
          `wfx dev: daemon on ${running.info.url}; watching ${flowsDir} (published to DEVELOPMENT on change); Ctrl-C to stop\n`,
        );
        const stop = () => void running.stop();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        try {
          await running.stopped;
        } finally {
          await watcher.close();
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
        }
      },
    );
  addConnectionFlags(dev);
  addAuditFlags(dev);
  addOidcFlags(dev);
  addTracingFlags(dev);
}
