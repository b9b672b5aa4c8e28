/**
 * Requests with an `Expect` other than `100-continue`. Node answers them itself, before any
 * route, with a bare 417 and no body; passed to the routes instead, they are refused with the
 * error body like every other refusal (and written to the access log).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { WfxError } from '../../shared/errors.js';

/**
 * Hands requests whose expectation Node does not meet to the app, which answers them 417
 * EXPECTATION_FAILED and closes the connection (a body the client holds back until told to
 * send it never comes). Register it before the hooks that authenticate: an expectation is
 * refused before anything else is looked at.
 */
export function refuseUnmetExpectations(app: FastifyInstance): void {
  const unmet = new WeakSet<IncomingMessage>();
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    unmet.add(req);
    app.server.emit('request', req, res);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!unmet.has(request.raw)) return done();
    void reply.header('connection', 'close');
    done(
      new WfxError('EXPECTATION_FAILED', 'the request expects what this server does not do (only 100-continue)', {
        details: { expect: request.headers.expect },
      }),
    );
  });
}
