/**
 * A request authenticated by the console's session cookie: the third credential beside
 * X-API-Key and a bearer token (api/auth.ts asks here when a request carries neither). The
 * caller is the session's identity's own, so a session may see and do exactly what that API key
 * or that provider's token may.
 */
import type { FastifyRequest } from 'fastify';
import { callerOfKey, keyLapsed } from '../auth.js';
import type { Caller } from '../caller.js';
import type { WfxState } from '../../state/state.js';
import { assertSameOrigin, readCookie } from './cookies.js';
import type { OidcLogin } from './oidc-login.js';
import { SESSION_COOKIE, sessionEnded, type Session, type SessionStore } from './sessions.js';

export interface SessionAuthDeps {
  readonly sessions: SessionStore;
  readonly state: WfxState;
  /** Renews an OIDC session's tokens; without it, an OIDC session ends with its access token. */
  readonly login?: OidcLogin;
  readonly now: () => Date;
}

/**
 * The caller of a request's session cookie, or null when it carries none. Throws
 * CROSS_SITE_REQUEST for a request not from the console's own pages, UNAUTHORIZED for an ended
 * session or a credential behind it that no longer holds.
 */
export function sessionAuthenticator(
  deps: SessionAuthDeps,
): (request: FastifyRequest) => Caller | Promise<Caller> | null {
  /** Refreshes in flight, one per session: the page's parallel requests share it. */
  const refreshing = new Map<string, Promise<Caller>>();

  const keyCaller = (session: Session, keyId: string, now: Date): Caller => {
    const key = deps.state.apiKeys[keyId];
    const lapsed = key ? keyLapsed(key, now) : sessionEnded();
    if (lapsed) {
      deps.sessions.end(session.id);
      throw lapsed;
    }
    return withSession(callerOfKey(key!), session);
  };

  const renew = (session: Session): Promise<Caller> => {
    let renewal = refreshing.get(session.id);
    if (renewal) return renewal;
    const identity = session.identity;
    if (identity.kind !== 'oidc' || !deps.login) {
      deps.sessions.end(session.id);
      return Promise.reject(sessionEnded());
    }
    renewal = deps.login
      .refresh(identity.tokens)
      .then(({ caller, tokens }) => {
        session.identity = { ...identity, caller, tokens };
        return withSession(caller, session);
      })
      .catch((err: unknown) => {
        deps.sessions.end(session.id);
        throw err;
      })
      .finally(() => refreshing.delete(session.id));
    refreshing.set(session.id, renewal);
    return renewal;
  };

  return (request) => {
    const cookie = readCookie(request, SESSION_COOKIE);
    if (cookie === null) return null;
    assertSameOrigin(request);
    const session = deps.sessions.find(cookie);
    if (!session) throw sessionEnded();
    const now = deps.now();
    const identity = session.identity;
    if (identity.kind === 'apiKey') return keyCaller(session, identity.keyId, now);
    const expiresAtMs = identity.caller.expiresAtMs;
    if (expiresAtMs !== undefined && expiresAtMs <= now.getTime()) return renew(session);
    return withSession(identity.caller, session);
  };

  function withSession(caller: Caller, session: Session): Caller {
    return {
      ...caller,
      session: {
        id: session.id,
        lapsed: () => (deps.sessions.isOpen(session.id) ? null : sessionEnded()),
      },
    };
  }
}
