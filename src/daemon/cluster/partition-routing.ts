/**
 * Where a request is served among daemons sharing a database (decision 041). A request that
 * names an execution (its id in the path, a job key, `processInstanceId` in a task answer) is
 * served by the daemon holding the execution's partition; a change to the directory (`/admin`
 * writes) and a webhook delivery by partition 0's holder; anything else here (a start draws its
 * id in a partition this daemon holds; memory and files are shared). A request for another
 * daemon is forwarded to it, one hop (forward.ts), before it is authenticated here: the holder
 * authenticates it, counts it against the key's limits and answers, as one daemon would (a task
 * answer, routed once authenticated and counted here, is signed as counted: request-signing.ts).
 * A request for a partition that is moving, or whose holder is gone or unknown, is answered 503
 * PARTITION_MOVING with Retry-After: the caller tries again, and reaches the new holder.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../../shared/api/index.js';
import { FORWARDED_BY, forwardRequest } from './forward.js';
import { jobTarget } from '../state/job-queues.js';
import { hookList } from '../api/auth.js';
import type { HopSigner } from './request-signing.js';

export interface PartitionRoutingOptions {
  /** This daemon's id (the hop header). */
  readonly self: string;
  /** The partition of execution `id`. */
  readonly partitionOf: (id: string) => number;
  /** Whether this daemon serves `partition` now: held, and not moving in or out. */
  readonly serves: (partition: number) => boolean;
  /** Where the holder of `partition` answers, as last read; null when none holds it (or it is not known). */
  readonly holder: (partition: number) => string | null;
  /** A holder could not be reached, or answered 503: read who holds what again. */
  readonly stale: () => void;
  /** Reads who holds what again now. */
  readonly refresh: () => Promise<void>;
  /** The last entry of partition 0 (the directory) this daemon wrote or read. */
  readonly catalogueSeq?: () => number;
  /** Resolves once this daemon's copy of the directory has come to entry `seq`. */
  readonly catalogueAt?: (seq: number) => Promise<void>;
  /** Seconds a caller waits before it tries again. */
  readonly retryAfterSeconds: number;
  /** Signs a request counted here before it is passed on (a task answer): the holder does not count it again. */
  readonly hop?: HopSigner;
}

/** The header of an answer to a forwarded directory write: partition 0's entry that has it. */
const DIRECTORY_SEQ = 'x-wfx-directory-seq';

type DoneSend = (err: null, payload: unknown) => void;

const EXECUTION_ROUTES = new Set([
  '/process/instance/:id',
  '/process/instance/:id/logs',
  '/process/instance/:id/cancel',
  '/process/instance/:id/retry',
  '/process/instance/:id/replay',
  '/process/instance/:id/move',
]);
const JOB_ROUTES = new Set(['/jobs/:key/complete', '/jobs/:key/fail', '/jobs/:key/heartbeat', '/jobs/:key/release']);
const READS = new Set(['GET', 'HEAD']);
const TRIGGER_READS = new Set(['/admin/triggers', '/admin/email-connections', '/admin/email-connections/:name']);

type Params = Record<string, string | undefined>;

/**
 * The partition a request of route `url` (answering `methods`) is served in, read from the
 * request; null for a route any daemon serves.
 */
function partitionOfRoute(
  url: string,
  methods: readonly string[],
  options: PartitionRoutingOptions,
): ((request: FastifyRequest) => number | null) | null {
  if (EXECUTION_ROUTES.has(url))
    return (request) => {
      const id = (request.params as Params).id;
      return id ? options.partitionOf(id) : null;
    };
  if (JOB_ROUTES.has(url))
    return (request) => {
      const job = jobTarget((request.params as Params).key ?? '');
      return job ? options.partitionOf(job.instanceId) : null;
    };
  if (url.startsWith('/webhook/receive/')) return () => 0;
  // Trigger health and email connections' state live in the daemon that runs the triggers.
  if (TRIGGER_READS.has(url)) return () => 0;
  // Memory is shared (any daemon writes it); the cluster's list is read by any.
  if (url.startsWith('/admin/') && !url.startsWith('/admin/memory') && methods.some((m) => !READS.has(m)))
    return (request) => (READS.has(request.method) ? null : 0);
  return null;
}

/**
 * Installs the routing on `app`, before any of its routes is added and after authentication
 * (installAuth): each route that may be routed gets its hook first, ahead of authentication's,
 * made when the route is added (as auth.ts does: `request.routeOptions` per request costs an
 * object), and the other routes nothing.
 */
