/**
 * Passing a request on to another daemon of the database and its answer back, streams too: what
 * a standby does with every request (standby-listener.ts) and a daemon sharing the database with
 * a request for an execution another daemon holds (partition-routing.ts). One hop only: the
 * request carries `x-wfx-forwarded-by`, and a daemon never forwards a request that has it.
 */
import {
  Agent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { COUNTED_BY } from './request-signing.js';

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
  /** The COUNTED_BY header's value (request-signing.ts), for a request counted here already. */
  readonly counted?: string;
  /** Headers this daemon adds to the answer (the rate limit's, for a request counted here). */
  readonly headers?: Record<string, string>;
  /** Waited for before the answer is passed back (this daemon's copy catching up with it). */
  readonly before?: (response: IncomingMessage) => Promise<void>;
  /** Told the status `target` answered with. */
  readonly answered?: (status: number) => void;
  /** Answers the caller when `target` cannot be reached before anything came back. */
  readonly unreachable: (err: NodeJS.ErrnoException) => void;
  /**
   * Whether `target` still serves what the request is for (holds its partition, or serves the
   * database), as this daemon last read it. Once it does not, the request ends (unreachable, or
   * an answer begun is cut off): a holder whose lease lapsed (its process paused, its host gone
   * from the network) may never answer, and the caller should try again where it is served now.
   */
  readonly current?: () => boolean;
}

/** How long a forwarded request waits for its connection to the other daemon. */
const CONNECT_MS = 3000;

/** How often forwards in flight are checked against `current`. */
const SWEEP_MS = 500;

/** The checks of the forwards in flight that have `current` (each ends its own forward if it is no longer current). */
const inFlight = new Set<() => void>();
let sweeper: NodeJS.Timeout | null = null;

function sweep(): void {
  for (const check of inFlight) check();
  if (inFlight.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = null;
  }
}

/** Checks `check` every SWEEP_MS until the returned function is called. */
function checkWhileInFlight(check: () => void): () => void {
  inFlight.add(check);
  sweeper ??= setInterval(sweep, SWEEP_MS).unref();
  return () => void inFlight.delete(check);
}

/** Fails `request` with ETIMEDOUT when its socket has not connected within CONNECT_MS. */
function connectWithin(request: ClientRequest): void {
  request.on('socket', (socket) => {
    if (!socket.connecting) return;
    const late = setTimeout(
      () => request.destroy(errorWithCode(`no connection within ${CONNECT_MS / 1000} s`, 'ETIMEDOUT')),
      CONNECT_MS,
    );
    const settle = () => clearTimeout(late);
    socket.once('connect', settle);
    socket.once('close', settle);
  });
}

