/**
 * Calls that span executions, among daemons sharing a database (decision 042). Each daemon holds
 * only its partitions' executions, so a list of them (a flow's executions, waiting tasks and
 * jobs), an event's correlation and a worker's activation ask every other daemon serving
 * executions too, then merge what each answered: the daemon asked answers as one daemon would.
 * The others answer from their own partitions only (a request another daemon passed on is never
 * passed on again: the hop header) and do not count it against the key's limits again (it is
 * signed as counted: hop.ts). A partition moving or without a holder makes such a call answer
 * 503 PARTITION_MOVING with Retry-After, as a call naming one execution does: a list short of a
 * partition's executions would read as "there are none".
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { DomainHealth, DomainHealthList, ErrorBody, JobList, WorkerSeen } from '../../shared/api/index.js';
import { isErrorCode, WfxError } from '../../shared/errors.js';
import { parseSse, type SseEvent } from '../../shared/sse.js';
import { askDaemon, FORWARDED_BY, passedHeaders, type DaemonAnswer } from '../forward.js';
import { COUNTED_BY, type HopSigner } from './hop.js';
import { installPartitionRouting, type PartitionRoutingOptions } from './partition-routing.js';

export interface PeersOptions {
  /** This daemon's id (the hop header). */
  readonly self: string;
  /**
   * Where the other daemons serving execution partitions answer; null while a partition is
   * moving, or has no holder (or who holds what is not known).
   */
  readonly peers: () => readonly string[] | null;
  readonly hop: HopSigner;
  /** A daemon could not be reached, or answered 503: read who holds what again. */
  readonly stale: () => void;
  /** Seconds a caller waits before it tries again. */
  readonly retryAfterSeconds: number;
  /** Calls `fn` each time who holds what is read again. Returns the unsubscribe. */
  readonly watch?: (fn: () => void) => () => void;
}

/** One daemon's answer: its status and its JSON body. */
export interface PeerAnswer<T = unknown> {
  readonly url: string;
  readonly status: number;
  readonly body: T;
}

/** The other daemons serving executions, asked the calls that span them. */
export class Peers {
  constructor(private readonly options: PeersOptions) {}

  /** Whether `request` is for this daemon's partitions only: another daemon passed it on. */
  static passedOn(request: FastifyRequest): boolean {
    return request.headers[FORWARDED_BY] !== undefined;
  }

  /** The daemons to ask now. Throws PARTITION_MOVING (and says when to try again on `reply`). */
  urls(reply: FastifyReply): readonly string[] {
    const urls = this.options.peers();
    if (urls === null) throw this.moving(reply, 'a partition is moving between daemons');
    return urls;
  }

