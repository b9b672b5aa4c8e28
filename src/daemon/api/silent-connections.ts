/**
 * Ends, when the server closes, the connections that never carried a request. Node's
 * server.close() ends the connections idle between requests, but counts one that has sent
 * nothing yet as busy, and waits for it: fetch opens such a connection ahead of need (after a
 * request it aborted, say: a worker stopped in the middle of a long poll), and it held the
 * daemon's stop open for as long as its client lived.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Tracks the server's connections that have not sent a request yet, and adds a `preClose` hook
 * that destroys them (none has anything under way to lose). Register it after the other
 * `preClose` hooks: it runs after them.
 */
export function endSilentConnectionsOnClose(app: FastifyInstance): void {
  const silent = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    silent.add(socket);
    socket.once('close', () => silent.delete(socket));
  });
  app.server.on('request', (request: { readonly socket: Socket }) => silent.delete(request.socket));
  app.addHook('preClose', (done) => {
    for (const socket of silent) socket.destroy();
    done();
  });
}
