/**
 * What one client can hold of the daemon's connections. Every socket is a file descriptor the
 * store may need (docs/decisions/051-connection-limits.md): connections are capped below the
 * open-files limit, and a connection that sends no request in time, or idles between requests,
 * is closed. A request in progress (an SSE stream, a job long poll) is not idle: it is never
 * timed out, but it counts toward the cap.
 */
import type { ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { WfxError } from '../../shared/errors.js';
import { DEFAULT_MAX_FILE_BYTES } from '../files/file-store.js';
import { defaultMaxConnections, descriptorReserve, overflowConnections } from '../process/open-files.js';

/** How the HTTP server limits connections (ServerOptions.connections). */
export interface ConnectionLimits {
  /** Connections served at once; a few more are answered TOO_MANY_CONNECTIONS, the rest reset when accepted. */
  readonly maxConnections: number;
  /** ms a connection has to send a request's complete headers, from its opening or the request's first byte. */
  readonly headersTimeoutMs: number;
  /** ms a request has to arrive whole, body included (0: no limit). */
  readonly requestTimeoutMs: number;
  /** ms a connection may idle between requests before it is closed. */
  readonly keepAliveTimeoutMs: number;
}

/** Default ms for a connection's request headers to arrive (`--headers-timeout`). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 5_000;
/** Default ms a connection idles between requests (Node's own default; Fastify's is 72 s). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Least ms a request has to arrive whole; more for a larger upload limit (`requestTimeoutFor`). */
const MIN_REQUEST_TIMEOUT_MS = 300_000;
/** The slowest upload the request timeout allows for, in bytes per second. */
const SLOWEST_UPLOAD_BYTES_PER_SECOND = 100 * 1024;
/** Seconds a client answered TOO_MANY_CONNECTIONS is asked to wait (Retry-After). */
const RETRY_AFTER_SECONDS = 1;
/** ms between two log lines about connections reset over the cap. */
const DROP_LOG_INTERVAL_MS = 10_000;

/**
 * ms a request may take to arrive whole: MIN_REQUEST_TIMEOUT_MS, or long enough for the largest
 * upload (`maxUploadBytes`) at SLOWEST_UPLOAD_BYTES_PER_SECOND. Pure.
 */
export function requestTimeoutFor(maxUploadBytes: number): number {
  return Math.max(MIN_REQUEST_TIMEOUT_MS, Math.ceil(maxUploadBytes / SLOWEST_UPLOAD_BYTES_PER_SECOND) * 1000);
}

/**
 * The cap and timeouts of a daemon's options (its open-files limit `openFiles`, null: unknown):
 * the cap by default from that limit (defaultMaxConnections); `warn` is told when a cap given
 * leaves the store less than its reserve of the limit.
 */
export function connectionLimits(
  options: { readonly maxConnections?: number; readonly headersTimeoutMs?: number; readonly maxFileBytes?: number },
  openFiles: number | null,
  warn: (line: string) => void,
): Omit<ConnectionLimits, 'keepAliveTimeoutMs'> {
  const maxConnections = options.maxConnections ?? defaultMaxConnections(openFiles);
  const sockets = maxConnections + overflowConnections(maxConnections);
  if (openFiles !== null && sockets > openFiles - descriptorReserve(openFiles))
    warn(
      `--max-connections ${maxConnections} lets connections take ${sockets} of the ${openFiles} open files allowed, ` +
        `leaving less than ${descriptorReserve(openFiles)} for the store: a flood of connections could make its writes fail`,
    );
  return {
    maxConnections,
    headersTimeoutMs: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: requestTimeoutFor(options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES),
  };
}

/**
 * The Fastify options that carry the timeouts `given` (the defaults for those left out) to
 * Node's HTTP server. Node checks the
 * headers and request timeouts on a timer (`connectionsCheckingInterval`, 30 s by default): it
 * runs often enough here that a connection is closed within a fraction of its timeout after it.
 */
export function serverTimeouts(given: Partial<Omit<ConnectionLimits, 'maxConnections'>> = {}): {
  http: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
} {
  const limits = {
    headersTimeoutMs: given.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: given.requestTimeoutMs ?? MIN_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: given.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  };
  const headersTimeout =
    limits.requestTimeoutMs > 0 ? Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) : limits.headersTimeoutMs;
  return {
    http: { headersTimeout, connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(headersTimeout / 4))) },
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
  };
}

/**
 * Caps the app's connections: up to `maxConnections` are served; the next few (a sixteenth, see
 * overflowConnections) are accepted only to answer their request 503 TOO_MANY_CONNECTIONS and
 * close; beyond those, a connection is reset as soon as it is accepted, so that sockets never
 * hold more descriptors than the cap and that margin. Reset, not closed: fetch (undici) waits
 * for ever on a connection closed cleanly before it sent its request, which is what Node's own
 * `server.maxConnections` does. `warn` is told, at most every 10 s, how many were reset. Register
 * it before the hooks that authenticate.
 */
export function limitConnections(app: FastifyInstance, maxConnections: number, warn: (line: string) => void): void {
  const overflow = overflowConnections(maxConnections);
  let open = 0;
  /** Connections accepted over `maxConnections`: their request is refused. */
  const over = new WeakSet<Socket>();
  let dropped = 0;
  let report: NodeJS.Timeout | null = null;
  app.server.on('connection', (socket: Socket) => {
    if (open >= maxConnections + overflow) {
      socket.resetAndDestroy();
      dropped++;
      report ??= setTimeout(() => {
        warn(
          `connections: ${dropped} reset as accepted in the last ${DROP_LOG_INTERVAL_MS / 1000} s: ` +
            `${maxConnections} served and ${overflow} refused already (--max-connections)`,
        );
        dropped = 0;
        report = null;
      }, DROP_LOG_INTERVAL_MS).unref();
      return;
    }
    if (open >= maxConnections) over.add(socket);
    open++;
    socket.once('close', () => open--);
  });
  app.addHook('onClose', async () => {
    if (report) clearTimeout(report);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!over.has(request.raw.socket)) return done();
    void reply.header('connection', 'close');
    done(
      new WfxError('TOO_MANY_CONNECTIONS', `the daemon serves ${maxConnections} connections at once already`, {
        details: { retryAfter: RETRY_AFTER_SECONDS },
      }),
    );
  });
}
