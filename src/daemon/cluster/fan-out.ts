/**
 * Calls that span executions, among daemons sharing a database (decision 042). Each daemon holds
 * only its partitions' executions, so a list of them (a flow's executions, waiting tasks and
 * jobs), an event's correlation and a worker's activation ask every other daemon serving
 * executions too, then merge what each answered: the daemon asked answers as one daemon would.
 * The others answer from their own partitions only (a request another daemon passed on is never
 * passed on again: the hop header) and do not count it against the key's limits again (it is
 * signed as counted: request-signing.ts). A partition moving or without a holder makes such a
 * call answer 503 PARTITION_MOVING with Retry-After, as a call naming one execution does: a list
 * short of a partition's executions would read as "there are none". The routes that gather their
 * answers so are fan-out-routes.ts's.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../../shared/api/index.js';
import { isErrorCode, WfxError } from '../../shared/errors.js';
import { parseSse, type SseEvent } from '../../shared/sse.js';
import { askDaemon, FORWARDED_BY, passedHeaders, type DaemonAnswer } from './forward.js';
import type { ThrownEvent } from '../engine/engine-events.js';
import { COUNTED_BY, DAEMON_CALL, type HopSigner } from './request-signing.js';

export interface PeersOptions {
  /** This daemon's id (the hop header). */
  readonly self: string;
  /**
   * Where the other daemons serving execution partitions answer; null while a partition is
   * moving, or has no holder (or who holds what is not known).
   */
  readonly peers: () => readonly string[] | null;
  readonly hop: HopSigner;
  /** Seconds a caller waits before it tries again. */
  readonly retryAfterSeconds: number;
  /** Reads who holds what again now (a daemon could not be reached, answered 503, or is not known). */
  readonly refresh: () => Promise<void>;
  /** Calls `fn` each time who holds what is read again. Returns the unsubscribe. */
  readonly watch?: (fn: () => void) => () => void;
  /** The partitions executions are in. */
  readonly partitions: readonly number[];
  /** Those this daemon serves now: held, and not moving in or out. */
  readonly served: () => readonly number[];
}

/** How long another daemon may take to answer a call asked of it (a long poll: its own wait more). */
const ASK_MS = 30_000;

/**
 * The header of a call one daemon asks of each (the hop header too: it is never passed on
 * again): the daemon that asked, which merges the answers.
 */
const ASKED_BY = 'x-wfx-asked-by';

/** The header of an answer to a call passed on: the partitions the answer covers (served throughout). */
export const SERVED = 'x-wfx-served';

/** One daemon's answer: its status and its JSON body. */
export interface PeerAnswer<T = unknown> {
  readonly url: string;
  readonly status: number;
  readonly body: T;
  /** The partitions its answer covers. */
  readonly served: readonly number[];
}

/** The other daemons serving executions, asked the calls that span them. */
export class Peers {
  /** Whether a request with ASKED_BY is signed by a daemon of this database (passedOn). */
  private readonly signed = new WeakMap<FastifyRequest, boolean>();

  constructor(private readonly options: PeersOptions) {}

  /**
   * Whether `request` is for this daemon's partitions only: another daemon asked it of each
   * daemon. (A request a standby, or a daemon waiting to join, forwarded to this one is not:
   * it carries the hop header only, and is answered for every daemon.)
   */
  passedOn(request: FastifyRequest): boolean {
    if (request.headers[ASKED_BY] === undefined) return false;
    // Signed by a daemon of this database: a client cannot narrow a call to one daemon. Asked
    // by several hooks of one request, checked once.
    let signed = this.signed.get(request);
    if (signed === undefined) {
      const { headers, method, url } = request;
      signed = this.options.hop.counted(headers, method, url) || this.options.hop.caller(headers, method, url) !== null;
      this.signed.set(request, signed);
    }
    return signed;
  }

  /** The headers that make a request one asked of another daemon (a signature besides). */
  private asked(): Record<string, string> {
    return { [FORWARDED_BY]: this.options.self, [ASKED_BY]: this.options.self };
  }

