/**
 * What one client can hold of the daemon's connections. Every socket is a file descriptor the
 * store may need (docs/decisions/051-connection-limits.md): connections are capped below the
 * open-files limit, and a connection that sends no request in time, or idles between requests,
 * is closed. A request in progress (an SSE stream, a job long poll) is not idle: it is never
 * timed out, but it counts toward the cap. At the cap, a connection doing nothing gives way to
 * a new one, and an address holding its share gets no new place while others hold some
 * (connection-table.ts, docs/decisions/089-connections-an-idle-flood-cannot-take.md): a flood
 * of idle sockets cannot shut working clients out.
 */
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { WfxError } from '../../shared/errors.js';
import { DEFAULT_MAX_FILE_BYTES } from '../files/file-store.js';
import { defaultMaxConnections, descriptorReserve, overflowConnections } from './open-files.js';
import { addressKey, ConnectionTable, type Eviction } from './connection-table.js';

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
/** ms between two log lines about connections closed to make room or reset over the cap. */
const LOG_INTERVAL_MS = 10_000;

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

/** What `limitConnections` counted since its last log line. */
interface Tally {
  reset: number;
  readonly evicted: Record<Eviction, number>;
}

const noTally = (): Tally => ({ reset: 0, evicted: { 'no-request': 0, idle: 0, stalled: 0 } });

/** The clock of `limitConnections` (ms, monotonic), and how often it may log (tests shorten it). */
export interface ConnectionTiming {
  readonly now: () => number;
  readonly logEveryMs: number;
}

/**
 * Caps the app's connections at `maxConnections` served at once. When every place is taken, a
 * new connection takes the place of one that may give way (ConnectionTable: one that has sent
 * no whole request or idles after its answers, oldest first, or one whose request's body
 * stopped coming for `headersTimeoutMs`; an address holding its share gets no new place
 * while others hold some), which is reset. A request in progress (a stream, a long poll, an
 * upload under way) never gives way. When none can, the next few (a sixteenth, see
 * overflowConnections) are accepted only to answer their request 503 TOO_MANY_CONNECTIONS
 * and close; beyond those, a connection is reset as soon as it is accepted, so that sockets
 * never hold more descriptors than the cap and that margin. Reset, not closed: fetch (undici)
 * waits for ever on a connection closed cleanly before it sent its request, which is what
 * Node's own `server.maxConnections` does. `warn` is told, at most every 10 s, how many were
 * closed and reset. Register it before the hooks that authenticate.
 */
export function limitConnections(
  app: FastifyInstance,
  limits: Pick<ConnectionLimits, 'maxConnections' | 'headersTimeoutMs'>,
  warn: (line: string) => void,
  timing: ConnectionTiming = { now: () => performance.now(), logEveryMs: LOG_INTERVAL_MS },
): void {
  const { maxConnections } = limits;
  const overflow = overflowConnections(maxConnections);
  const table = new ConnectionTable<Socket>({ maxConnections, overflow, stallMs: limits.headersTimeoutMs }, timing.now);
  let tally = noTally();
  let report: NodeJS.Timeout | null = null;
  const counted = () => {
    report ??= setTimeout(() => {
      warn(tallyLine(tally, table, timing.logEveryMs, overflow));
      tally = noTally();
      report = null;
    }, timing.logEveryMs).unref();
  };
  const closed = function (this: Socket) {
    table.closed(this);
  };
  app.server.on('connection', (socket: Socket) => {
    const admission = table.admit(socket, addressKey(socket.remoteAddress));
    if (admission.kind === 'refused') {
      socket.resetAndDestroy();
      tally.reset++;
      return counted();
    }
    socket.once('close', closed);
    if (admission.kind === 'served' && admission.victim !== null) {
      // Its descriptor is freed here, before the next connection is taken in.
      admission.victim.socket.resetAndDestroy();
      tally.evicted[admission.victim.why]++;
      counted();
    }
  });
  // One listener for every answer (no closure per request); its request keeps the socket.
  const answered = function (this: ServerResponse) {
    table.answered(this.req.socket);
  };
  // First, before the app has answered anything: the answer's end is what tells a request done.
  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    if (table.requested(request.socket, request)) response.on('finish', answered);
  });
  app.addHook('onClose', async () => {
    if (report) clearTimeout(report);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!table.isOver(request.raw.socket)) return done();
    void reply.header('connection', 'close');
    done(
      new WfxError('TOO_MANY_CONNECTIONS', `the daemon serves ${maxConnections} connections at once already`, {
        details: { retryAfter: RETRY_AFTER_SECONDS },
      }),
    );
  });
}

/** The log line of what `limitConnections` counted in the last `everyMs`. */
function tallyLine(tally: Tally, table: ConnectionTable<Socket>, everyMs: number, overflow: number): string {
  const { evicted } = tally;
  const closed = evicted['no-request'] + evicted.idle + evicted.stalled;
  const crowded = table.crowded().map((c) => `${c.address} (${c.held})`);
  return (
    `connections: in the last ${everyMs / 1000} s, ${closed} closed to make room ` +
    `(${evicted['no-request']} had sent no whole request, ${evicted.idle} idle after an answer, ` +
    `${evicted.stalled} with a request body that stopped coming) and ${tally.reset} reset as accepted ` +
    `(${table.served} served and ${table.over} of ${overflow} refused now, --max-connections)` +
    (crowded.length > 0 ? `; holding half the places or more: ${crowded.join(', ')}` : '')
  );
}
