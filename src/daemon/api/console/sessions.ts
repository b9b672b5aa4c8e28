/**
 * The console's sessions: the browser holds only an opaque random id in an HttpOnly cookie; the
 * credential behind it (an API key's id, or an OIDC provider's tokens) stays in the daemon
 * (docs/decisions/054-console-sessions.md). A session stands for exactly one identity, and every
 * request made with it is checked as that identity's own request would be: an API key session
 * re-reads its key each time (suspending or revoking the key ends it), an OIDC session carries
 * the caller its access token verified to, until that token expires and no refresh renews it.
 *
 * Sessions live in this daemon's memory, bounded: a restart signs everyone out.
 */
import { hash, randomBytes } from 'node:crypto';
import type { SessionInfo } from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import type { Caller } from '../caller.js';

/** The cookie the session id travels in. */
export const SESSION_COOKIE = 'wfx_session';

/** Limits on what the unauthenticated and authenticated can make the daemon hold. */
export interface SessionLimits {
  /** Sessions held at once; the least recently used is ended to make room. */
  readonly maxSessions: number;
  /** Sessions of one identity (a key, an OIDC subject); its least recently used is ended to make room. */
  readonly maxPerIdentity: number;
  /** A session unused this long ends. */
  readonly idleMs: number;
  /** A session ends this long after sign-in, however used (an OIDC session sooner, with its tokens). */
  readonly lifetimeMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxSessions: 10_000,
  maxPerIdentity: 20,
  idleMs: 12 * 3_600_000,
  lifetimeMs: 7 * 86_400_000,
};

/** An OIDC session's tokens, kept in the daemon only. */
export interface SessionTokens {
  readonly accessToken: string;
  readonly refreshToken: string | null;
  /** For RP-initiated logout's `id_token_hint`. */
  readonly idToken: string | null;
}

/** What a session stands for. */
export type SessionIdentity =
  | { readonly kind: 'apiKey'; readonly keyId: string; readonly organization: string | null }
  | {
      readonly kind: 'oidc';
      readonly subject: string | null;
      readonly organization: string | null;
      /** The caller the current access token verified to (its `expiresAtMs` is the token's). */
      readonly caller: Caller;
      readonly tokens: SessionTokens;
    };

/** A session as the daemon holds it. */
export interface Session {
  /** The public id an administrator names it by (`ses_...`); never the cookie's value. */
  readonly id: string;
  /** How it was signed in: a one-time link, a pasted API key, an OIDC provider. */
  readonly method: 'link' | 'apiKey' | 'oidc';
  identity: SessionIdentity;
  readonly createdAtMs: number;
  lastSeenMs: number;
  readonly expiresAtMs: number;
}

/** The daemon's sessions, by the digest of their cookie value. */
export class SessionStore {
  /** By sha256 of the cookie value, least recently used first (a Map keeps insertion order). */
  private readonly byDigest = new Map<string, Session>();
  private readonly digestOfId = new Map<string, string>();

  constructor(
    readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Opens a session for `identity`; returns the cookie value (shown once, never kept). */
  open(method: Session['method'], identity: SessionIdentity): { cookie: string; session: Session } {
    const cookie = randomBytes(32).toString('base64url');
    const nowMs = this.now();
    const session: Session = {
      id: `ses_${randomBytes(9).toString('base64url')}`,
      method,
      identity,
      createdAtMs: nowMs,
      lastSeenMs: nowMs,
      expiresAtMs: nowMs + this.limits.lifetimeMs,
    };
    this.makeRoom(identityKey(identity));
    const digest = digestOf(cookie);
    this.byDigest.set(digest, session);
    this.digestOfId.set(session.id, digest);
    return { cookie, session };
  }

  /**
   * The live session a cookie value names, marked used; null when there is none (never was,
   * ended, expired: an expired one is ended here).
   */
  find(cookie: string): Session | null {
    const digest = digestOf(cookie);
    const session = this.byDigest.get(digest);
    if (!session) return null;
    const nowMs = this.now();
    if (nowMs >= session.expiresAtMs || nowMs - session.lastSeenMs >= this.limits.idleMs) {
      this.end(session.id);
      return null;
    }
    session.lastSeenMs = nowMs;
    // Most recently used last: eviction takes from the front.
    this.byDigest.delete(digest);
    this.byDigest.set(digest, session);
    return session;
  }

  /** Whether session `id` is still open (not ended, not expired); does not mark it used. */
  isOpen(id: string): boolean {
    const digest = this.digestOfId.get(id);
    const session = digest === undefined ? undefined : this.byDigest.get(digest);
    if (!session) return false;
    const nowMs = this.now();
    return nowMs < session.expiresAtMs && nowMs - session.lastSeenMs < this.limits.idleMs;
  }

  /** Ends session `id`; returns it, or null when it was not open. */
  end(id: string): Session | null {
    const digest = this.digestOfId.get(id);
    if (digest === undefined) return null;
    const session = this.byDigest.get(digest) ?? null;
    this.byDigest.delete(digest);
    this.digestOfId.delete(id);
    return session;
  }

  /** The open sessions of `organization` (null: every one), newest first. */
  list(organization: string | null): Session[] {
    const out: Session[] = [];
    for (const session of this.byDigest.values())
      if (organization === null || session.identity.organization === organization) out.push(session);
    return out.sort((a, b) => b.createdAtMs - a.createdAtMs);
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** Ends the least recently used sessions of `key` and overall until one more fits. */
  private makeRoom(key: string): void {
    let ofIdentity = 0;
    for (const session of this.byDigest.values()) if (identityKey(session.identity) === key) ofIdentity++;
    for (const session of [...this.byDigest.values()]) {
      if (ofIdentity < this.limits.maxPerIdentity) break;
      if (identityKey(session.identity) !== key) continue;
      this.end(session.id);
      ofIdentity--;
    }
    while (this.byDigest.size >= this.limits.maxSessions) {
      const oldest = this.byDigest.values().next().value as Session;
      this.end(oldest.id);
    }
  }
}

/** How GET /admin/sessions shows `session`. */
export function sessionView(session: Session): SessionInfo {
  const identity = session.identity;
  return {
    id: session.id,
    method: session.method,
    ...(identity.kind === 'apiKey' ? { keyId: identity.keyId } : { subject: identity.subject }),
    organization: identity.organization,
    createdAt: new Date(session.createdAtMs).toISOString(),
    lastSeenAt: new Date(session.lastSeenMs).toISOString(),
    expiresAt: new Date(session.expiresAtMs).toISOString(),
  };
}

/** The error a request with an ended or unknown session gets. */
export function sessionEnded(): WfxError {
  return new WfxError('UNAUTHORIZED', 'the console session has ended: sign in again');
}

function identityKey(identity: SessionIdentity): string {
  return identity.kind === 'apiKey'
    ? `key:${identity.keyId}`
    : `oidc:${identity.organization ?? ''}:${identity.subject ?? ''}`;
}

/** The map key of a cookie value: a memory dump or a debugger shows digests, not live cookies. */
function digestOf(cookie: string): string {
  return hash('sha256', cookie, 'base64url');
}
