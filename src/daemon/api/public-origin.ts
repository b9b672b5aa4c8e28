/**
 * Where browsers and webhook senders reach this daemon: `--public-url` (behind a proxy or a
 * tunnel that ends TLS, the address the daemon sees is not theirs), else as each request names it.
 */
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** `--public-url`'s origin: where browsers and webhook senders reach this daemon; null: as each request says. */
    publicOrigin: string | null;
  }
}

/**
 * This daemon's origin as browsers reach it: `--public-url`'s (behind a proxy or a tunnel that
 * ends TLS), else as the request names it (`http://127.0.0.1:7878`).
 */
export function ownOrigin(request: FastifyRequest): string {
  return request.server.publicOrigin ?? requestOrigin(request);
}

/** The origin the request itself names: its scheme and Host. */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}
