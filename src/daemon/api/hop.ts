/**
 * A request one daemon sharing a database passes to another after it counted it against the
 * caller's rate limits (a task answer routed on its body, a list asked of every daemon: decision
 * 042) says so in a header the other daemon can trust: an HMAC of the request's method and URL
 * and a time, with the secret every daemon of the database reads there (wfx_hop_secret) and
 * no client can. The other daemon then does not count it again. A request forwarded before it
 * was counted (partition-routing.ts) carries none, and is counted where it is served.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** The header of a request counted by the daemon that passed it on. */
export const COUNTED_BY = 'x-wfx-counted';

/** How long a signature holds: a little more than a forwarded request takes to arrive. */
const VALID_MS = 60_000;

export class HopSigner {
  constructor(
    private readonly secret: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The COUNTED_BY value of a request of `method` to `url` (its path and query), sent now. */
  sign(method: string, url: string): string {
    const at = String(this.now());
    return `${at}.${this.mac(method, url, at)}`;
  }

  /** Whether `headers` carry a signature of this database for `method` and `url`, made lately. */
  counted(headers: IncomingHttpHeaders, method: string, url: string): boolean {
    const value = headers[COUNTED_BY];
    if (typeof value !== 'string') return false;
    const dot = value.indexOf('.');
    const at = value.slice(0, dot);
    if (dot < 0 || !/^\d+$/.test(at) || Math.abs(this.now() - Number(at)) > VALID_MS) return false;
    const given = Buffer.from(value.slice(dot + 1), 'hex');
    const expected = Buffer.from(this.mac(method, url, at), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private mac(method: string, url: string, at: string): string {
    return createHmac('sha256', this.secret).update(`${method.toUpperCase()}\n${url}\n${at}`).digest('hex');
  }
}
