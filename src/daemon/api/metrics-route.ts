/**
 * GET /metrics and the timing of every route (docs/operations.md "Metrics"). The figures cover
 * every organization, so by default only a system key with ADMIN reads them; the operator may
 * open them to a scraper token (`--metrics-token-file`, sent as `Authorization: Bearer`, the
 * way Prometheus sends its credentials) or to anyone on a loopback-only daemon (`--metrics-open`).
 */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../../shared/constant-time.js';
import { WfxError } from '../../shared/errors.js';
import { hookList } from './auth.js';
import type { DaemonMetrics } from '../observe/metrics.js';

/** Who may read GET /metrics besides a system key with ADMIN. */
export interface MetricsAccess {
  /** Anyone (`--metrics-open`; the daemon allows it only while it listens on loopback). */
  readonly open?: boolean;
  /** A request carrying `Authorization: Bearer <token>` (`--metrics-token-file`). */
  readonly token?: string;
}

/**
 * Times every route added after this call: a hook of each route's own with its pattern in hand
 * (`/process/instance/:id`, never the URL), as auth.ts adds its own.
 */
export function timeRoutes(app: FastifyInstance, metrics: DaemonMetrics): void {
  app.addHook('onRoute', (route) => {
    const url = route.url;
    const answered = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      metrics.answered(url, request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    route.onResponse = [...hookList(route.onResponse), answered];
  });
}

/** GET /metrics: the registry's text exposition. */
export function metricsRoute(app: FastifyInstance, metrics: DaemonMetrics, access: MetricsAccess): void {
  const admit = (request: FastifyRequest): boolean => scraperAdmitted(access, request.headers.authorization);
  app.get('/metrics', {
    config: { auth: { permission: 'ADMIN', callerKind: 'system', admit } },
    schema: { tags: ['meta'], summary: 'Prometheus metrics (text exposition format)' },
    handler: async (_request, reply) => {
      const text = await metrics.exposition();
      return reply.header('content-type', metrics.registry.contentType).send(text);
    },
  });
}

/**
 * Whether `authorization` (a request's header) is let in without a key: `--metrics-open`, or
 * the scraper token as `Bearer` (compared in constant time).
 */
export function scraperAdmitted(access: MetricsAccess, authorization: string | undefined): boolean {
  if (access.open) return true;
  if (access.token === undefined) return false;
  if (typeof authorization !== 'string' || !/^bearer /i.test(authorization)) return false;
  return constantTimeEqual(Buffer.from(authorization.slice(7).trim()), Buffer.from(access.token));
}

/**
 * Who reads GET /metrics, from the daemon's options: `open` only on a loopback `host`, the token
 * read from `tokenFile` (trimmed; an empty one refused). Throws WfxError USAGE_ERROR.
 */
export async function metricsAccessOf(
  host: string,
  open: boolean,
  tokenFile: string | undefined,
): Promise<MetricsAccess> {
  if (open && !isLoopback(host))
    throw new WfxError(
      'USAGE_ERROR',
      `--metrics-open serves metrics to anyone: only on a loopback --host, not ${host}`,
    );
  if (tokenFile === undefined) return { open };
  const token = (
    await readFile(tokenFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new WfxError('USAGE_ERROR', `--metrics-token-file ${tokenFile} cannot be read: ${err.code ?? err.message}`);
    })
  ).trim();
  if (token.length < 16)
    throw new WfxError('USAGE_ERROR', `--metrics-token-file ${tokenFile}: the token needs 16 characters or more`);
  return { open, token };
}

/** Whether `host` names only this machine (127.0.0.0/8, ::1, localhost). */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
