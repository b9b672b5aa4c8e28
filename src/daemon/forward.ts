/**
 * Passing a request on to another daemon of the database and its answer back, streams too: what
 * a standby does with every request (standby-listener.ts) and a daemon sharing the database with
 * a request for an execution another daemon holds (api/partition-routing.ts). One hop only: the
 * request carries `x-wfx-forwarded-by`, and a daemon never forwards a request that has it.
 */
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

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

// A connection per request: a kept one that the other daemon closes as idle just as a request
// goes out would fail that request, and a forwarded body cannot be sent again.
const agent = new Agent({ keepAlive: false });

export interface Forward {
  /** The daemon to pass it to (its URL). */
  readonly target: string;
  /** This daemon's id, for the hop header. */
  readonly by: string;
  /** The body to send instead of the request's own (one read already, such as a parsed JSON body). */
  readonly body?: Buffer;
  /** Told the status `target` answered with. */
  readonly answered?: (status: number) => void;
  /** Answers the caller when `target` cannot be reached before anything came back. */
  readonly unreachable: (err: NodeJS.ErrnoException) => void;
}

/** Passes `request` to `forward.target` as it came (its credential included) and its answer back as it comes. */
export function forwardRequest(request: IncomingMessage, reply: ServerResponse, forward: Forward): void {
  const url = new URL(request.url ?? '/', forward.target);
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  headers.host = url.host;
  headers[FORWARDED_BY] = forward.by;
  if (forward.body) headers['content-length'] = String(forward.body.length);
  const from = request.socket.remoteAddress;
  if (from) headers['x-forwarded-for'] = [request.headers['x-forwarded-for'], from].filter(Boolean).join(', ');
  let answered = false;
  const upstream = httpRequest(url, { method: request.method, headers, agent });
  upstream.on('response', (response) => {
    answered = true;
    forward.answered?.(response.statusCode ?? 502);
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
    forward.unreachable(err);
  });
  // The caller went away (a log stream closed): so does the forwarded request.
  reply.on('close', () => {
    if (!reply.writableFinished) upstream.destroy();
  });
  if (forward.body) upstream.end(forward.body);
  else request.pipe(upstream);
}
