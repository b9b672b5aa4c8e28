import type { FastifyBaseLogger, FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { AccessLogEntry } from '../../src/daemon/api/auth.js';
import type { Test } from 'tap';
import { Scheduler } from '../../src/daemon/triggers/schedules.js';
import { newApiKey } from '../../src/daemon/auth/api-keys.js';
import { buildServer, type ServerOptions } from '../../src/daemon/api/server.js';
import { WebhookReceiver } from '../../src/daemon/triggers/webhooks.js';
import type { ApiKey, Role } from '../../src/daemon/state/state.js';
import type { AiRunner } from '../../src/daemon/ai/types.js';
import { DaemonMetrics } from '../../src/daemon/observe/metrics.js';
import type { MetricsAccess } from '../../src/daemon/api/metrics-route.js';
import { join } from 'node:path';
import { FileAuditTrail } from '../../src/daemon/store/audit-trail.js';
import { History } from '../../src/daemon/store/history.js';
import { engineHarness, type EngineHarness, type HarnessEngineOptions, type TestClock } from './engine.js';

/** A key made for a test: its full credential and what it is. */
export interface TestKey {
  readonly apiKey: string;
  readonly keyId: string;
  readonly organization: string | null;
  readonly role: Role;
}

export interface ApiHarness extends EngineHarness {
  readonly app: FastifyInstance;
  readonly webhooks: WebhookReceiver;
  /** The audit trail the app records in (`<dir>/audit`). */
  readonly audit: FileAuditTrail;
  /** The metrics GET /metrics answers from (with the `metrics` option). */
  readonly metrics: DaemonMetrics | undefined;
  /** Makes a key directly in the store (organizations are created as needed). */
  key(role: Role, organization: string | null, extra?: Partial<ApiKey>): Promise<TestKey>;
  /** inject() with the key's X-API-Key header. */
  call(key: TestKey | null, options: InjectOptions): Promise<LightMyRequestResponse>;
}

/** An engine harness plus the HTTP app on top of it (no port: inject()). */
export async function apiHarness(
  t: Test,
  options: {
    bodyLimit?: number;
    heartbeatSeconds?: number;
    clock?: TestClock;
    ai?: AiRunner;
    engine?: HarnessEngineOptions;
    logger?: FastifyBaseLogger;
    accessLog?: (entry: AccessLogEntry) => void;
    connections?: ServerOptions['connections'];
    console?: ServerOptions['console'];
    publicUrl?: string;
    /** Serve GET /metrics (and count into `metrics`), opened to those `access` names. */
    metrics?: MetricsAccess;
    /** POST /admin/backup's copy (absent: no such route). */
    backup?: ServerOptions['backup'];
  } = {},
): Promise<ApiHarness> {
  // The engine is made before the state its metrics read: it tells them through this.
  let metrics: DaemonMetrics | undefined;
  const h = await engineHarness(t, undefined, options.clock, {
    ...(options.ai && { ai: options.ai }),
    ...(options.metrics && {
      observe: {
        durable: (state, records) => metrics?.durable(state, records),
        committed: (seconds, records) => metrics?.committed(seconds, records),
      },
    }),
    ...options.engine,
  });
  if (options.metrics) metrics = new DaemonMetrics(h.store.state);
  const webhooks = new WebhookReceiver({ store: h.store, engine: h.engine, now: h.clock.now });
  const audit = new FileAuditTrail(await History.open(join(h.dir, 'audit')));
  // Not started (nothing fires on the harness's clock): there for the backfills the API asks of it.
  const scheduler = new Scheduler({ store: h.store, engine: h.engine, now: h.clock.now });
  t.teardown(() => scheduler.close());
  const app = buildServer({
    store: h.store,
    engine: h.engine,
    audit,
    webhooks,
    bodyLimit: options.bodyLimit,
    heartbeatSeconds: options.heartbeatSeconds,
    now: h.clock.now,
    ai: options.ai,
    logger: options.logger,
    accessLog: options.accessLog,
    files: h.files,
    connections: options.connections,
    console: options.console,
    publicUrl: options.publicUrl,
    ...(metrics && { metrics: { of: metrics, access: options.metrics } }),
    backup: options.backup,
    scheduler,
  });
  await app.ready();
  t.teardown(async () => {
    await app.close();
    await audit.close();
  });
  return Object.assign(h, {
    app,
    audit,
    metrics,
    webhooks,
    async key(role: Role, organization: string | null, extra: Partial<ApiKey> = {}) {
      const at = h.clock.now().toISOString();
      if (organization !== null && !h.store.state.organizations[organization])
        await h.store.commit({ type: 'organization.created', name: organization, at });
      const made = newApiKey({ name: `${role}@${organization ?? 'system'}`, organization, role, at: h.clock.now() });
      await h.store.commit({ type: 'apiKey.created', key: { ...made.key, ...extra } });
      const { apiKey } = made;
      const keyId = made.key.keyId;
      return { apiKey, keyId, organization, role };
    },
    call(key: TestKey | null, opts: InjectOptions) {
      return app.inject({ ...opts, headers: { ...(key ? { 'x-api-key': key.apiKey } : {}), ...(opts.headers ?? {}) } });
    },
  });
}
