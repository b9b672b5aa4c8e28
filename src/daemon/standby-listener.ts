/**
 * What a daemon on a database answers while it stands by (`--standby`, or rejoining after it
 * lost the database or its lease, rejoin.ts). It holds its port and forwards every request to
 * the daemon that serves the database (cluster.ts names it), so that any daemon of the database
 * answers any call with what the serving one answers: the same ids, states, errors, log streams
 * and rate limits. One hop only: a request that was forwarded already (its `x-wfx-forwarded-by`
 * header) is not forwarded again. With no daemon to forward to (a takeover under way, the
 * database away), it answers 503 DAEMON_STANDBY with Retry-After. GET /health is its own: 200
 * `status: 'standby'` while it forwards, 503 while it cannot, so a load balancer sends traffic
 * only where it will be served, and `wfx daemon status` says why. Plain node:http: nothing of
 * the daemon (store, engine, Fastify) runs meanwhile. When the daemon takes over, the listener
 * closes just before the daemon listens on the same port.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ErrorBody, Health } from '../shared/api/index.js';
import { VERSION } from '../shared/version.js';
import { listenError } from './start-errors.js';

/** The header a forwarded request carries: the id of the daemon that forwarded it. */
export const FORWARDED_BY = 'x-wfx-forwarded-by';

// Hop-by-hop headers (RFC 9110 section 7.6.1) are the connection's, not the message's: not passed on.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface StandbyOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  /** Seconds a client is told to wait before it tries again (Retry-After). */
  readonly retryAfterSeconds: number;
  /** Why it stands by, as people read it. */
  readonly reason: string;
  /** The daemon that serves now (null: none known), and this daemon's id for the hop header. */
  readonly forward?: {
    readonly id: string;
    readonly target: () => string | null;
    /** Told when the target could not be reached, so that it is looked up again. */
    readonly unreachable?: (url: string) => void;
  };
}

export class StandbyListener {
  private reason: string;
  private readonly since = new Date().toISOString();
  // A connection per request: a kept one that the serving daemon closes as idle just as a request
  // goes out would fail that request, and a forwarded body cannot be sent again.
  private readonly agent = new Agent({ keepAlive: false });

  private constructor(
    private readonly server: Server,
    private readonly options: StandbyOptions,
  ) {
    this.reason = options.reason;
    server.on('request', (request, reply) => this.answer(request, reply));
  }

  /** Listens on `host:port`. Throws PORT_IN_USE or LISTEN_FAILED, as the daemon's own listen does. */
  static async listen(options: StandbyOptions): Promise<StandbyListener> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: options.host, port: options.port }, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch(async (err: unknown) => {
      throw await listenError(err, options.host, options.port);
    });
    return new StandbyListener(server, options);
  }

  /** The address it listens on, as a URL. */
  get url(): string {
    const address = this.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Why the daemon stands by now, as people read it: who holds the lease, or that the database cannot be reached. */
  standingBy(reason: string): void {
    this.reason = reason;
  }

  /** Stops listening and drops every connection, forwarded ones too: the port is free when it resolves. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    this.agent.destroy();
    await closed;
  }

  private answer(request: IncomingMessage, reply: ServerResponse): void {
    const path = (request.url ?? '/').split('?')[0];
    const forwarded = request.headers[FORWARDED_BY] !== undefined;
    const target = forwarded ? null : (this.options.forward?.target() ?? null);
    if (path === '/health' && (request.method === 'GET' || request.method === 'HEAD')) {
      const body: Health = {
        status: 'standby',
        version: VERSION,
        standby: { since: this.since, reason: this.reason, ...(target !== null && { forwardingTo: target }) },
      };
      return this.send(request, reply, target === null ? 503 : 200, body);
    }
    if (target !== null) return this.forward(target, request, reply);
    this.refuse(
      request,
      reply,
      forwarded
        ? `it does not forward a request forwarded to it already (${this.reason})`
        : `it serves nothing until it takes over: ${this.reason}`,
    );
  }

  private refuse(request: IncomingMessage, reply: ServerResponse, why: string): void {
    const body: ErrorBody = {
      error: 'DAEMON_STANDBY',
      message: `this daemon stands by; ${why}`,
      timestamp: new Date().toISOString(),
      retryAfter: this.options.retryAfterSeconds,
    };
    // The body, if any, is not read: the connection closes after the answer.
    this.send(request, reply, 503, body, {
      'retry-after': String(this.options.retryAfterSeconds),
      connection: 'close',
    });
  }

  private send(
    request: IncomingMessage,
    reply: ServerResponse,
    status: number,
    body: object,
    headers: Record<string, string> = {},
  ): void {
    const text = JSON.stringify(body);
    reply.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    reply.end(request.method === 'HEAD' ? undefined : text);
  }

  /** Passes the request to `target` as it came (its credential included) and its answer back as it comes, streams too. */
  private forward(target: string, request: IncomingMessage, reply: ServerResponse): void {
    const url = new URL(request.url ?? '/', target);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    headers.host = url.host;
    headers[FORWARDED_BY] = this.options.forward!.id;
    const from = request.socket.remoteAddress;
    if (from) headers['x-forwarded-for'] = [request.headers['x-forwarded-for'], from].filter(Boolean).join(', ');
    let answered = false;
    const upstream = httpRequest(url, { method: request.method, headers, agent: this.agent });
    upstream.on('response', (response) => {
      answered = true;
      const back: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
      reply.writeHead(response.statusCode ?? 502, back);
      // A log stream goes on until one side ends it: an event as soon as it comes.
      reply.flushHeaders();
      response.pipe(reply);
      response.on('aborted', () => reply.destroy());
      response.on('error', () => reply.destroy());
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // Answered already, or the caller went away (its close destroyed this request): nothing to say.
      const gone = reply.destroyed || !reply.socket || reply.socket.destroyed;
      if (answered || reply.headersSent || gone) return void reply.destroy();
      this.options.forward!.unreachable?.(target);
      this.refuse(
        request,
        reply,
        `the daemon serving the database, at ${target}, cannot be reached (${err.code ?? err.message})`,
      );
    });
    // The caller went away (a log stream closed): so does the forwarded request.
    reply.on('close', () => {
      if (!reply.writableFinished) upstream.destroy();
    });
    request.pipe(upstream);
  }
}