  /** The other daemons as last read or, when that says a partition has no holder, read again. */
  private async known(): Promise<readonly string[] | null> {
    const urls = this.options.peers();
    if (urls !== null) return urls;
    await this.options.refresh().catch(() => undefined);
    return this.options.peers();
  }

  /**
   * The daemons to ask now; where a partition's holder is not known as last read, after reading
   * who holds what again. Throws PARTITION_MOVING (and says when to try again on `reply`).
   */
  async urls(reply: FastifyReply): Promise<readonly string[]> {
    const urls = await this.known();
    if (urls === null) throw this.moving(reply, 'a partition is moving between daemons');
    return urls;
  }

  /**
   * Asks each of `urls` `request` as it came (its credential, signed as counted here), or with
   * `change`'s method, path and JSON body. Answers in the order of `urls`. Throws PARTITION_MOVING
   * when one answers 503 or cannot be reached; an aborted `signal` makes an answer status 0
   * unless it had begun (then it is read: see askDaemon).
   */
  async ask<T = unknown>(
    request: FastifyRequest,
    reply: FastifyReply,
    urls: readonly string[],
    change: { method?: string; path?: string; body?: unknown; signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<PeerAnswer<T>[]> {
    // A daemon that does not answer in time (a network that drops, not refuses) is as one gone.
    const timeout = AbortSignal.timeout(change.timeoutMs ?? ASK_MS);
    const signal = change.signal ? AbortSignal.any([change.signal, timeout]) : timeout;
    const method = change.method ?? request.method;
    const path = change.path ?? request.url;
    const headers: Record<string, string | string[]> = {
      ...passedHeaders(request.raw),
      ...this.asked(),
      [COUNTED_BY]: this.options.hop.sign(method, path),
    };
    const body =
      change.body !== undefined
        ? Buffer.from(JSON.stringify(change.body))
        : request.body !== undefined && request.body !== null
          ? Buffer.from(JSON.stringify(request.body))
          : undefined;
    if (body) headers['content-type'] = 'application/json';
    const answers = await Promise.all(
      urls.map(async (url): Promise<PeerAnswer<T>> => {
        let answer: DaemonAnswer;
        try {
          answer = await askDaemon(url, {
            method,
            path,
            headers,
            ...(body && { body }),
            signal,
          });
        } catch (err) {
          if (change.signal?.aborted) return { url, status: 0, body: null as T, served: [] };
          void this.options.refresh();
          throw this.moving(reply, `the daemon at ${url} cannot be reached (${(err as Error).message})`);
        }
        if (answer.status === 503) {
          void this.options.refresh();
          throw this.moving(reply, `the daemon at ${url} is not serving its partitions now`);
        }
        return { url, status: answer.status, body: parseBody(answer.body) as T, served: servedOf(answer) };
      }),
    );
    return answers;
  }

  /**
   * Follows the event stream `request` asks for on every other daemon serving executions, each
   * event to `onEvent`, until closed: a daemon that joins is followed once its registration is
   * read, one whose stream ends (gone, or its partitions moved) again if it is still listed.
   */
  follow(request: FastifyRequest, onEvent: (event: SseEvent) => void): { close(): void } {
    const open = new Map<string, AbortController>();
    const headers = new Headers();
    for (const [name, value] of Object.entries({ ...passedHeaders(request.raw), ...this.asked() }))
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    const connect = (url: string) => {
      const stop = new AbortController();
      open.set(url, stop);
      headers.set(COUNTED_BY, this.options.hop.sign('GET', request.url));
      void fetch(new URL(request.url, url), { headers, signal: stop.signal })
        .then(async (res) => {
          if (!res.ok || !res.body) return void (await res.body?.cancel());
          for await (const event of parseSse(res.body)) if (event.event !== undefined) onEvent(event);
        })
        .catch(() => undefined)
        .finally(() => open.get(url) === stop && open.delete(url));
    };
    const sync = () => {
      const urls = this.options.peers();
      if (urls === null) return; // a move under way: the next view says where things are
      for (const url of urls) if (!open.has(url)) connect(url);
      for (const [url, stop] of open)
        if (!urls.includes(url)) {
          stop.abort();
          open.delete(url);
        }
    };
    const unwatch = this.options.watch?.(sync);
    sync();
    return {
      close: () => {
        unwatch?.();
        for (const stop of open.values()) stop.abort();
        open.clear();
      },
    };
  }

  /**
   * Delivers an event an execution threw to what waits on the other daemons: asked of each as
   * POST /process/event, signed as this daemon's own call for the execution's organization.
   * `here` delivers it to what waits on this daemon (absent: its step did), at the same time, so
   * that the partitions this daemon served throughout count as covered. Rejects saying which
   * daemons or partitions it missed.
   */
  async deliverThrown(event: ThrownEvent, here?: () => Promise<void>): Promise<void> {
    const urls = await this.known();
    if (urls === null) throw new Error('a partition has no holder now');
    const path = '/process/event';
    const body = Buffer.from(
      JSON.stringify({ eventType: event.eventType, correlationKey: event.correlationKey, data: event.data }),
    );
    const headers = {
      'content-type': 'application/json',
      ...this.asked(),
      [DAEMON_CALL]: this.options.hop.signCall('POST', path, event.organization),
    };
    const before = this.served();
    const [answers] = await Promise.all([
      Promise.all(
        urls.map(async (url): Promise<PeerAnswer> => {
          const answer = await askDaemon(url, {
            method: 'POST',
            path,
            headers,
            body,
            signal: AbortSignal.timeout(ASK_MS),
          });
          // 404: nothing waits there for it.
          if (answer.status !== 200 && answer.status !== 404)
            throw new Error(`the daemon at ${url} answered ${answer.status}`);
          return { url, status: answer.status, body: null, served: servedOf(answer) };
        }),
      ),
      here?.(),
    ]);
    const missed = this.missed(before, answers);
    if (missed.length > 0) throw new Error(`partition ${missed.join(', ')} was moving`);
  }

  /** The partitions this daemon serves now (its answers cover those it served throughout). */
  served(): readonly number[] {
    return this.options.served();
  }

  /**
   * Checks that answers cover every execution partition: those this daemon served from
   * `before` to now, and those each other daemon said it served. One that none covered was
   * moving, or held by a daemon not asked (who holds what had changed since it was read).
   * Throws PARTITION_MOVING.
   */
  covered(reply: FastifyReply, before: readonly number[], answers: readonly PeerAnswer[]): void {
    const missed = this.missed(before, answers);
    if (missed.length === 0) return;
    void this.options.refresh();
    throw this.moving(reply, `partition ${missed.join(', ')} moved while the daemons were asked`);
  }

  /** The execution partitions no answer covered (see covered). */
  missed(before: readonly number[], answers: readonly PeerAnswer[]): number[] {
    const now = new Set(this.options.served());
    const covered = new Set(before.filter((p) => now.has(p)));
    for (const answer of answers) for (const p of answer.served) covered.add(p);
    return this.options.partitions.filter((p) => !covered.has(p));
  }

  /** Reads who holds what again now. */
  refresh(): Promise<void> {
    return this.options.refresh();
  }

  private moving(reply: FastifyReply, why: string): WfxError {
    void reply.header('retry-after', String(this.options.retryAfterSeconds));
    return new WfxError('PARTITION_MOVING', `this call spans every daemon of the database, and ${why}`, {
      details: { retryAfter: this.options.retryAfterSeconds },
    });
  }
}

/** The partitions a daemon's answer says it covered (SERVED). */
function servedOf(answer: DaemonAnswer): number[] {
  const served = answer.headers[SERVED];
  return typeof served === 'string' && served !== '' ? served.split(',').map(Number) : [];
}

function parseBody(body: Buffer): unknown {
  if (body.length === 0) return null;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

/**
 * The error another daemon answered, as this daemon answers it (its code and message). An
 * answer without an error code of ours is an internal error.
 */
export function peerError(answer: PeerAnswer): WfxError {
  const body = answer.body as Partial<ErrorBody> | null;
  if (body && typeof body.error === 'string' && isErrorCode(body.error))
    return new WfxError(body.error, body.message ?? body.error, {
      status: answer.status,
      ...(body.details !== undefined && { details: body.details }),
    });
  return new WfxError('INTERNAL_ERROR', `the daemon at ${answer.url} answered ${answer.status}`);
}