export function installPartitionRouting(app: FastifyInstance, options: PartitionRoutingOptions): void {
  app.addHook('onRoute', (added) => {
    const methods = [added.method].flat();
    const partitionOf = partitionOfRoute(added.url, methods, options);
    if (partitionOf) {
      const routed = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
        const partition = partitionOf(request);
        if (partition === null || options.serves(partition)) return done();
        route(request, reply, partition, options, done);
      };
      added.onRequest = [routed, ...hookList(added.onRequest)];
      // A directory write made here for another daemon says where it is in partition 0's
      // journal: that daemon answers once its copy has it (read your writes).
      const seq = options.catalogueSeq;
      if (seq) {
        const says = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: DoneSend) => {
          if (request.headers[FORWARDED_BY] !== undefined && partitionOf(request) === 0)
            void reply.header(DIRECTORY_SEQ, String(seq()));
          done(null, payload);
        };
        added.onSend = [says, ...hookList(added.onSend)];
      }
    }
    // A task answer names its execution in the body: routed once it is parsed (and authenticated
    // here, which the holder does again).
    if (added.url === '/process/task' && methods.includes('POST')) {
      const routed = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
        const id = (request.body as { processInstanceId?: unknown } | null)?.processInstanceId;
        if (typeof id !== 'string') return done();
        const partition = options.partitionOf(id);
        if (options.serves(partition)) return done();
        route(request, reply, partition, options, done, {
          body: Buffer.from(JSON.stringify(request.body)),
          counted: options.hop?.sign(request.method, request.url),
        });
      };
      added.preValidation = [routed, ...hookList(added.preValidation)];
    }
    // An event with a message id is taken in by one daemon, whichever it reaches: the holder of
    // the id's partition, which alone checks and remembers it (then delivers it everywhere).
    if (added.url === '/process/event' && methods.includes('POST')) {
      const routed = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
        const b = request.body as { messageId?: unknown; organization?: unknown } | null;
        if (typeof b?.messageId !== 'string') return done();
        const named = typeof b.organization === 'string' ? b.organization : 'default';
        const partition = options.partitionOf(`${request.caller?.organization ?? named}|${b.messageId}`);
        if (options.serves(partition)) return done();
        route(request, reply, partition, options, done, {
          body: Buffer.from(JSON.stringify(request.body)),
          counted: options.hop?.sign(request.method, request.url),
        });
      };
      added.preValidation = [routed, ...hookList(added.preValidation)];
    }
  });
}

/**
 * Sends `request` on to the holder of `partition`, which this daemon does not serve. Where it is
 * not known (the last read has no holder, or this daemon, which moved it on since), who holds
 * what is read again first: a request right after a move reaches the new holder, not a 503.
 * Then this daemon may serve it (`here`), or it is forwarded, or it is moving.
 */
function route(
  request: FastifyRequest,
  reply: FastifyReply,
  partition: number,
  options: PartitionRoutingOptions,
  here: () => void,
  parsed: { body: Buffer; counted: string | undefined } | null = null,
): void {
  // One hop: a request forwarded here is for this daemon, which no longer (or not yet) serves it.
  if (request.headers[FORWARDED_BY] !== undefined) return void moving(reply, options, partition);
  const target = options.holder(partition);
  if (target !== null) return forward(request, reply, partition, target, options, parsed);
  const again = () => {
    if (options.serves(partition)) return here();
    const target = options.holder(partition);
    if (target === null) return void moving(reply, options, partition);
    forward(request, reply, partition, target, options, parsed);
  };
  options.refresh().then(again, again);
}

function forward(
  request: FastifyRequest,
  reply: FastifyReply,
  partition: number,
  target: string,
  options: PartitionRoutingOptions,
  parsed: { body: Buffer; counted: string | undefined } | null,
): void {
  void reply.hijack();
  const catalogueAt = options.catalogueAt;
  forwardRequest(request.raw, reply.raw, {
    target,
    by: options.self,
    ...(partition === 0 &&
      catalogueAt && {
        before: async (response) => {
          const seq = Number(response.headers[DIRECTORY_SEQ]);
          if (Number.isSafeInteger(seq) && seq > 0) await catalogueAt(seq);
        },
      }),
    ...(parsed && { body: parsed.body }),
    ...(parsed?.counted !== undefined && { counted: parsed.counted, headers: rateHeaders(reply) }),
    // Its lease lapsed or the partition moved on while the request waited (a holder paused or
    // cut off may never answer): it ends, and the caller tries again where it is served now.
    current: () => options.holder(partition) === target,
    // The holder no longer serves it (it moved on since last read): read again for the retry.
    answered: (status) => status === 503 && options.stale(),
    unreachable: (err) => {
      options.stale();
      const body = errorBody(
        options,
        err.code === 'EMOVED'
          ? `the daemon at ${target} no longer held partition ${partition} (its lease lapsed, or the partition moved) before it answered`
          : `the daemon holding partition ${partition}, at ${target}, cannot be reached (${err.code ?? err.message})`,
      );
      reply.raw.writeHead(503, {
        'content-type': 'application/json; charset=utf-8',
        'retry-after': String(options.retryAfterSeconds),
        connection: 'close',
      });
      reply.raw.end(JSON.stringify(body));
    },
  });
}

/** The RateLimit-* headers set on `reply` when its request was counted here. */
function rateHeaders(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (name.startsWith('ratelimit-') && value !== undefined) headers[name] = String(value);
  return headers;
}

function moving(reply: FastifyReply, options: PartitionRoutingOptions, partition: number): FastifyReply {
  return reply
    .code(503)
    .header('retry-after', String(options.retryAfterSeconds))
    .send(errorBody(options, `partition ${partition}, which the request names, is moving between daemons`));
}

function errorBody(options: PartitionRoutingOptions, message: string): ErrorBody {
  return {
    error: 'PARTITION_MOVING',
    message,
    timestamp: new Date().toISOString(),
    retryAfter: options.retryAfterSeconds,
  };
}
