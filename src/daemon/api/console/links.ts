/**
 * One-time sign-in links (`wfx console`): a random token, good once and for a short time,
 * that becomes a console session of the API key that asked for it, the way a Jupyter server's
 * token link does. Only the token's digest is kept. Looking a link up (`peek`) leaves it good;
 * only signing in with it (`use`) uses it up.
 */
import { hash, randomBytes } from 'node:crypto';

/** How long a link may wait to be opened. */
export const LINK_TTL_MS = 2 * 60_000;
/** Links waiting at once; the oldest is dropped to make room. */
const MAX_LINKS = 100;

interface Link {
  readonly keyId: string;
  readonly expiresAtMs: number;
}

/** The links made and not yet opened. */
export class SignInLinks {
  private readonly links = new Map<string, Link>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A new link's token for API key `keyId`, and when it expires. */
  make(keyId: string): { token: string; expiresAtMs: number } {
    const token = randomBytes(32).toString('base64url');
    const nowMs = this.now();
    for (const [digest, link] of this.links) if (link.expiresAtMs <= nowMs) this.links.delete(digest);
    while (this.links.size >= MAX_LINKS) this.links.delete(this.links.keys().next().value!);
    const expiresAtMs = nowMs + LINK_TTL_MS;
    this.links.set(digestOf(token), { keyId, expiresAtMs });
    return { token, expiresAtMs };
  }

  /**
   * The key id of link `token` without using it up (the page that asks before signing in shows
   * whose it is); null for one unknown, used or expired.
   */
  peek(token: string): string | null {
    const link = this.links.get(digestOf(token));
    return link && link.expiresAtMs > this.now() ? link.keyId : null;
  }

  /** The key id of link `token`, which it uses up; null for one unknown, used or expired. */
  use(token: string): string | null {
    const digest = digestOf(token);
    const link = this.links.get(digest);
    this.links.delete(digest);
    return link && link.expiresAtMs > this.now() ? link.keyId : null;
  }
}

function digestOf(token: string): string {
  return hash('sha256', token, 'base64url');
}
