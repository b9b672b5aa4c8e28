import { InvalidArgumentError, type Command } from 'commander';
import { parseCidrList, parseLimit, type DaemonOptions, type ExecutionLimits } from '../daemon/process/launcher.js';
import { parseDuration } from '../shared/duration.js';
import { WfxError } from '../shared/errors.js';
import { checkStoreUrl } from '../shared/store-url.js';
import { resolve } from 'node:path';
import type { CliContext } from './context.js';

// The option parsers of the commands that run a daemon (`wfx daemon start`, `wfx dev`).

/** commander's parser of a `--port` value: 0 to 65535, else a usage error (exit 2). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('must be a port number from 0 to 65535');
  return n;
}

/** A `--retention` value: a positive number, else a usage error. */
export function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

/** A --max-json-depth value: a whole number from 1 to 10,000 (deeper would overflow what recurses over the data). */
export function parseDepth(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 10_000)
    throw new InvalidArgumentError('must be a whole number from 1 to 10000');
  return n;
}

/** `--max-file-size`: megabytes (MiB, fractions allowed) as bytes, from 1 KiB to 4 GiB. */
export function parseMegabytes(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n * 1024 < 1 || n > 4096)
    throw new InvalidArgumentError('must be a number of megabytes from 0.001 to 4096');
  return Math.floor(n * 1024 * 1024);
}

/** `--max-file-size`'s help, shared by `daemon start` and `dev`. */
export const MAX_FILE_SIZE_HELP = 'the largest file the file store takes, in megabytes (default 25)';

/**
 * A duration flag's value (72h, 3d, PT72H) in milliseconds when `fits` takes it; otherwise (or
 * unreadable) a usage error saying what `expected`.
 */
