import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { ERROR_CODES, WfxError, type ErrorCode } from '../shared/errors.js';
import { VERSION } from '../shared/version.js';
import type { WfxRecord } from './state/records.js';
import type { WfxState } from './state/state.js';
import type { DurableStore } from './store/store.js';

export interface ServerOptions {
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly logger?: FastifyBaseLogger;
  /** Largest accepted request body in bytes (default 1 MiB). */
  readonly bodyLimit?: number;
}

/** Body of every error answer (SPEC.md section 5). */
export interface ErrorBody {
  readonly error: ErrorCode;
  readonly message: string;
  readonly timestamp: string;
  readonly details?: unknown;
  readonly retryAfter?: number;
}

/** Fastify's own error codes that are the caller's fault, mapped to ours. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'VALIDATION_ERROR',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'VALIDATION_ERROR',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_VALIDATION: 'VALIDATION_ERROR',
};

/** Turns any thrown value into the wire error body and status. Never exposes a stack. */
export function toErrorAnswer(err: unknown): { status: number; body: ErrorBody } {
  const timestamp = new Date().toISOString();
  if (err instanceof WfxError) {
    const body: ErrorBody = { error: err.code, message: err.message, timestamp };
    return { status: err.status, body: err.details === undefined ? body : { ...body, details: err.details } };
  }
  const fe = err as Partial<FastifyError>;
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return { status: ERROR_CODES[mapped].status, body: { error: mapped, message: fe.message ?? mapped, timestamp } };
  // Bad JSON from the JSON parser is a SyntaxError with statusCode 400.
  if (fe.statusCode === 400) return { status: 400, body: { error: 'VALIDATION_ERROR', message: fe.message ?? 'bad request', timestamp } };
  return { status: 500, body: { error: 'INTERNAL_ERROR', message: 'internal error', timestamp } };
}

/**
 * Builds the daemon's HTTP app. It does not listen: the daemon calls `listen`, tests call
 * `inject()`. Routes are added here as capabilities arrive.
 */
export function buildServer(options: ServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger,
    // wfx logs requests itself (with the credential's key id, never its secret).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    return503OnClosing: true,
  });

  app.setErrorHandler((err, request, reply) => {
    const { status, body } = toErrorAnswer(err);
    if (status >= 500) request.log.error({ err }, 'request failed');
    void reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const err = new WfxError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`);
    const { status, body } = toErrorAnswer(err);
    void reply.status(status).send(body);
  });

  app.get('/health', async () => {
    if (options.store.failed) throw options.store.failed;
    return { status: 'ok', version: VERSION };
  });

  return app;
}
