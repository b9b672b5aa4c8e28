/* The parts and settings the daemon's HTTP app is built from (server.ts, buildServer). */
import type { ScheduleBackfill } from './routes/schedules.js';
import type { FastifyBaseLogger } from 'fastify';
import type { ClusterDaemon, EmailConnectionState, StoreHealth } from '../../shared/api/index.js';
import type { AiRunner } from '../ai/types.js';
import type { Engine } from '../engine/engine.js';
import type { FileStore } from '../files/file-store.js';
import type { FlowChecker } from '../flows/check.js';
import type { CoverageBoard } from '../flows/coverage-board.js';
import type { DaemonMetrics } from '../observe/metrics.js';
import type { BackupReport } from '../ops/backup.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { AuditTrail } from '../store/audit-trail.js';
import type { HistoryDamageReport } from '../store/history-store.js';
import type { DurableStore } from '../store/store.js';
import type { TriggerHealth } from '../triggers/health.js';
import type { WebhookReceiver } from '../triggers/webhooks.js';
import type { AccessLogEntry, BearerVerifier } from './auth.js';
import type { SharedServing } from './cluster-port.js';
import type { ConnectionLimits } from './connections.js';
import type { OidcLogin } from './console/oidc-login.js';
import type { SessionStore } from './console/sessions.js';
import type { MetricsAccess } from './metrics-route.js';

export interface ServerOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly engine: Engine;
  /** The audit trail every change made through the API is recorded in (absent: none recorded, no GET /admin/audit). */
  readonly audit?: AuditTrail;
  /** Sharing a database's partitions: requests another daemon serves are passed on to it. */
  readonly sharing?: SharedServing;
  /** Webhook deliveries (POST /webhook/receive/{token}). */
  readonly webhooks: WebhookReceiver;
  readonly logger?: FastifyBaseLogger;
  /** Writes the access log (see createDaemonLogger); without it, through `logger`. */
  readonly accessLog?: (entry: AccessLogEntry) => void;
  /** Largest accepted request body in bytes (buildServer sets a default when left out). */
  readonly bodyLimit?: number;
  /** How deep a JSON request body may nest objects and arrays (default DEFAULT_MAX_JSON_DEPTH); deeper is 400 VALIDATION_ERROR. */
  readonly maxJsonDepth?: number;
  /** Verifies bearer tokens, when an OIDC issuer is configured. */
  readonly bearer?: BearerVerifier;
  /** Seconds between SSE heartbeats (default 15). */
  readonly heartbeatSeconds?: number;
  /** The clock (rate limits, key expiry); tests pass their own. */
  readonly now?: () => Date;
  /** Health of the schedule and email triggers (GET /admin/triggers); none without those services. */
  readonly triggerHealth?: () => readonly TriggerHealth[];
  /** The scheduler a schedule's backfill is asked of (absent: backfills are refused). */
  readonly scheduler?: ScheduleBackfill;
  /** Each email connection's watch (GET /admin/email-connections `state`); absent without it. */
  readonly emailStates?: (connectionId: string) => EmailConnectionState;
  /** Damage found in history (GET /health's `history`); left out without it. */
  readonly historyDamage?: () => HistoryDamageReport;
  /** GET /health's `store`: what the state is kept in, the lease on it. */
  readonly storeHealth?: () => StoreHealth;
  /** Takes a backup of the data directory (POST /admin/backup); the route is absent without it. */
  readonly backup?: (directory: string) => Promise<BackupReport>;
  /** The daemons on this daemon's database (GET /admin/cluster); the route is absent without it (the JSON store). */
  readonly cluster?: () => Promise<ClusterDaemon[]>;
  /** Carries out model calls (POST /admin/ai-providers/{name}/test); that route answers SERVICE_UNAVAILABLE without it. */
  readonly ai?: AiRunner;
  /** The file store (/files); those routes are absent without it. */
  readonly files?: FileStore;
  /** Checks flows to publish (the daemon's: off its event loop); without it, in the request's turn. */
  readonly flowChecker?: FlowChecker;
  /** The flows' test coverage the console draws (the daemon's, which `wfx dev --test` also fills); one of its own when left out. */
  readonly coverage?: CoverageBoard;
  /** Where browsers and webhook senders reach this daemon (`--public-url`): console links, OIDC redirects, webhook URLs; left out, as each request names it. */
  readonly publicUrl?: string;
  /**
   * The console's sessions and sign-in (a store of their own when left out), and where its built
   * files are (tests; default the build's dist/console/, console/assets.ts).
   */
  readonly console?: { readonly sessions?: SessionStore; readonly login?: OidcLogin; readonly dir?: string };
  /** Timeouts (defaults for those left out) and the cap on connections (none without `maxConnections`). */
  readonly connections?: Partial<ConnectionLimits>;
  /** The daemon's metrics (GET /metrics, every route timed) and who besides a system admin reads them; absent: no /metrics. */
  readonly metrics?: { readonly of: DaemonMetrics; readonly access?: MetricsAccess };
}