function parseDurationFlag(value: string, fits: (ms: number) => boolean, expected: string): number {
  try {
    const ms = parseDuration(value);
    if (fits(ms)) return ms;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError(expected);
}

/** `--webhook-replay-window`: a duration (72h, 3d, PT72H) in milliseconds. */
export function parseReplayWindow(value: string): number {
  return parseDurationFlag(value, (ms) => ms > 0, 'must be a positive duration, e.g. 72h or 3d');
}

/** `--webhook-replay-window`'s help, shared by `daemon start` and `dev`. */
export const REPLAY_WINDOW_HELP = 'how long a webhook delivery id makes a replay a duplicate (default 72h)';

/** `--lease`: how long a daemon's lease on its database lasts unrenewed, 1s to 10m. */
export function parseLease(value: string): number {
  return parseDurationFlag(value, (ms) => ms >= 1000 && ms <= 600_000, 'must be a duration from 1s to 10m, e.g. 10s');
}

/** `--max-connections`: connections the daemon serves at once, a whole number from 1 to 1,000,000. */
export function parseMaxConnections(value: string): number {
  const n = Number(value);
  if (/^\d+$/.test(value) && n >= 1 && n <= 1_000_000) return n;
  throw new InvalidArgumentError('must be a whole number from 1 to 1000000');
}

/** `--headers-timeout`: how long a connection has to send a request's headers, as a duration. */
export function parseHeadersTimeout(value: string): number {
  return parseDurationFlag(value, (ms) => ms >= 100 && ms <= 600_000, 'must be a duration from 100ms to 10m, e.g. 5s');
}

/** The connection flags of `daemon start` and `dev`, as commander parses them. */
export interface ConnectionFlags {
  readonly maxConnections?: number;
  /** Milliseconds (parsed from a duration). */
  readonly headersTimeout?: number;
  /** `--metrics-open`: GET /metrics needs no credential (a loopback-only daemon). */
  readonly metricsOpen?: boolean;
  /** `--metrics-token-file`: the scraper token's file. */
  readonly metricsTokenFile?: string;
}

/** `--metrics-open`'s and `--metrics-token-file`'s help. */
const METRICS_OPEN_HELP =
  'serve GET /metrics without a credential (only with --host on a loopback address, as by default)';
const METRICS_TOKEN_HELP =
  "a file holding a token that reads GET /metrics, sent as 'Authorization: Bearer <token>' (a Prometheus scraper's credentials_file)";

/** Adds `--max-connections`, `--headers-timeout` and who reads GET /metrics to a command that runs a daemon. */
export function addConnectionFlags(command: Command): Command {
  return command
    .option(
      '--max-connections <n>',
      'connections served at once; a few more are answered TOO_MANY_CONNECTIONS, the rest reset (default: from the open-files limit)',
      parseMaxConnections,
    )
    .option(
      '--headers-timeout <duration>',
      'how long a connection has to send its request headers before it is closed (default 5s)',
      parseHeadersTimeout,
    )
    .option('--metrics-open', METRICS_OPEN_HELP)
    .option('--metrics-token-file <file>', METRICS_TOKEN_HELP);
}

/** The DaemonOptions of the connection flags. */
export function connectionOptions(
  opts: ConnectionFlags,
): Pick<DaemonOptions, 'maxConnections' | 'headersTimeoutMs' | 'metricsOpen' | 'metricsTokenFile'> {
  return {
    maxConnections: opts.maxConnections,
    headersTimeoutMs: opts.headersTimeout,
    ...(opts.metricsOpen && { metricsOpen: true }),
    ...(opts.metricsTokenFile !== undefined && { metricsTokenFile: resolve(opts.metricsTokenFile) }),
  };
}

/** The connection flags again, for the command line of a daemon started in the background. */
export function connectionArgs(opts: ConnectionFlags): string[] {
  return [
    ...(opts.maxConnections === undefined ? [] : ['--max-connections', String(opts.maxConnections)]),
    ...(opts.headersTimeout === undefined ? [] : ['--headers-timeout', `${opts.headersTimeout}ms`]),
    ...(opts.metricsOpen ? ['--metrics-open'] : []),
    ...(opts.metricsTokenFile === undefined ? [] : ['--metrics-token-file', resolve(opts.metricsTokenFile)]),
  ];
}

/** `--partitions`: how many partitions a new database is cut into, 1 to 1024. */
export function parsePartitions(value: string): number {
  const n = Number(value);
  if (/^\d+$/.test(value) && n >= 1 && n <= 1024) return n;
  throw new InvalidArgumentError('must be a whole number from 1 to 1024');
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
/** `--http-deny`'s parser. */
export const parseDeny = (value: string): string => parseCidrs(value, '--http-deny');
/** `--http-allow`'s parser. */
export const parseAllow = (value: string): string => parseCidrs(value, '--http-allow');

/** `--bulk-rate`: executions per second the bulk operations apply together, 1 to 100,000. */
export function parseBulkRate(value: string): number {
  const n = Number(value);
  if (/^\d+$/.test(value) && n >= 1 && n <= 100_000) return n;
  throw new InvalidArgumentError('must be a whole number from 1 to 100000');
}

/** `--execution-cache`: live executions kept in memory at most, 0 to 100,000,000. */
export function parseExecutionCache(value: string): number {
  const n = Number(value);
  if (/^\d+$/.test(value) && n <= 100_000_000) return n;
  throw new InvalidArgumentError('must be a whole number from 0 to 100000000');
}

/** `--execution-cache`'s help, shared by `daemon start` and `dev`. */
export const EXECUTION_CACHE_HELP =
  'live executions kept in memory at most; the others wait on disk and are read back when touched (default 10000; docs/operations.md)';

/** `--bulk-rate`'s help, shared by `daemon start` and `dev`. */
export const BULK_RATE_HELP =
  'executions per second the bulk operations (wfx instances cancel --query ...) apply, all together (default 500; docs/operations.md)';

/** `--limit`'s help, shared by `daemon start` and `dev`. */
export const LIMIT_HELP =
  'change one of what an execution, tree or organization may hold, NAME=VALUE, repeatable: variables-size, log-size, branches, children, tree-executions, tree-created, loop-iterations, live-executions, org-starts-per-second, bulk-operations, bulk-operations-total, bulk-executions (docs/operations.md, Limits)';

/** `--limit`'s parser: each value checked as it comes (a usage error names what is wrong), all kept in order. */
export function collectLimit(value: string, previous: readonly string[] = []): string[] {
  try {
    parseLimit(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return [...previous, value];
}

/** The limits `--limit` values set (a later value of a name wins), or undefined for none. */
export function limitsOf(values: readonly string[] | undefined): Partial<ExecutionLimits> | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const limits: Partial<Record<keyof ExecutionLimits, number>> = {};
  for (const value of values) {
    const { key, value: n } = parseLimit(value);
    limits[key] = n;
  }
  return limits;
}

/**
 * The network policy, replay window, limits and bulk rate options of `daemon start` and `dev`: a flag,
 * else its environment variable (WFX_HTTP_DENY, WFX_HTTP_ALLOW). Throws USAGE_ERROR on a
 * malformed CIDR.
 */
export function safetyOptions(
  ctx: CliContext,
  opts: {
    webhookReplayWindow?: number;
    httpDeny?: string;
    httpAllow?: string;
    limit?: readonly string[];
    bulkRate?: number;
    executionCache?: number;
  },
): Pick<DaemonOptions, 'webhookReplayWindowMs' | 'httpDeny' | 'httpAllow' | 'limits' | 'bulkRate' | 'executionCache'> {
  return {
    limits: limitsOf(opts.limit),
    bulkRate: opts.bulkRate,
    executionCache: opts.executionCache,
    webhookReplayWindowMs: opts.webhookReplayWindow,
    httpDeny: parseCidrList(
      opts.httpDeny ?? ctx.env.WFX_HTTP_DENY,
      opts.httpDeny === undefined ? 'WFX_HTTP_DENY' : '--http-deny',
    ),
    httpAllow: parseCidrList(
      opts.httpAllow ?? ctx.env.WFX_HTTP_ALLOW,
      opts.httpAllow === undefined ? 'WFX_HTTP_ALLOW' : '--http-allow',
    ),
  };
}

/** `--store`'s and `--standby`'s help, shared by `daemon start` and `dev`. */
export const STORE_HELP =
  'keep state in PostgreSQL instead of the data directory: postgres://user@host:5432/db (default $WFX_STORE)';
export const STANDBY_HELP = 'with --store: wait while another daemon serves the database, and take over when it stops';
export const SHARE_HELP =
  "with --store: share the database's executions with its other daemons started with --share, each serving a part of them";
export const LEASE_HELP =
  "with --store: how long this daemon's lease on the database lasts unrenewed: how soon a standby takes over after it dies (default 10s)";
export const PARTITIONS_HELP =
  'with --store: how many partitions a database not used before is cut into, fixed from then on; at most one fewer daemons serve executions (default 16)';
export const ADVERTISE_HELP =
  "with --store: the URL the database's other daemons reach this one at, to forward requests while it serves (default: the address it listens on; with --host 0.0.0.0, this host's name)";

/** `--advertise-url`: an http(s) URL with a host, no credentials, path or query. */
export function parseAdvertiseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be a URL, e.g. http://wfx-1.internal:7878');
  }
  if (!/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.pathname !== '/')
    throw new InvalidArgumentError('must be http(s)://host:port, with no credentials, path or query');
  return url.origin;
}

/** The store flags of `daemon start` and `dev`, as commander parses them. */
export interface StoreFlags {
  readonly store?: string;
  readonly standby?: boolean;
  readonly share?: boolean;
  readonly lease?: number;
  readonly partitions?: number;
  readonly advertiseUrl?: string;
}

/**
 * The store options of `daemon start` and `dev`: `--store`, else WFX_STORE (which keeps a password
 * off the command line, where `ps` shows it), `--standby`, `--share`, `--lease`, `--partitions` and `--advertise-url`. Throws
 * USAGE_ERROR for a malformed URL, or one of the others without a store.
 */
export function storeOptions(
  ctx: CliContext,
  opts: StoreFlags,
): Pick<DaemonOptions, 'store' | 'standby' | 'share' | 'leaseMs' | 'partitions' | 'advertiseUrl'> {
  const store = opts.store ?? (ctx.env.WFX_STORE || undefined);
  if (store !== undefined) checkStoreUrl(store);
  if (opts.standby && store === undefined)
    throw new WfxError('USAGE_ERROR', '--standby waits for a database another daemon serves: give --store too');
  if (opts.share && store === undefined)
    throw new WfxError('USAGE_ERROR', "--share shares a database's executions: give --store too");
  if (opts.share && opts.standby)
    throw new WfxError('USAGE_ERROR', '--share and --standby exclude each other: a sharing daemon serves at once');
  if (opts.lease !== undefined && store === undefined)
    throw new WfxError('USAGE_ERROR', '--lease is the lease on a database: give --store too');
  if (opts.partitions !== undefined && store === undefined)
    throw new WfxError('USAGE_ERROR', '--partitions cuts a database into partitions: give --store too');
  if (opts.advertiseUrl !== undefined && store === undefined)
    throw new WfxError(
      'USAGE_ERROR',
      "--advertise-url is where the database's other daemons reach this one: give --store too",
    );
  return {
    store,
    standby: opts.standby === true,
    share: opts.share === true,
    leaseMs: opts.lease,
    partitions: opts.partitions,
    advertiseUrl: opts.advertiseUrl,
  };
}

/** `--secrets-key-file`'s and `--secrets-keyring`'s help, shared by `daemon start` and `dev`. */
export const SECRETS_KEY_FILE_HELP =
  'the file of the keys that encrypt stored secrets (default $WFX_SECRETS_KEY_FILE, else <data-dir>/secrets.key, made on first start); $WFX_SECRETS_KEY gives the keys themselves';
export const SECRETS_KEYRING_HELP = 'keep the keys that encrypt stored secrets in the OS keyring instead of a file';
export const SECRETS_DIR_HELP =
  'a directory of mounted secret files (Kubernetes, Docker): NAME or ENVIRONMENT/NAME backs {secret.NAME} of organization default, read at each use (default $WFX_SECRETS_DIR)';
export const FORGET_SECRETS_HELP =
  'the keys lost: start anyway, forgetting the stored secrets sealed with keys this daemon lacks (set them again)';

/** The secrets key flags of `daemon start` and `dev`, as commander parses them. */
export interface SecretsFlags {
  readonly secretsKeyFile?: string;
  readonly secretsKeyring?: boolean;
  readonly forgetSecretsWithoutKey?: boolean;
  readonly secretsDir?: string;
}

/**
 * Where the daemon's secrets keys come from: `--secrets-key-file` (else WFX_SECRETS_KEY_FILE),
 * WFX_SECRETS_KEY (the keys themselves, for containers), or `--secrets-keyring`; none: the
 * data directory's `secrets.key`. Throws USAGE_ERROR when more than one is given. And the
 * directory of mounted secret files (`--secrets-dir`, else WFX_SECRETS_DIR).
 */
export function secretsOptions(ctx: CliContext, opts: SecretsFlags): Pick<DaemonOptions, 'secretsKey' | 'secretsDir'> {
  const dir = opts.secretsDir ?? (ctx.env.WFX_SECRETS_DIR || undefined);
  return { ...keyOptions(ctx, opts), ...(dir !== undefined && { secretsDir: resolve(ctx.cwd, dir) }) };
}

function keyOptions(ctx: CliContext, opts: SecretsFlags): Pick<DaemonOptions, 'secretsKey'> {
  const file = opts.secretsKeyFile ?? (ctx.env.WFX_SECRETS_KEY_FILE || undefined);
  const text = ctx.env.WFX_SECRETS_KEY || undefined;
  const given = [file !== undefined, text !== undefined, opts.secretsKeyring === true].filter(Boolean).length;
  if (given > 1)
    throw new WfxError(
      'USAGE_ERROR',
      'give the secrets keys one way: --secrets-key-file (WFX_SECRETS_KEY_FILE), WFX_SECRETS_KEY or --secrets-keyring',
    );
  const forget = opts.forgetSecretsWithoutKey ? { forgetMissing: true } : {};
  if (file !== undefined) return { secretsKey: { file: resolve(ctx.cwd, file), ...forget } };
  if (text !== undefined) return { secretsKey: { text, ...forget } };
  if (opts.secretsKeyring) return { secretsKey: { keyring: true, ...forget } };
  return opts.forgetSecretsWithoutKey ? { secretsKey: forget } : {};
}

/** `--audit-retention`: how long audit records are kept, a duration (90d, 2160h) from 1 hour. */
export function parseAuditRetention(value: string): number {
  return parseDurationFlag(value, (ms) => ms >= 3_600_000, 'must be a duration of at least 1h, e.g. 90d');
}

/** The audit flags of `daemon start` and `dev`, as commander parses them. */
export interface AuditFlags {
  /** Milliseconds (parsed from a duration). */
  readonly auditRetention?: number;
}

/** Adds `--audit-retention` to a command that runs a daemon. */
export function addAuditFlags(command: Command): Command {
  return command.option(
    '--audit-retention <duration>',
    'how long audit records (GET /admin/audit) are kept, swept a whole day at a time (default 90d)',
    parseAuditRetention,
  );
}

/** The DaemonOptions of the audit flags. */
export function auditOptions(opts: AuditFlags): Pick<DaemonOptions, 'auditRetentionMs'> {
  return { auditRetentionMs: opts.auditRetention };
}

/** The audit flags again, for the command line of a daemon started in the background. */
export function auditArgs(opts: AuditFlags): string[] {
  return opts.auditRetention === undefined ? [] : ['--audit-retention', `${opts.auditRetention}ms`];
}
