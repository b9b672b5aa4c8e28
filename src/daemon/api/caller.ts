import type { FastifyRequest } from 'fastify';
import type { WhoAmI } from '../../shared/api/index.js';
import type { WfxError } from '../../shared/errors.js';
import type { Permission } from '../state/state.js';

/** Who made a request, once authenticated. */
export interface Caller {
  /** `daemon`: another daemon sharing the database, for an organization (cluster/request-signing.ts's DAEMON_CALL). */
  readonly kind: 'apiKey' | 'jwt' | 'daemon';
  /** The API key's id (never its secret); null for a JWT. */
  readonly keyId: string | null;
  /** The JWT's subject; null for an API key. */
  readonly subject: string | null;
  /** The JWT's issuer (`iss`); absent for an API key. */
  readonly issuer?: string;
  /** The caller's organization; null for a system key (not bound to one). */
  readonly organization: string | null;
  readonly system: boolean;
  readonly permissions: ReadonlySet<Permission>;
  /** A JWT's expiry, in ms since the epoch (its `exp`, with the clock skew allowed); absent for an API key, whose status and expiry live in the state. */
  readonly expiresAtMs?: number;
  /** The console session the request came with (its cookie), when it came with one. */
  readonly session?: CallerSession;
}

/** A console session as its requests' caller knows it. */
export interface CallerSession {
  /** Its public id (`ses_...`). */
  readonly id: string;
  /** Why the session no longer holds (ended, expired), or null while it does: a stream asks before each event. */
  readonly lapsed: () => WfxError | null;
}

/** What a route requires, in its `config`. */
export interface RouteAuth {
  /** 'none': no credential needed (health, openapi, webhooks); else the permission needed. */
  readonly permission: Permission | 'none' | 'any';
  /** Only org-scoped callers (`/process/exec`) or only system keys (`/process/start`). */
  readonly callerKind?: 'organization' | 'system';
  /** Admits a request without a credential when it answers true (GET /metrics opened by the operator). */
  readonly admit?: (request: FastifyRequest) => boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on authenticated routes. */
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
}

/** GET /auth/whoami's answer for `caller`: its key id (or token subject), organization, permissions. */
export function whoAmI(c: Caller): WhoAmI {
  return {
    ...(c.keyId !== null ? { keyId: c.keyId } : { subject: c.subject }),
    organization: c.organization,
    system: c.system,
    permissions: [...c.permissions],
  };
}

/**
 * Who asked, as a recovery operation records it in the execution's history and log: `key:<id>`
 * for an API key (console sessions included), `oidc:<subject>` for a bearer token,
 * `daemon` for another daemon of the cluster acting for an organization.
 */
export function actorOf(c: Caller): string {
  if (c.kind === 'daemon') return 'daemon';
  return c.keyId !== null ? `key:${c.keyId}` : `oidc:${c.subject ?? '?'}`;
}
