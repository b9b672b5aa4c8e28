/**
 * A request one daemon sharing a database passes to another after it counted it against the
 * caller's rate limits (a task answer routed on its body, a list asked of every daemon: decision
 * 042) says so in a header the other daemon can trust: an HMAC of the request's method and URL
 * and a time, with the secret every daemon of the database reads there (wfx_hop_secret) and
 * no client can. The other daemon then does not count it again. A request forwarded before it
 * was counted (partition-routing.ts) carries none, and is counted where it is served. A request
 * a daemon makes itself (no caller behind it: a thrown event delivered to the others'
 * executions) is signed for its organization the same way, and that signature is its credential
 * (DAEMON_CALL).
 */
import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../shared/constant-time.js';
import type { IncomingHttpHeaders } from 'node:http';

/** The header of a request counted by the daemon that passed it on. */
export const COUNTED_BY = 'x-wfx-counted';

/**
 * The header of a request one daemon makes itself for an organization (a thrown event delivered
 * to the executions the others hold): the request's only credential.
 */
export const DAEMON_CALL = 'x-wfx-daemon-call';

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
    return constantTimeEqual(given, expected);
  }

  /** The DAEMON_CALL value of a request of `method` to `url` this daemon makes for `organization`. */
  signCall(method: string, url: string, organization: string): string {
    const at = String(this.now());
    const org = Buffer.from(organization).toString('base64url');
    return `${at}.${org}.${this.mac(method, url, at, organization)}`;
  }

  /** The organization a daemon of this database made the request for, lately; null for any other request. */
  caller(headers: IncomingHttpHeaders, method: string, url: string): string | null {
    const value = headers[DAEMON_CALL];
    if (typeof value !== 'string') return null;
    const [at, org, mac, extra] = value.split('.');
    if (at === undefined || org === undefined || mac === undefined || extra !== undefined) return null;
    if (!/^\d+$/.test(at) || Math.abs(this.now() - Number(at)) > VALID_MS) return null;
    const organization = Buffer.from(org, 'base64url').toString();
    const given = Buffer.from(mac, 'hex');
    const expected = Buffer.from(this.mac(method, url, at, organization), 'hex');
    return constantTimeEqual(given, expected) ? organization : null;
  }

  private mac(method: string, url: string, at: string, organization?: string): string {
    const text = `${method.toUpperCase()}\n${url}\n${at}${organization === undefined ? '' : `\n${organization}`}`;
    return createHmac('sha256', this.secret).update(text).digest('hex');
  }
}
