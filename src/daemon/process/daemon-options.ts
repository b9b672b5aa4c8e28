/**
 * What a daemon is started with (startDaemon): the options of `wfx daemon start` and `wfx dev`,
 * once parsed, and what tests and the launcher give besides.
 */
import type { ClusterDaemon } from '../../shared/api/index.js';
import type { OidcOptions } from '../api/oidc.js';
import type { OidcClientOptions } from '../api/console/oidc-login.js';
import type { ExecutionLimits } from '../engine/limits.js';
import type { TracingOptions } from '../observe/tracing-setup.js';
import type { StoreChoice } from './open-store.js';
import type { WfxError } from '../../shared/errors.js';
import type { SecretsKeyOptions } from '../secrets/open-secrets.js';
import type { Environment } from '../state/state.js';

/** The options of a daemon (DaemonOptions in launcher.ts for the CLI). */
export interface DaemonOptions extends Omit<StoreChoice, 'dataDir'> {
  readonly dataDir: string;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 7878; 0 picks a free port. */
  readonly port?: number;
  /** Called just before the daemon listens: frees its port of the standby's listener (rejoin.ts). */
  readonly beforeListen?: () => Promise<void>;
  /**
   * Told as a stop that a restart follows begins (its store failed; a restart to take partition
   * 0), once the daemon stopped listening: the standby's listener takes the port at once
   * (rejoin.ts) while the requests under way end.
   */
  readonly leaving?: (why: WfxError) => void;
  /** On a database: the daemons on it (GET /admin/cluster, rejoin.ts). */
  readonly cluster?: () => Promise<ClusterDaemon[]>;
  /** Also log readable lines to stdout. */
  readonly foreground?: boolean;
  /** Finished executions and their logs older than this are pruned (default 7 days). */
  readonly retentionMs?: number;
  /** Audit records older than this are swept, a whole day at a time (`--audit-retention`; default 90 days). */
  readonly auditRetentionMs?: number;
  /** Checkpoint at least this often when anything changed (default 5 minutes). */
  readonly checkpointIntervalMs?: number;
  /** Checkpoint after this many journal entries (default 50,000). */
  readonly checkpointEvery?: number;
  readonly logLevel?: string;
  /** Largest request body in bytes (default 1 MiB). */
  readonly bodyLimit?: number;
  /** How deep untrusted JSON may nest (default 64): bodies, payloads, work results, variables (json-shape.ts). */
  readonly maxJsonDepth?: number;
  /** The largest file the file store takes, in bytes (default DEFAULT_MAX_FILE_BYTES). */
  readonly maxFileBytes?: number;
  /** A directory of flow files to validate and publish (organization default) at start. */
  readonly flowsDir?: string;
  /** The environment `flowsDir` is published to (default PRODUCTION). */
  readonly flowsEnvironment?: Environment;
  /** Accept bearer JWTs from this OIDC issuer (SPEC.md section 6). */
  readonly oidc?: OidcOptions;
  /** The console's OIDC client at `oidc`'s issuer (sign-in through /auth/callback); needs `oidc`. */
  readonly oidcClient?: Omit<OidcClientOptions, 'issuer'>;
  /** Where browsers and webhook senders reach the daemon (`--public-url`, an origin); default: as each request names it. */
  readonly publicUrl?: string;
  /** A webhook delivery's event id (and body hash) makes a later one a duplicate this long (default 72 hours). */
  readonly webhookReplayWindowMs?: number;
  /** CIDRs serviceTask calls may never connect to (outbound/network-policy.ts); wins over `httpAllow`. */
  readonly httpDeny?: readonly string[];
  /** CIDRs serviceTask calls may connect to though a built-in rule refuses them (own listener, link-local). */
  readonly httpAllow?: readonly string[];
  /** What one execution, tree and organization may hold (engine/limits.ts; `--limit NAME=VALUE`); the rest take their defaults. */
  readonly limits?: Partial<ExecutionLimits>;
  /** Executions per second the bulk operations apply, all together (`--bulk-rate`; default engine/bulk/runner.ts's). */
  readonly bulkRate?: number;
  /**
   * Live executions kept in memory at most, on the JSON store (`--execution-cache`; default
   * DEFAULT_EXECUTION_CACHE): the others stay in their segments, read back when touched.
   */
  readonly executionCache?: number;
  /** Where the keys that encrypt stored secrets are: default `<data-dir>/secrets.key`, made on first start. */
  readonly secretsKey?: SecretsKeyOptions;
  /** A directory of mounted secret files backing `{secret.NAME}` of organization default (engine/options.ts). */
  readonly secretsDir?: string;
  /** Connections served at once (default: from the open-files limit, see api/open-files.ts). */
  readonly maxConnections?: number;
  /** ms a connection has to send a request's headers (default DEFAULT_HEADERS_TIMEOUT_MS). */
  readonly headersTimeoutMs?: number;
  /** Export OpenTelemetry traces over OTLP/HTTP (`--otlp-endpoint`); absent: tracing is off and costs nothing. */
  readonly tracing?: TracingOptions;
  /** GET /metrics needs no credential (`--metrics-open`): refused unless `host` is a loopback address. */
  readonly metricsOpen?: boolean;
  /** A file holding the token that reads GET /metrics as `Authorization: Bearer` (`--metrics-token-file`). */
  readonly metricsTokenFile?: string;
}