function errorWithCode(message: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** Passes `request` to `forward.target` as it came (its credential included) and its answer back as it comes. */
export function forwardRequest(request: IncomingMessage, reply: ServerResponse, forward: Forward): void {
  // An absolute-form target (`GET http://host/path HTTP/1.1`) would make the URL below that
  // host's, not the daemon's: the request would go (with its credential) wherever it names.
  if (!isOriginForm(request.url)) {
    reply.writeHead(400, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    reply.end(JSON.stringify(NOT_ORIGIN_FORM));
    return;
  }
  const url = new URL(request.url, forward.target);
  const headers = passedHeaders(request);
  headers.host = url.host;
  headers[FORWARDED_BY] = forward.by;
  const length = forward.body ? String(forward.body.length) : request.headers['content-length'];
  if (length !== undefined) headers['content-length'] = length;
  if (forward.counted) headers[COUNTED_BY] = forward.counted;
  let answered = false;
  const upstream = httpRequest(url, { method: request.method, headers, agent });
  connectWithin(upstream);
  const current = forward.current;
  if (current) {
    const moved = errorWithCode('it no longer serves what the request names', 'EMOVED');
    const done = checkWhileInFlight(() => {
      if (!current()) upstream.destroy(moved);
    });
    upstream.on('close', done);
  }
  upstream.on('response', (response) => {
    answered = true;
    forward.answered?.(response.statusCode ?? 502);
    const pass = () => {
      const back: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
      Object.assign(back, forward.headers);
      reply.writeHead(response.statusCode ?? 502, back);
      // A log stream goes on until one side ends it: an event as soon as it comes.
      reply.flushHeaders();
      response.pipe(reply);
    };
    response.on('aborted', () => reply.destroy());
    response.on('error', () => reply.destroy());
    if (forward.before) forward.before(response).then(pass, pass);
    else pass();
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

/** Whether a request's target is a path (origin-form, RFC 9112 section 3.2.1), as a daemon passes on. */
export function isOriginForm(url: string | undefined): url is string {
  return url !== undefined && url.startsWith('/');
}

const NOT_ORIGIN_FORM = {
  error: 'VALIDATION_ERROR',
  message: 'the request target must be a path (origin-form), not an absolute URL',
};

/** What another daemon answered a request asked of it (askDaemon). */
export interface DaemonAnswer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

/**
 * Asks the daemon at `target` one request with `headers` (the hop header among them) and reads
 * its whole answer. Rejects when it cannot be reached, or `signal` aborts the request and no
 * answer begins within GIVE_UP_GRACE_MS. An answer begun is read to its end (unless it stalls
 * ANSWER_END_MS), after an abort too: what it says may have happened there already, as the jobs
 * a long poll locked, which the asker must then give back rather than leave locked.
 */
export function askDaemon(
  target: string,
  ask: {
    readonly method: string;
    readonly path: string;
    readonly headers: Record<string, string | string[]>;
    readonly body?: Buffer;
    readonly signal?: AbortSignal;
  },
): Promise<DaemonAnswer> {
  const url = new URL(ask.path, target);
  const headers = { ...ask.headers, host: url.host, ...(ask.body && { 'content-length': String(ask.body.length) }) };
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: ask.method, headers, agent });
    connectWithin(request);
    // Given up before its answer began: the other daemon may be writing one already (a long
    // poll that has just locked jobs), so only this side of the connection closes. The other
    // daemon sees the asker gone and ends what it waits for; an answer it sent first is still
    // read, within GIVE_UP_GRACE_MS, for the asker to give back what it says.
    let gaveUp = false;
    const giveUp = (): void => {
      gaveUp = true;
      const socket = request.socket;
      if (!socket || socket.connecting || socket.destroyed) return void request.destroy(ask.signal?.reason as Error);
      socket.end();
      const late = setTimeout(() => request.destroy(ask.signal?.reason as Error), GIVE_UP_GRACE_MS);
      request.once('response', () => clearTimeout(late));
      request.once('close', () => clearTimeout(late));
    };
    if (ask.signal?.aborted) giveUp();
    else ask.signal?.addEventListener('abort', giveUp, { once: true });
    request.on('close', () => ask.signal?.removeEventListener('abort', giveUp));
    request.on('response', (response) => {
      ask.signal?.removeEventListener('abort', giveUp);
      const stalled = setTimeout(() => request.destroy(new Error('the answer broke off')), ANSWER_END_MS);
      response.on('close', () => clearTimeout(stalled));
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => (chunks.push(chunk), stalled.refresh()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
      response.on('aborted', () => reject(new Error('the answer broke off')));
    });
    // The other daemon closed without an answer once this one gave up: rejected as given up.
    request.on('error', (err) => reject(gaveUp ? (ask.signal?.reason as Error) : err));
    request.end(ask.body);
  });
}

/** How long an answer begun may go without a byte before it counts as broken off. */
const ANSWER_END_MS = 5000;

/** How long an ask given up on still waits for an answer the other daemon may have sent first. */
const GIVE_UP_GRACE_MS = 2000;

/** The headers of `request` worth passing on to another daemon: the message's, not the connection's. */
export function passedHeaders(request: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'content-length' && name !== 'host')
      headers[name] = value;
  const from = request.socket.remoteAddress;
  if (from) headers['x-forwarded-for'] = [request.headers['x-forwarded-for'], from].filter(Boolean).join(', ');
  return headers;
}
