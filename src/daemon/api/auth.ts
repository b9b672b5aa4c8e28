import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WfxError } from '../../shared/errors.js';
import { keyMatches, parseApiKey } from '../auth/api-keys.js';
import { ROLE_PERMISSIONS, type ApiKey, type Permission, type WfxState } from '../state/state.js';
import type { Caller, RouteAuth } from './caller.js';
import type { KeyRateLimiter, RateDecision } from './rate-limit.js';

/** Verifies a bearer token; resolves to the caller or throws WfxError UNAUTHORIZED. */
export type BearerVerifier = (token: string) => Promise<Caller>;

export interface AuthOptions {
  readonly state: WfxState;
  readonly limiter: KeyRateLimiter;
  /**
   * Whether another daemon sharing the database counted `request` already (cluster/request-signing.ts): it is
   * not counted again here.
   */
  readonly counted?: (request: FastifyRequest) => boolean;
  /**
   * The organization another daemon sharing the database made `request` for, itself (cluster/request-signing.ts):
   * a request with no other credential is then that daemon's, allowed to deliver events.
   */
  readonly daemonCall?: (request: FastifyRequest) => string | null;
  /** Present when an OIDC issuer is configured. */
  readonly bearer?: BearerVerifier;
  /**
   * The caller of a request's console session cookie (console/session-auth.ts), or null when it
   * carries none; asked only when the request carries no X-API-Key and no bearer token.
   */
  readonly session?: (request: FastifyRequest) => Caller | Promise<Caller> | null;
  readonly now?: () => Date;
  /** Writes the access log's line for a request; without it, the line goes through `request.log`. */
  readonly accessLog?: (entry: AccessLogEntry) => void;
}

/** One authenticated request, as the access log records it (`"msg":"request"`). */
export interface AccessLogEntry {
  readonly reqId: string;
  readonly keyId: string | undefined;
  readonly subject: string | undefined;
  readonly organization: string | null;
  readonly method: string;
  readonly route: string | undefined;
  readonly status: number;
  readonly ms: number;
}

/** What a route without `config.auth` needs: any valid credential. */
const ANY: RouteAuth = { permission: 'any' };

/** Each role's permissions, one set per role shared by every caller with it: never add to one. */
const ROLE_SETS = new Map<ApiKey['role'], ReadonlySet<Permission>>();

function roleSet(role: ApiKey['role']): ReadonlySet<Permission> {
  let set = ROLE_SETS.get(role);
  if (!set) ROLE_SETS.set(role, (set = new Set<Permission>(ROLE_PERMISSIONS[role])));
  return set;
}

/** The caller of each key, made once per key object (a changed key is a new object in the state). */
const KEY_CALLERS = new WeakMap<ApiKey, Caller>();

/** The caller an API key stands for (the same object for every request made with it: never change one). */
export function callerOfKey(key: ApiKey): Caller {
  let caller = KEY_CALLERS.get(key);
  if (caller === undefined) KEY_CALLERS.set(key, (caller = newCaller(key)));
  return caller;
}

function newCaller(key: ApiKey): Caller {
  return {
    kind: 'apiKey',
    keyId: key.keyId,
    subject: null,
    organization: key.organization,
    system: key.organization === null,
    permissions: roleSet(key.role),
  };
}

/**
 * Checks an X-API-Key value: format, a key with that id, the secret (constant time), status,
 * expiry. Throws WfxError UNAUTHORIZED saying which check failed (never the secret).
 */
export function authenticateApiKey(state: WfxState, value: string, now: Date): ApiKey {
  const parsed = parseApiKey(value);
  if (!parsed) throw new WfxError('UNAUTHORIZED', 'the X-API-Key header is not of the form apk_{keyId}_{secret}');
  const key = state.apiKeys[parsed.keyId];
  if (!keyMatches(parsed.secret, key ?? null) || !key) throw new WfxError('UNAUTHORIZED', 'invalid API key');
  const lapsed = keyLapsed(key, now);
  if (lapsed !== null) throw lapsed;
  return key;
}

/** Why `key` is refused now (suspended, revoked, expired), or null while it is good. */
export function keyLapsed(key: ApiKey, now: Date): WfxError | null {
  if (key.status !== 'ACTIVE') return new WfxError('UNAUTHORIZED', `the API key is ${key.status.toLowerCase()}`);
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now.getTime())
    return new WfxError('UNAUTHORIZED', 'the API key has expired');
  return null;
}

