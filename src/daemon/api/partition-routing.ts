/**
 * Where a request is served among daemons sharing a database (decision 041). A request that
 * names an execution (its id in the path, a job key, `processInstanceId` in a task answer) is
 * served by the daemon holding the execution's partition; a change to the directory (`/admin`
 * writes) and a webhook delivery by partition 0's holder; anything else here (a start draws its
 * id in a partition this daemon holds; memory and files are shared). A request for another
 * daemon is forwarded to it, one hop (forward.ts), before it is authenticated here: the holder
 * authenticates it, counts it against the key's limits and answers, as one daemon would. A
 * request for a partition that is moving, or whose holder is gone or unknown, is answered 503
 * PARTITION_MOVING with Retry-After: the caller tries again, and reaches the new holder.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../../shared/api/index.js';
import { FORWARDED_BY, forwardRequest } from '../forward.js';
import { jobTarget } from '../state/jobs.js';

export interface PartitionRoutingOptions {
  /** This daemon's id (the hop header). */
  readonly self: string;
  /** The partition of execution `id`. */
  readonly partitionOf: (id: string) => number;
  /** Whether this daemon serves `partition` now: held, and not moving in or out. */
  readonly serves: (partition: number) => boolean;
  /** Where the holder of `partition` answers, as last read; null when none holds it (or it is not known). */
  readonly holder: (partition: number) => string | null;
  /** A holder could not be reached: read who holds what again. */
  readonly stale: () => void;
  /** Seconds a caller waits before it tries again. */
  readonly retryAfterSeconds: number;
}

const EXECUTION_ROUTES = new Set([
  '/process/instance/:id',
  '/process/instance/:id/logs',
  '/process/instance/:id/cancel',
]);
const JOB_ROUTES = new Set(['/jobs/:key/complete', '/jobs/:key/fail', '/jobs/:key/heartbeat', '/jobs/:key/release']);
const READS = new Set(['GET', 'HEAD']);

/** The partition a request must be served in, or null when any daemon serves it. */
function partitionOfRequest(request: FastifyRequest, options: PartitionRoutingOptions): number | null {
  const route = request.routeOptions.url ?? '';
  const params = request.params as Record<string, string | undefined>;
  if (EXECUTION_ROUTES.has(route) && params.id) return options.partitionOf(params.id);
  if (JOB_ROUTES.has(route) && params.key) {
    const job = jobTarget(params.key);
    return job ? options.partitionOf(job.instanceId) : null;
  }
  if (route.startsWith('/webhook/receive/')) return 0;
  // Memory is shared (any daemon writes it); the cluster's list is read by any.
  if (route.startsWith('/admin/') && !READS.has(request.method) && !route.startsWith('/admin/memory')) return 0;
  return null;
}

/** Installs the routing on `app`: before any route's own hooks (authentication included). */
export function installPartitionRouting(app: FastifyInstance, options: PartitionRoutingOptions): void {
  app.addHook('onRequest', (request, reply, done) => {
    const partition = partitionOfRequest(request, options);
    if (partition === null || options.serves(partition)) return done();
    route(request, reply, partition, options);
  });
  // A task answer names its execution in the body: routed once it is parsed (and authenticated
  // here, which the holder does again).
  app.addHook('preValidation', (request, reply, done) => {
    if (request.routeOptions.url !== '/process/task' || request.method !== 'POST') return done();
    const id = (request.body as { processInstanceId?: unknown } | null)?.processInstanceId;
    if (typeof id !== 'string') return done();
    const partition = options.partitionOf(id);
    if (options.serves(partition)) return done();
    route(request, reply, partition, options, Buffer.from(JSON.stringify(request.body)));
  });
}

function route(
  request: FastifyRequest,
  reply: FastifyReply,
  partition: number,
  options: PartitionRoutingOptions,
  body?: Buffer,
): void {
  // One hop: a request forwarded here is for this daemon, which no longer (or not yet) serves it.
  const target = request.headers[FORWARDED_BY] === undefined ? options.holder(partition) : null;
  if (target === null) return void moving(reply, options, partition);
  void reply.hijack();
  forwardRequest(request.raw, reply.raw, {
    target,
    by: options.self,
    ...(body && { body }),
    // The holder no longer serves it (it moved on since last read): read again for the retry.
    answered: (status) => status === 503 && options.stale(),
    unreachable: (err) => {
      options.stale();
      const body = errorBody(
        options,
        `the daemon holding partition ${partition}, at ${target}, cannot be reached (${err.code ?? err.message})`,
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
