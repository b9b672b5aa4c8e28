/**
 * The one-time link `wfx console` opens: GET /auth/link?token=... and, when that asks first,
 * POST /auth/link. Opened by the person themselves (typed, or handed to the browser by the CLI:
 * `Sec-Fetch-Site: none`) in a browser with no session, or with a session of the link's own key,
 * it signs in at once. Anything else (a navigation from another site, or a session of someone
 * else that it would replace) gets a page naming whose session the link opens and a button that
 * posts the token back, checked as POST /auth/session is against login CSRF. Only signing in
 * uses the token up: a prefetch or a cross-site navigation that merely reads the page cannot
 * spend it or sign anyone in with it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { LinkQuery } from '../../../shared/api/index.js';
import { keyLapsed } from '../auth.js';
import type { ApiKey, WfxState } from '../../state/state.js';
import { assertSameOrigin, cookieValues, readCookie } from './cookies.js';
import { htmlAnswer, linkConfirmPage, signInPage } from './html-answers.js';
import type { SignInLinks } from './links.js';
import { SESSION_COOKIE, type Session, type SessionStore } from './sessions.js';

export interface LinkRouteDeps {
  readonly state: WfxState;
  readonly sessions: SessionStore;
  readonly links: SignInLinks;
  readonly now: () => Date;
  /** Opens a session of API key `keyId`, by a link, and sets its cookie on `reply`. */
  readonly signIn: (request: FastifyRequest, reply: FastifyReply, keyId: string) => void;
  /** Route hooks that mark the answer as never to be stored (`Cache-Control: no-store`). */
  readonly noStore: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;
}

/** The largest form body POST /auth/link reads: a token and its name. */
const FORM_LIMIT = 1024;

/** Installs GET and POST /auth/link (hidden from /openapi.json: browser navigations, not API calls). */
export function linkRoutes(fastify: FastifyInstance, deps: LinkRouteDeps): void {
  const { sessions, links } = deps;

  /** The key of `keyId` while it may sign in, else null. */
  const liveKey = (keyId: string | null): ApiKey | null => {
    const key = keyId === null ? undefined : deps.state.apiKeys[keyId];
    return key && !keyLapsed(key, deps.now()) ? key : null;
  };
  const spent = (reply: FastifyReply) =>
    htmlAnswer(
      reply,
      401,
      signInPage('This sign-in link was used already or has expired.', 'Run `wfx console` again for a new one.'),
    );
  /** Signs in with `key` and moves the address bar on to the console (the token leaves it). */
  const signInAndGo = (request: FastifyRequest, reply: FastifyReply, key: ApiKey, replaced: readonly Session[]) => {
    for (const session of replaced) sessions.end(session.id);
    deps.signIn(request, reply, key.keyId);
    return reply.status(303).header('location', '/').send();
  };

  fastify.withTypeProvider<TypeBoxTypeProvider>().get('/auth/link', {
    config: { auth: { permission: 'none' as const } },
    schema: { hide: true, querystring: LinkQuery },
    onRequest: deps.noStore,
    handler: async (request, reply) => {
      const { token } = request.query;
      const key = liveKey(links.peek(token));
      if (!key) return spent(reply);
      const current = openSessions(request, sessions);
      if (openedByPerson(request) && current !== null && current.every((s) => isKeySession(s, key.keyId))) {
        links.use(token);
        return signInAndGo(request, reply, key, current);
      }
      const identity = { keyId: key.keyId, keyName: key.name, role: key.role, organization: key.organization };
      // Referrer-Policy same-origin, not the console's no-referrer: a browser without Fetch
      // Metadata then sends this origin as the form's Origin, which the POST checks.
      return htmlAnswer(reply, 200, linkConfirmPage(identity, token), { 'referrer-policy': 'same-origin' });
    },
  });

  // In a scope of its own: the confirmation page's form is form-encoded.
  void fastify.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_LIMIT },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.withTypeProvider<TypeBoxTypeProvider>().post('/auth/link', {
      config: { auth: { permission: 'none' as const } },
      schema: { hide: true, body: LinkQuery },
      onRequest: deps.noStore,
      handler: async (request, reply) => {
        // A form on another site must not sign this browser in as its author (login CSRF).
        assertSameOrigin(request);
        const cookie = readCookie(request, SESSION_COOKIE);
        const key = liveKey(links.use(request.body.token));
        if (!key) return spent(reply);
        const replaced = cookie === null ? null : sessions.find(cookie);
        return signInAndGo(request, reply, key, replaced ? [replaced] : []);
      },
    });
  });
}

/**
 * Whether the person started this navigation themselves (typed, pasted, or the link handed to
 * the browser by `wfx console`): a GET the browser marks `Sec-Fetch-Site: none`, and not a
 * prefetch or prerender ahead of it (`Sec-Purpose`), which must leave the link unused.
 */
function openedByPerson(request: FastifyRequest): boolean {
  const headers = request.headers;
  return (
    request.method === 'GET' &&
    headers['sec-fetch-site'] === 'none' &&
    headers['sec-purpose'] === undefined &&
    headers.purpose === undefined
  );
}

/**
 * The live sessions the request's cookies name: [] for none; null when it is not clear which
 * (the cookie sent more than once), which counts as a session someone else may hold.
 */
function openSessions(request: FastifyRequest, sessions: SessionStore): Session[] | null {
  const values = cookieValues(request.headers.cookie, SESSION_COOKIE);
  if (values.length > 1) return null;
  const session = values[0] ? sessions.find(values[0]) : null;
  return session ? [session] : [];
}

function isKeySession(session: Session, keyId: string): boolean {
  return session.identity.kind === 'apiKey' && session.identity.keyId === keyId;
}
