/**
 * The routes of a daemon sharing a database, as they span the daemons (fan-out.ts asks the
 * others): each list route of GATHERED answers what this daemon holds merged with what the
 * others answer, and each call that must cover every partition says, when another daemon asked
 * it, which partitions its answer covers.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import { WfxError } from '../../shared/errors.js';
import { hookList } from '../api/auth.js';
import { GATHERED, GATHERED_WHEN } from './fan-out-merge.js';
import { peerError, SERVED, type PeerAnswer, type Peers } from './fan-out.js';
import { isOriginForm } from './forward.js';
import { installPartitionRouting, type PartitionRoutingOptions } from './partition-routing.js';

/** Each answer's body, or the first error answered (thrown). */
function bodies<T>(answers: readonly PeerAnswer[]): T[] {
  const failed = answers.find((a) => a.status < 200 || a.status > 299);
  if (failed) throw peerError(failed);
  return answers.map((a) => a.body as T);
}

/** Calls whose answers must cover every partition: the lists, and an event's correlation. */
const SPANNING = new Set([...GATHERED.keys(), 'POST /process/event']);

/**
 * Has `route`'s answers to a call passed on say which partitions they cover: those this daemon
 * served from the call's arrival to its answer.
 */
function says(route: RouteOptions, peers: Peers): void {
  const arrived = new WeakMap<FastifyRequest, readonly number[]>();
  const onRequest = (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    if (peers.passedOn(request)) arrived.set(request, peers.served());
    done();
  };
  const onSend = (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (err: null, p: unknown) => void,
  ) => {
    const before = arrived.get(request);
    if (before) {
      const now = new Set(peers.served());
      void reply.header(SERVED, before.filter((p) => now.has(p)).join(','));
    }
    done(null, payload);
  };
  route.onRequest = [onRequest, ...hookList(route.onRequest)];
  route.onSend = [onSend, ...hookList(route.onSend)];
}

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
  // Only a path is passed on to another daemon (forward.ts's isOriginForm): an absolute URL as
  // the target would send the request, signed, to the host it names.
  app.addHook('onRequest', (request, _reply, done) =>
    isOriginForm(request.url)
      ? done()
      : done(new WfxError('VALIDATION_ERROR', 'the request target must be a path (origin-form), not an absolute URL')),
  );
  installPartitionRouting(app, sharing.routing);
  const peers = sharing.peers;
  app.addHook('onRoute', (added) => {
    const methods = [added.method].flat();
    if (methods.length !== 1) return;
    if (SPANNING.has(`${methods[0]} ${added.url}`)) says(added, peers);
    const merge = GATHERED.get(`${methods[0]} ${added.url}`);
    if (!merge) return;
    const gathers = GATHERED_WHEN.get(`${methods[0]} ${added.url}`) ?? (() => true);
    const local = added.handler as RouteHandlerMethod;
    added.handler = async function (this: FastifyInstance, request, reply) {
      if (peers.passedOn(request) || !gathers(request)) return local.call(this, request, reply);
      // A list is read again once if a partition moved while it was read (nothing changes by
      // reading): the second time, who holds what was read again.
      for (let attempt = 1; ; attempt++) {
        const before = peers.served();
        const urls = await peers.urls(reply);
        const [mine, theirs] = await Promise.all([
          local.call(this, request, reply) as Promise<unknown>,
          urls.length > 0 ? peers.ask(request, reply, urls) : Promise.resolve([]),
        ]);
        const merged = merge(request, mine, bodies(theirs));
        if (attempt === 2 || peers.missed(before, theirs).length === 0) {
          peers.covered(reply, before, theirs);
          return merged;
        }
        await peers.refresh().catch(() => undefined);
      }
    };
  });
}