/**
 * Why `caller`'s credential, accepted when its request began, no longer is (its API key
 * suspended, revoked or expired since, or its JWT expired), or null while it still holds. For
 * what outlives its request's check: an event stream asks before each event and heartbeat.
 */
export function credentialLapsed(state: WfxState, caller: Caller, now: Date): WfxError | null {
  if (caller.kind === 'daemon') return null;
  const ended = caller.session?.lapsed();
  if (ended) return ended;
  if (caller.kind === 'jwt')
    return caller.expiresAtMs !== undefined && caller.expiresAtMs <= now.getTime()
      ? new WfxError('UNAUTHORIZED', 'the bearer token has expired')
      : null;
  const key = caller.keyId === null ? undefined : state.apiKeys[caller.keyId];
  return key ? keyLapsed(key, now) : new WfxError('UNAUTHORIZED', 'invalid API key');
}

/**
 * Installs authentication, authorization and rate limiting. Each route says what it needs in
 * `config.auth`; a route without it needs any valid credential. Order: credential (401), rate
 * limit (429; every authenticated request counts), caller kind and permission (403).
 * Every authenticated request is logged with its key id (or JWT subject) and outcome, and its
 * answer says `Cache-Control: no-store`.
 */
export function installAuth(app: FastifyInstance, options: AuthOptions): void {
  const now = options.now ?? (() => new Date());
  app.decorateRequest('caller', null);

  // The hooks are the route's own, made when it is added, with its `auth` and URL in hand: read
  // per request, Fastify's `request.routeOptions` is a new 13-field object each time (and asks the
  // router about version constraints), twice a request here. Every route is added after this
  // (buildServer installs auth first), in this context or one inside it, so every route gets them;
  // a HEAD route Fastify adds for a GET gets its own.
  app.addHook('onRoute', (route) => {
    const auth: RouteAuth = route.config?.auth ?? ANY;
    if (auth.permission === 'none') return;
    route.onRequest = [authenticate(auth), ...hookList(route.onRequest)];
    route.onResponse = [logAccess(route.url), ...hookList(route.onResponse)];
  });

  // A callback hook: an API key is checked synchronously (no promise per request); only a
  // bearer token's verification waits.
  const authenticate =
    (auth: RouteAuth) => (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      // An answer for a credential is never stored by a browser or a proxy (a refusal neither).
      void reply.header('cache-control', 'no-store');
      if (auth.admit?.(request)) return done();
      let identified: Caller | Promise<Caller>;
      try {
        identified = identify(request, options, now());
      } catch (err) {
        return done(err as Error);
      }
      const admit = (caller: Caller): void => {
        let counting: void | Promise<void>;
        try {
          counting = authorize(request, reply, caller, auth, options);
        } catch (err) {
          return done(err as Error);
        }
        if (counting)
          counting.then(
            () => done(),
            (err: unknown) => done(err as Error),
          );
        else done();
      };
      if ('then' in identified)
        identified.then(admit, (err: unknown) =>
          done(err instanceof Error ? err : new WfxError('UNAUTHORIZED', 'the bearer token could not be verified')),
        );
      else admit(identified);
    };

  // With a callback, not async: nothing here waits, and a promise per request costs more.
  const logAccess = (route: string) => (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const caller = request.caller;
    if (!caller) return done();
    const entry: AccessLogEntry = {
      reqId: request.id,
      keyId: caller.keyId ?? undefined,
      subject: caller.subject ?? undefined,
      organization: caller.organization,
      method: request.method,
      route,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100, // hundredths of a millisecond: whole ones hide the tail of fast routes
    };
    if (options.accessLog) options.accessLog(entry);
    else
      request.log.info(
        {
          keyId: entry.keyId,
          subject: entry.subject,
          organization: entry.organization,
          method: entry.method,
          route: entry.route,
          status: entry.status,
          ms: entry.ms,
        },
        'request',
      );
    done();
  };
}

/** A route's hooks of one kind as a list (Fastify takes one function or several). */
export function hookList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

