/**
 * The flags both commands that run a daemon here take (`wfx daemon start`, `wfx dev`), and the
 * DaemonOptions they make: one list, so the two commands cannot drift apart.
 */
import type { Command } from 'commander';
import type { DaemonOptions } from '../daemon/process/launcher.js';
import { dataDirOf, globals, type CliContext } from './context.js';
import {
  addAuditFlags,
  addConnectionFlags,
  ADVERTISE_HELP,
  auditOptions,
  BULK_RATE_HELP,
  collectLimit,
  connectionOptions,
  EXECUTION_CACHE_HELP,
  FORGET_SECRETS_HELP,
  LEASE_HELP,
  LIMIT_HELP,
  parseAdvertiseUrl,
  parseBulkRate,
  parseExecutionCache,
  parseLease,
  parsePartitions,
  PARTITIONS_HELP,
  safetyOptions,
  SECRETS_KEY_FILE_HELP,
  SECRETS_KEYRING_HELP,
  SECRETS_DIR_HELP,
  secretsOptions,
  SHARE_HELP,
  STANDBY_HELP,
  STORE_HELP,
  storeOptions,
  type AuditFlags,
  type ConnectionFlags,
  type SecretsFlags,
  type StoreFlags,
} from './daemon-options.js';
import { addOidcFlags, type OidcFlags } from './oidc-options.js';
import { addTracingFlags, type TracingFlags } from './tracing-options.js';

/** The flags `daemon start` and `dev` share, as commander parses them. */
export interface RunFlags extends StoreFlags, SecretsFlags, ConnectionFlags, AuditFlags, OidcFlags, TracingFlags {
  readonly port: number;
  readonly host: string;
  readonly maxJsonDepth?: number;
  /** Bytes (parsed from megabytes). */
  readonly maxFileSize?: number;
  readonly webhookReplayWindow?: number;
  readonly httpDeny?: string;
  readonly httpAllow?: string;
  /** `--limit NAME=VALUE` values, checked already (limitsOf). */
  readonly limit?: readonly string[];
  readonly bulkRate?: number;
  readonly executionCache?: number;
}

/**
 * Adds the flags `daemon start` and `dev` share after those each words its own way: the
 * execution limits, the store and its sharing, the secrets keys, then the connections, the audit
 * trail, OIDC and tracing, in that order (their help's).
 */
export function addRunFlags(command: Command): Command {
  command
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
    .option('--secrets-dir <dir>', SECRETS_DIR_HELP)
    .option('--forget-secrets-without-key', FORGET_SECRETS_HELP);
  return addTracingFlags(addOidcFlags(addAuditFlags(addConnectionFlags(command))));
}

/**
 * The DaemonOptions the shared flags make (OIDC and tracing aside: each command reads those
 * where it always has). Throws USAGE_ERROR as the options it is made of do.
 */
export function runOptions(ctx: CliContext, cmd: Command, opts: RunFlags): DaemonOptions {
  return {
    dataDir: dataDirOf(ctx, globals(cmd)),
    host: opts.host,
    port: opts.port,
    maxJsonDepth: opts.maxJsonDepth,
    maxFileBytes: opts.maxFileSize,
    ...safetyOptions(ctx, opts),
    ...storeOptions(ctx, opts),
    ...secretsOptions(ctx, opts),
    ...connectionOptions(opts),
    ...auditOptions(opts),
  };
}
