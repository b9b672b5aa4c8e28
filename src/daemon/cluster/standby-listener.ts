/**
 * What a daemon on a database answers while it stands by (`--standby`, or rejoining after it
 * lost the database or its lease, rejoin.ts). It holds its port and forwards every request to
 * the daemon that serves the database (members.ts names it), so that any daemon of the database
 * answers any call with what the serving one answers: the same ids, states, errors, log streams
 * and rate limits. One hop only: a request that was forwarded already (its `x-wfx-forwarded-by`
 * header) is not forwarded again. With no daemon to forward to (a takeover under way, the
 * database away), it answers 503 DAEMON_STANDBY with Retry-After. GET /health is its own: 200
 * `status: 'standby'` while it forwards, 503 while it cannot, so a load balancer sends traffic
 * only where it will be served, and `wfx daemon status` says why. GET /metrics too, given
 * `metrics` (standby-metrics.ts): a standby's own figures. Plain node:http: nothing of
 * the daemon (store, engine, Fastify) runs meanwhile. When the daemon takes over, the listener
 * closes just before the daemon listens on the same port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ErrorBody, Health } from '../../shared/api/index.js';
import { VERSION } from '../../shared/version.js';
import { listenError } from '../process/start-errors.js';
import { FORWARDED_BY, forwardRequest } from './forward.js';

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
  /** Answers GET /metrics itself (this standby's figures) instead of forwarding it. */
  readonly metrics?: (request: IncomingMessage, reply: ServerResponse) => void;
}

export class StandbyListener {
  private reason: string;
  private readonly since = new Date().toISOString();

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
    if (path === '/metrics' && this.options.metrics && (request.method === 'GET' || request.method === 'HEAD'))
      return this.options.metrics(request, reply);
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

  /** Passes the request to `target`; a target that cannot be reached is looked up again, and the caller told. */
  private forward(target: string, request: IncomingMessage, reply: ServerResponse): void {
    forwardRequest(request, reply, {
      target,
      by: this.options.forward!.id,
      current: () => this.options.forward!.target() === target,
      unreachable: (err) => {
        this.options.forward!.unreachable?.(target);
        this.refuse(
          request,
          reply,
          `the daemon serving the database, at ${target}, cannot be reached (${err.code ?? err.message})`,
        );
      },
    });
  }
}
