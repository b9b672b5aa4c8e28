/**
 * The console's cookies, and the same-origin rule for requests that carry them. A cookie is
 * sent by the browser on its own, so a request made with one must be shown to come from the
 * console's own pages: SameSite=Strict keeps the cookie off cross-site requests, and the
 * request's Fetch Metadata (or, from an older browser, its Origin) is checked as well.
 */
import type { FastifyRequest } from 'fastify';
import { WfxError } from '../../../shared/errors.js';
import { ownOrigin, requestOrigin } from '../public-origin.js';

/**
 * Every value of cookie `name` in a Cookie header, in the order sent, empty ones included. Names
 * are compared exactly (`xwfx_session` and `wfx_session2` are other cookies). Pure.
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  if (header === undefined) return values;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq >= 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/**
 * The value of cookie `name` in the request, or null when it carries none (or only an empty
 * one). Throws DUPLICATE_COOKIE when it carries the name more than once: a browser sends
 * another site's cookie of the same name beside this daemon's (set by a sibling subdomain for
 * the parent domain, or for another path), and taking either one would let that site choose the
 * session, so neither is taken.
 */
export function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || !header.includes(name)) return null;
  const values = cookieValues(header, name);
  if (values.length > 1)
    throw new WfxError(
      'DUPLICATE_COOKIE',
      `the browser sent the cookie ${name} ${values.length} times (another site under this domain, or another path, set one): clear this site's cookies and sign in again`,
    );
  return values[0] || null;
}

/** Attributes of a cookie the daemon sets. */
export interface CookieOptions {
  /** Strict for the session; Lax for a sign-in in progress (it must survive the provider's redirect back). */
  readonly sameSite: 'Strict' | 'Lax';
  /** Seconds until it expires; 0 deletes it. Absent: a browser-session cookie. */
  readonly maxAgeSeconds?: number;
  readonly path?: string;
}

/**
 * A Set-Cookie value: HttpOnly always (no script of the page reads it), Secure when the browser
 * reaches the daemon over HTTPS (a plain-HTTP daemon on loopback could not set a Secure cookie).
 */
export function cookieHeader(request: FastifyRequest, name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${options.path ?? '/'}`, 'HttpOnly', `SameSite=${options.sameSite}`];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (request.protocol === 'https' || ownOrigin(request).startsWith('https:')) parts.push('Secure');
  return parts.join('; ');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Throws CROSS_SITE_REQUEST unless `request` (one that carries a console cookie) comes from
 * the console's own origin. Fetch Metadata first: `Sec-Fetch-Site` is set by the browser and a
 * page cannot forge it; a request that changes something must say `same-origin`, and no request
 * may say `cross-site` or `same-site` (a sibling subdomain is another party). Without it (an
 * older browser), a request that changes something must carry an `Origin` equal to this
 * daemon's; a read without either is let through, as SameSite=Strict already kept the cookie off
 * cross-site ones.
 */
export function assertSameOrigin(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  const unsafe = !SAFE_METHODS.has(request.method);
  if (typeof site === 'string') {
    if (site === 'same-origin' || (site === 'none' && !unsafe)) return;
    throw crossSite(request, `Sec-Fetch-Site: ${site}`);
  }
  if (!unsafe) return;
  const origin = request.headers.origin;
  // The public origin, or this daemon reached directly (its own loopback address, say).
  if (origin === ownOrigin(request) || origin === requestOrigin(request)) return;
  throw crossSite(request, origin === undefined ? 'no Origin header' : `Origin: ${origin}`);
}

function crossSite(request: FastifyRequest, why: string): WfxError {
  return new WfxError(
    'CROSS_SITE_REQUEST',
    `${request.method} with the console's session cookie must come from the console's own pages (${why})`,
  );
}
