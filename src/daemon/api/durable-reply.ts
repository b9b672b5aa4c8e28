/**
 * Answers that leave once their change is durable, while the handler has already returned.
 *
 * A handler that has taken its change (in memory, its journal write under way) may hand the
 * durability to wait for to `request.durable` and return its answer at once. The answer is
 * serialized, the audit record written alongside the change's own write (audit-recorder.ts),
 * and only then does the answer leave: both writes overlap instead of following each other
 * (docs/decisions/079-audit-record-beside-the-change.md). A durability that fails turns the
 * answer into that error, as an awaited one would have.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { hookList } from './auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The durability of the change the handler took: the answer leaves once it settles. */
    durable?: Promise<unknown>;
  }
}

/**
 * What a handler gives the engine to hand a begun step's durability to this request
 * (engine/runner.ts, StepRunner.run). Its failure is handled here too: it may come before the
 * reply's hooks await it (a request whose answer never gets that far).
 */
export function handOverTo(request: FastifyRequest): (durable: Promise<unknown>) => void {
  return (durable) => {
    durable.catch(() => undefined);
    request.durable = durable;
  };
}

/** The durability the request's handler handed over, once: undefined when none (or taken). */
export function takeDurable(request: FastifyRequest): Promise<unknown> | undefined {
  const durable = request.durable;
  request.durable = undefined;
  return durable;
}

/**
 * Gives every route a last onSend hook that waits for what its handler handed to
 * `request.durable` (unless an earlier hook took it), then marks the answer `connection: close`
 * if `closing()` says the server began to close meanwhile (an app-wide onSend hook runs before
 * the route's, so before the wait). Installed after the audit's, before the routes.
 */
export function installDurableReplies(app: FastifyInstance, closing: () => boolean): void {
  const durableFirst: onSendHookHandler = (request, reply, payload, done) => {
    const durable = takeDurable(request);
    if (durable === undefined) return settled(reply, payload, done);
    durable.then(
      () => settled(reply, payload, done),
      (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
    );
  };
  const settled = (reply: FastifyReply, payload: unknown, done: (err: Error | null, payload: unknown) => void) => {
    if (closing()) void reply.header('connection', 'close');
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    route.onSend = [...hookList(route.onSend), durableFirst];
  });
}