  /**
   * Asks each of `urls` `request` as it came (its credential, signed as counted here), or with
   * `change`'s method, path and JSON body. Answers in the order of `urls`. Throws PARTITION_MOVING
   * when one answers 503 or cannot be reached; an aborted `signal` makes an answer status 0.
   */
  async ask<T = unknown>(
    request: FastifyRequest,
    reply: FastifyReply,
    urls: readonly string[],
    change: { method?: string; path?: string; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<PeerAnswer<T>[]> {
    const method = change.method ?? request.method;
    const path = change.path ?? request.url;
    const headers = passedHeaders(request.raw);
    headers[FORWARDED_BY] = this.options.self;
    headers[COUNTED_BY] = this.options.hop.sign(method, path);
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
            ...(change.signal && { signal: change.signal }),
          });
        } catch (err) {
          if (change.signal?.aborted) return { url, status: 0, body: null as T };
          this.options.stale();
          throw this.moving(reply, `the daemon at ${url} cannot be reached (${(err as Error).message})`);
        }
        if (answer.status === 503) {
          this.options.stale();
          throw this.moving(reply, `the daemon at ${url} is not serving its partitions now`);
        }
        return { url, status: answer.status, body: parseBody(answer.body) as T };
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
    for (const [name, value] of Object.entries(passedHeaders(request.raw)))
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    headers.set(FORWARDED_BY, this.options.self);
    const connect = (url: string) => {
      const stop = new AbortController();
      open.set(url, stop);
      headers.set(COUNTED_BY, this.options.hop.sign('GET', request.url));
      void fetch(new URL(request.url, url), { headers, signal: stop.signal })
        .then(async (res) => {
          if (!res.ok || !res.body) return;
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

  private moving(reply: FastifyReply, why: string): WfxError {
    void reply.header('retry-after', String(this.options.retryAfterSeconds));
    return new WfxError('PARTITION_MOVING', `this call spans every daemon of the database, and ${why}`, {
      details: { retryAfter: this.options.retryAfterSeconds },
    });
  }
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

/** Each answer's body, or the first error answered (thrown). */
function bodies<T>(answers: readonly PeerAnswer[]): T[] {
  const failed = answers.find((a) => a.status < 200 || a.status > 299);
  if (failed) throw peerError(failed);
  return answers.map((a) => a.body as T);
}

type Merge = (request: FastifyRequest, mine: unknown, theirs: readonly unknown[]) => unknown;

interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

/**
 * Pages of items in one order (`key` ascending, or descending), each the first `limit` past
 * the same cursor: their union holds the first `limit` of all, and there are more when the
 * union has more than `limit` or a page said so. An item in two pages (an execution archived
 * between two answers: in one's history and another's live state) is listed once.
 */
function mergePages<T>(pages: readonly Page<T>[], limit: number, key: (item: T) => string, descending: boolean) {
  const byKey = new Map<string, T>();
  for (const page of pages) for (const item of page.items) if (!byKey.has(key(item))) byKey.set(key(item), item);
  const sorted = [...byKey.keys()].sort();
  if (descending) sorted.reverse();
  const page = sorted.slice(0, limit);
  const more = sorted.length > limit || pages.some((p) => p.nextCursor !== null);
  return { items: page.map((k) => byKey.get(k)!), last: page.at(-1) ?? null, more };
}

const limitOf = (request: FastifyRequest): number => (request.query as { limit: number }).limit;

/** A flow's executions, newest first by id (time-ordered). The holder's copy of one goes first. */
const mergeInstances: Merge = (request, mine, theirs) => {
  const pages = [...(theirs as Page<{ processInstanceId: string }>[]), mine as Page<{ processInstanceId: string }>];
  const merged = mergePages(pages, limitOf(request), (i) => i.processInstanceId, true);
  return { items: merged.items, nextCursor: merged.more ? merged.last : null };
};

interface TaskItem {
  readonly waitingSince: string;
  readonly processInstanceId: string;
  readonly nodeInstanceId: string;
}
/** Waiting tasks, oldest waiting first (engine/tasks.ts's order and cursor). */
const mergeTasks: Merge = (request, mine, theirs) => {
  const key = (t: TaskItem) => `${t.waitingSince}|${t.processInstanceId}|${t.nodeInstanceId}`;
  const merged = mergePages([mine as Page<TaskItem>, ...(theirs as Page<TaskItem>[])], limitOf(request), key, false);
  return { items: merged.items, nextCursor: merged.more ? merged.last : null };
};

/** Waiting jobs, oldest first (a job's key is its execution's and node's: unique). */
const mergeJobs: Merge = (request, mine, theirs) => {
  const lists = [mine as JobList, ...(theirs as JobList[])];
  const items = lists.flatMap((l) => l.items);
  items.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.key < b.key ? -1 : 1));
  const limit = limitOf(request);
  return { items: items.slice(0, limit), more: items.length > limit || lists.some((l) => l.more) };
};

/**
 * Each domain's health over every daemon: its jobs are counted where they are held, and a worker
 * is seen by the daemon it calls, so counts add up and workers are joined (the latest sighting
 * of each). A domain is active when a daemon saw a worker lately.
 */
const mergeWorkers: Merge = (_request, mine, theirs) => {
  const domains = new Map<string, DomainHealth>();
  for (const list of [mine as DomainHealthList, ...(theirs as DomainHealthList[])])
    for (const d of list.items) {
      const key = `${d.organization}\u0000${d.domain}`;
      const seen = domains.get(key);
      domains.set(key, seen ? joinHealth(seen, d) : d);
    }
  return { items: [...domains.values()] };
};

function joinHealth(a: DomainHealth, b: DomainHealth): DomainHealth {
  const workers = new Map<string, WorkerSeen>();
  for (const w of [...a.workers, ...b.workers]) {
    const seen = workers.get(w.worker);
    workers.set(
      w.worker,
      seen ? { worker: w.worker, lastSeen: later(seen.lastSeen, w.lastSeen)!, polling: seen.polling || w.polling } : w,
    );
  }
  const waiting = a.waiting + b.waiting;
  const oldest = [a.oldestWaiting, b.oldestWaiting].filter((t): t is string => t !== null).sort()[0] ?? null;
  return {
    ...a,
    state: a.state === 'active' || b.state === 'active' ? 'active' : waiting > 0 ? 'stalled' : 'idle',
    waiting,
    locked: a.locked + b.locked,
    oldestWaiting: oldest,
    workers: [...workers.values()].sort((x, y) => (x.lastSeen < y.lastSeen ? 1 : -1)),
    lastSeen: later(a.lastSeen, b.lastSeen),
  };
}

const later = (a: string | null, b: string | null): string | null => (a === null ? b : b === null || a > b ? a : b);

/** The lists asked of every daemon, by method and route, and how their answers merge. */
const GATHERED = new Map<string, Merge>([
  ['GET /process/:id/instances', mergeInstances],
  ['GET /process/tasks', mergeTasks],
  ['GET /jobs', mergeJobs],
  ['GET /jobs/workers', mergeWorkers],
]);

/**
 * Installs, on `app` before its routes are added and after authentication (installAuth), how
 * requests reach what they need among the daemons sharing the database: the routing of those
 * naming an execution (partition-routing.ts), and the gathering of lists: each route of
 * GATHERED answers what it holds merged with what the other daemons answer, unless another
 * daemon asked it.
 */
export function installSharedServing(
  app: FastifyInstance,
  sharing: { readonly routing: PartitionRoutingOptions; readonly peers: Peers },
): void {
  installPartitionRouting(app, sharing.routing);
  const peers = sharing.peers;
  app.addHook('onRoute', (added) => {
    const methods = [added.method].flat();
    if (methods.length !== 1) return;
    const merge = GATHERED.get(`${methods[0]} ${added.url}`);
    if (!merge) return;
    const local = added.handler as RouteHandlerMethod;
    added.handler = async function (this: FastifyInstance, request, reply) {
      if (Peers.passedOn(request)) return local.call(this, request, reply);
      const urls = peers.urls(reply);
      const [mine, theirs] = await Promise.all([
        local.call(this, request, reply) as Promise<unknown>,
        urls.length > 0 ? peers.ask(request, reply, urls) : Promise.resolve([]),
      ]);
      return merge(request, mine, bodies(theirs));
    };
  });
}
