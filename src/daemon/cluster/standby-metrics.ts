/**
 * GET /metrics of a daemon standing by (standby-listener.ts): its own figures, not the serving
 * daemon's, so that a Prometheus scraping every daemon of a database sees how far each standby's
 * copy of the state is behind. Read by the scraper token or `--metrics-open` only: a standby runs
 * no key check (it forwards keyed requests), so a key is refused here with UNAUTHORIZED.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Gauge, Registry } from 'prom-client';
import type { ErrorBody } from '../../shared/api/index.js';
import { ERROR_CODES } from '../../shared/errors.js';
import { scraperAdmitted, type MetricsAccess } from '../api/metrics-route.js';

/** What a standby's metrics read: the entries its copy lacks (null: no copy yet, or not registered since). */
export interface StandbyFigures {
  readonly behindEntries: () => number | null;
}

/** The registry of a standby's series (docs/operations.md "Metrics"). */
export function standbyRegistry(figures: StandbyFigures): Registry {
  const registry = new Registry();
  const registers = [registry];
  new Gauge({
    name: 'wfx_pg_replay_lag_entries',
    help: 'PostgreSQL standby: journal entries its copy of the state has not applied (NaN: no copy yet)',
    registers,
    collect() {
      this.set(figures.behindEntries() ?? Number.NaN);
    },
  });
  new Gauge({ name: 'wfx_store_lease_held', help: 'PostgreSQL store: 1 while this daemon holds its lease', registers });
  new Gauge({
    name: 'wfx_store_partitions_held',
    help: 'PostgreSQL store: execution partitions this daemon holds',
    registers,
  });
  return registry;
}

/** Answers GET /metrics on a standby's port from `registry`, to a scraper `access` admits. */
export function answerStandbyMetrics(
  registry: Registry,
  access: MetricsAccess,
  request: IncomingMessage,
  reply: ServerResponse,
): void {
  if (!scraperAdmitted(access, request.headers.authorization)) {
    const body: ErrorBody = {
      error: 'UNAUTHORIZED',
      message: 'a standby serves its metrics to the scraper token (--metrics-token-file) or --metrics-open only',
      timestamp: new Date().toISOString(),
    };
    reply.writeHead(ERROR_CODES.UNAUTHORIZED.status, { 'content-type': 'application/json; charset=utf-8' });
    return void reply.end(JSON.stringify(body));
  }
  void registry.metrics().then(
    (text) => {
      reply.writeHead(200, { 'content-type': registry.contentType });
      reply.end(request.method === 'HEAD' ? undefined : text);
    },
    () => reply.writeHead(500).end(),
  );
}
