/**
 * Signing in to the console and out: a one-time link (`wfx console`), an API key pasted once,
 * or the OIDC authorization code flow through /auth/callback; and the sessions an administrator
 * sees and revokes. The session cookie is HttpOnly and SameSite=Strict; no credential is put in
 * a URL, localStorage or sessionStorage, and the page never holds one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import {
  LoginQuery,
  SessionBody,
  SessionParams,
  type ConsoleAuthConfig,
  type SessionInfo,
  type SignedIn,
  type SignedOut,
  type SignInLink,
} from '../../../shared/api/index.js';
import { WfxError, errorMessage } from '../../../shared/errors.js';
import { safeReturnTo } from '../../../shared/return-to.js';
import { authenticateApiKey, callerOfKey } from '../auth.js';
import { whoAmI } from '../caller.js';
import { listedOrganization } from '../organization.js';
import type { WfxState } from '../../state/state.js';
import { ownOrigin } from '../public-origin.js';
import { assertSameOrigin, cookieHeader, cookieValues, readCookie } from './cookies.js';
import { htmlAnswer, signInPage } from './html-answers.js';
import { linkRoutes } from './link-routes.js';
import type { SignInLinks } from './links.js';
import { LOGIN_COOKIE, type OidcLogin } from './oidc-login.js';
import { SESSION_COOKIE, sessionView, type Session, type SessionIdentity, type SessionStore } from './sessions.js';

export interface SignInRouteDeps {
  readonly state: WfxState;
  readonly sessions: SessionStore;
  readonly links: SignInLinks;
  /** The OIDC client, when one is configured (`--oidc-client-id`). */
  readonly login?: OidcLogin;
  readonly now: () => Date;
}

const NONE = { auth: { permission: 'none' as const } };
const ADMIN = { auth: { permission: 'ADMIN' as const } };

/**
 * A route hook for answers about a session that need no credential to ask for (a sign-in, a
 * sign-out): never stored, as every authenticated answer (api/auth.ts).
 */
function noStore(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  void reply.header('cache-control', 'no-store');
  done();
}

