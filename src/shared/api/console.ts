/* The console's sign-in and sessions: /auth/config, /auth/session, /auth/links, /auth/link, /auth/signout, /admin/sessions. */
import { Type, type Static } from './schema.js';
import type { WhoAmI } from './meta.js';

/** GET /auth/config: the ways to sign in to the console this daemon offers. */
export interface ConsoleAuthConfig {
  /** An OIDC client is configured: /auth/login leads to the identity provider. */
  readonly oidc: boolean;
  readonly apiKey: true;
  readonly link: true;
}

/** Body of POST /auth/session: an API key, pasted once; the session keeps it in the daemon. */
export const SessionBody = Type.Object(
  { apiKey: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export type SessionBody = Static<typeof SessionBody>;

/** POST /auth/session: the session's identity (its cookie is in Set-Cookie). */
export interface SignedIn {
  readonly sessionId: string;
  readonly whoami: WhoAmI;
}

/** POST /auth/links: a one-time sign-in link, good once, until `expiresAt`. */
export interface SignInLink {
  /** The link on the daemon's address as browsers reach it (`--public-url`, else as this request named it). */
  readonly url: string;
  /** The same, as a path (a client that knows the daemon by another address joins it to its own). */
  readonly path: string;
  readonly expiresAt: string;
}

/** POST /auth/signout: where to send the browser to end the session at the identity provider too, or null. */
export interface SignedOut {
  readonly endSessionUrl: string | null;
}

/** Querystring of GET /auth/login: the console path to come back to. */
export const LoginQuery = Type.Object(
  { returnTo: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);
export type LoginQuery = Static<typeof LoginQuery>;

/** Querystring of GET /auth/link; also the form POST /auth/link sends (the link's confirmation page). */
export const LinkQuery = Type.Object({ token: Type.String({ maxLength: 200 }) }, { additionalProperties: false });
export type LinkQuery = Static<typeof LinkQuery>;

/** Path parameter of /admin/sessions/{sessionId}. */
export const SessionParams = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 100 }) });
export type SessionParams = Static<typeof SessionParams>;

/** A console session as GET /admin/sessions lists it (never its cookie). */
export interface SessionInfo {
  readonly id: string;
  readonly method: 'link' | 'apiKey' | 'oidc';
  readonly keyId?: string;
  readonly subject?: string | null;
  readonly organization: string | null;
  readonly createdAt: string;
  readonly lastSeenAt: string;
  readonly expiresAt: string;
}