/**
 * Records `caller` on the request, counts it against its key's rate limit (429), and checks
 * its kind and permission against what the route needs (403). Throws WfxError, or returns a
 * promise that rejects with one while the count is made elsewhere (SharedRateLimiter).
 */
function authorize(
  request: FastifyRequest,
  reply: FastifyReply,
  caller: Caller,
  auth: RouteAuth,
  options: AuthOptions,
): void | Promise<void> {
  request.caller = caller;
  if (caller.keyId === null || options.counted?.(request)) return permit(caller, auth);
  const key = options.state.apiKeys[caller.keyId]!;
  const decision = options.limiter.hit(caller.keyId, {
    perMinute: key.rateLimitPerMinute,
    perHour: key.rateLimitPerHour,
  });
  if (decision && 'then' in decision)
    return decision.then((d) => {
      limited(reply, d);
      permit(caller, auth);
    });
  limited(reply, decision);
  permit(caller, auth);
}

/** Says `decision` in the RateLimit-* headers; throws RATE_LIMIT_EXCEEDED when it refuses. */
function limited(reply: FastifyReply, decision: RateDecision | null): void {
  if (!decision) return;
  void reply.header('RateLimit-Limit', decision.limit);
  void reply.header('RateLimit-Remaining', decision.remaining);
  void reply.header('RateLimit-Reset', decision.resetSeconds);
  if (!decision.allowed) {
    void reply.header('Retry-After', decision.retryAfterSeconds);
    throw new WfxError(
      'RATE_LIMIT_EXCEEDED',
      `rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfterSeconds} s`,
      { details: { retryAfter: decision.retryAfterSeconds } },
    );
  }
}

/** Checks the caller's kind and permission against what the route needs (403). */
function permit(caller: Caller, auth: RouteAuth): void {
  if (auth.callerKind === 'organization' && caller.system) {
    throw new WfxError('FORBIDDEN', 'a system key is not bound to an organization: use POST /process/start');
  }
  if (auth.callerKind === 'system' && !caller.system) {
    throw new WfxError('FORBIDDEN', 'an organization-scoped credential uses POST /process/exec');
  }
  if (auth.permission !== 'any' && auth.permission !== 'none' && !caller.permissions.has(auth.permission)) {
    throw new WfxError('FORBIDDEN', `this needs the ${auth.permission} permission`);
  }
}

/** The caller a request's credential stands for: at once for an API key, later for a bearer token. Throws WfxError UNAUTHORIZED. */
function identify(request: FastifyRequest, options: AuthOptions, now: Date): Caller | Promise<Caller> {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return callerOfKey(authenticateApiKey(options.state, apiKey, now));
  if (Array.isArray(apiKey)) throw new WfxError('UNAUTHORIZED', 'send one X-API-Key header');
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && /^bearer /i.test(authorization)) {
    const token = authorization.slice(7).trim();
    // An API key sent the way many hosted APIs take theirs: say where it goes, whatever is configured.
    if (token.startsWith('apk_'))
      throw new WfxError(
        'UNAUTHORIZED',
        'an API key goes in the X-API-Key header (X-API-Key: apk_{keyId}_{secret}), not in Authorization: Bearer',
      );
    if (!options.bearer)
      throw new WfxError(
        'UNAUTHORIZED',
        'bearer tokens are not accepted: this daemon has no OIDC issuer configured; send an API key as X-API-Key',
      );
    return options.bearer(token);
  }
  const session = options.session?.(request);
  if (session) return session;
  const organization = options.daemonCall?.(request);
  if (organization) return daemonCaller(organization);
  throw new WfxError(
    'UNAUTHORIZED',
    'no credential: send X-API-Key: apk_{keyId}_{secret}, or Authorization: Bearer <token>, or sign in to the console',
  );
}

/** What a daemon sharing the database may do for an organization: deliver events (WORKFLOW_EXECUTE). */
const DAEMON_PERMISSIONS: ReadonlySet<Permission> = new Set<Permission>(['WORKFLOW_EXECUTE']);

/** The caller of a request another daemon made itself for `organization`. */
function daemonCaller(organization: string): Caller {
  return {
    kind: 'daemon',
    keyId: null,
    subject: 'wfx daemon',
    organization,
    system: false,
    permissions: DAEMON_PERMISSIONS,
  };
}