/** Installs /auth/config, /auth/session, /auth/links, /auth/link (link-routes.ts), /auth/login, /auth/callback, /auth/signout and /admin/sessions. */
export function signInRoutes(fastify: FastifyInstance, deps: SignInRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { sessions, login } = deps;

  /** Opens a session and sets its cookie; the cookie lives as long as the session may. */
  const signIn = (
    request: FastifyRequest,
    reply: FastifyReply,
    method: Session['method'],
    identity: SessionIdentity,
  ) => {
    const { cookie, session } = sessions.open(method, identity);
    const maxAgeSeconds = Math.floor((session.expiresAtMs - session.createdAtMs) / 1000);
    void reply.header(
      'set-cookie',
      cookieHeader(request, SESSION_COOKIE, cookie, { sameSite: 'Strict', maxAgeSeconds }),
    );
    return session;
  };
  const keyIdentity = (keyId: string): SessionIdentity => ({
    kind: 'apiKey',
    keyId,
    organization: deps.state.apiKeys[keyId]?.organization ?? null,
  });

  app.get('/auth/config', {
    config: NONE,
    schema: { tags: ['console'], summary: 'The ways to sign in to the console' },
    handler: async (): Promise<ConsoleAuthConfig> => ({ oidc: login !== undefined, apiKey: true, link: true }),
  });

  app.post('/auth/session', {
    config: NONE,
    schema: {
      tags: ['console'],
      summary: 'Sign in to the console with an API key: a session cookie of that key',
      body: SessionBody,
    },
    onRequest: noStore,
    handler: async (request, reply): Promise<SignedIn> => {
      // A sign-in form on another site must not sign this browser in as its author (login CSRF).
      assertSameOrigin(request);
      // The session it replaces ends (a cookie sent twice is refused: DUPLICATE_COOKIE).
      const replaced = readCookie(request, SESSION_COOKIE);
      const key = authenticateApiKey(deps.state, request.body.apiKey, deps.now());
      const old = replaced === null ? null : sessions.find(replaced);
      if (old) sessions.end(old.id);
      const session = signIn(request, reply, 'apiKey', keyIdentity(key.keyId));
      return { sessionId: session.id, whoami: whoAmI(callerOfKey(key)) };
    },
  });

  app.post('/auth/links', {
    config: { auth: { permission: 'any' as const } },
    schema: { tags: ['console'], summary: "A one-time console sign-in link for the caller's API key (`wfx console`)" },
    handler: async (request): Promise<SignInLink> => {
      const caller = request.caller!;
      if (caller.kind !== 'apiKey' || caller.keyId === null || caller.session)
        throw new WfxError('FORBIDDEN', 'a sign-in link is made with an API key (X-API-Key)');
      const { token, expiresAtMs } = deps.links.make(caller.keyId);
      const path = `/auth/link?token=${token}`;
      return { url: `${ownOrigin(request)}${path}`, path, expiresAt: new Date(expiresAtMs).toISOString() };
    },
  });

  linkRoutes(fastify, {
    state: deps.state,
    sessions,
    links: deps.links,
    now: deps.now,
    signIn: (request, reply, keyId) => void signIn(request, reply, 'link', keyIdentity(keyId)),
    noStore,
  });

  app.get('/auth/login', {
    config: NONE,
    schema: { hide: true, querystring: LoginQuery },
    onRequest: noStore,
    handler: async (request, reply) => {
      if (!login) throw new WfxError('NOT_FOUND', 'this daemon has no OIDC client: start it with --oidc-client-id');
      const { url, binding } = await login.begin(callbackUri(request), safeReturnTo(request.query.returnTo));
      void reply.header(
        'set-cookie',
        cookieHeader(request, LOGIN_COOKIE, binding, { sameSite: 'Lax', maxAgeSeconds: 600, path: '/auth/callback' }),
      );
      return reply.status(302).header('location', url).send();
    },
  });

  app.get('/auth/callback', {
    config: NONE,
    schema: { hide: true },
    handler: async (request, reply) => {
      void reply.header(
        'set-cookie',
        cookieHeader(request, LOGIN_COOKIE, '', { sameSite: 'Lax', maxAgeSeconds: 0, path: '/auth/callback' }),
      );
      if (!login) throw new WfxError('NOT_FOUND', 'this daemon has no OIDC client: start it with --oidc-client-id');
      let signedIn: Awaited<ReturnType<OidcLogin['complete']>>;
      try {
        signedIn = await login.complete(new URL(request.url, ownOrigin(request)), readCookie(request, LOGIN_COOKIE));
      } catch (err) {
        request.log.warn({ code: (err as WfxError).code }, `console sign-in refused: ${errorMessage(err)}`);
        return htmlAnswer(reply, 401, signInPage('Sign-in failed.', errorMessage(err)));
      }
      const { caller, tokens, returnTo } = signedIn;
      signIn(request, reply, 'oidc', {
        kind: 'oidc',
        subject: caller.subject,
        organization: caller.organization,
        caller,
        tokens,
      });
      // Not a redirect: the provider's redirect made this a cross-site navigation, and the
      // browser would hold the new SameSite=Strict cookie back from a redirect that follows it;
      // a navigation this page starts is the console's own.
      return htmlAnswer(reply, 200, signInPage('Signed in.', 'Opening the console…', returnTo));
    },
  });

  app.post('/auth/signout', {
    config: NONE,
    schema: {
      tags: ['console'],
      summary: 'End the console session (and, for an OIDC one, where to end it at the provider)',
    },
    onRequest: noStore,
    handler: async (request, reply): Promise<SignedOut> => {
      // Every session the cookie names ends, should the browser send it twice.
      const cookies = cookieValues(request.headers.cookie, SESSION_COOKIE).filter((c) => c !== '');
      let endSessionUrl: string | null = null;
      if (cookies.length > 0) assertSameOrigin(request);
      for (const cookie of cookies) {
        const session = sessions.find(cookie);
        if (!session) continue;
        sessions.end(session.id);
        if (session.identity.kind === 'oidc' && login)
          endSessionUrl = await login
            .endSessionUrl(session.identity.tokens, `${ownOrigin(request)}/sign-in`)
            .catch(() => null);
      }
      void reply.header(
        'set-cookie',
        cookieHeader(request, SESSION_COOKIE, '', { sameSite: 'Strict', maxAgeSeconds: 0 }),
      );
      return { endSessionUrl };
    },
  });

  app.get('/admin/sessions', {
    config: ADMIN,
    schema: {
      tags: ['console'],
      summary: "Console sessions open on this daemon (the caller's organization; a system key: all)",
    },
    handler: async (request): Promise<{ items: SessionInfo[] }> => ({
      items: sessions.list(listedOrganization(request.caller!, undefined)).map(sessionView),
    }),
  });

  app.post('/admin/sessions/:sessionId/revoke', {
    config: ADMIN,
    schema: { tags: ['console'], summary: 'End a console session', params: SessionParams },
    handler: async (request): Promise<SessionInfo> => {
      const caller = request.caller!;
      const session = sessions
        .list(listedOrganization(caller, undefined))
        .find((s) => s.id === request.params.sessionId);
      if (!session) throw new WfxError('NOT_FOUND', `no console session ${request.params.sessionId}`);
      sessions.end(session.id);
      return sessionView(session);
    },
  });
}

/** This daemon's /auth/callback as the browser reaches it: the redirect URI registered at the provider. */
function callbackUri(request: FastifyRequest): string {
  return `${ownOrigin(request)}/auth/callback`;
}
