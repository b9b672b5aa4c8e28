/**
 * The console's OIDC client: the authorization code flow with PKCE, `state` and `nonce`, run by
 * the daemon (a backend for the browser app: the tokens never reach the page), token refresh,
 * and RP-initiated logout. openid-client does the protocol; this keeps what a sign-in in
 * progress needs between the redirect to the provider and its answer at /auth/callback.
 */
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { WfxError, errorMessage } from '../../../shared/errors.js';
import type { BearerVerifier } from '../auth.js';
import type { Caller } from '../caller.js';
import type { SessionTokens } from './sessions.js';

/** The daemon options of the console's OIDC client (SPEC.md section 10). */
export interface OidcClientOptions {
  /** The issuer, as `--oidc-issuer` names it for bearer tokens. */
  readonly issuer: string;
  readonly clientId: string;
  /** A confidential client's secret (`--oidc-client-secret-file`, `WFX_OIDC_CLIENT_SECRET`); none: a public client. */
  readonly clientSecret?: string;
  /** Space-separated (`--oidc-scopes`; default `openid profile email offline_access`). */
  readonly scopes?: string;
}

/** A sign-in between the redirect to the provider and its answer. */
interface PendingLogin {
  readonly codeVerifier: string;
  readonly nonce: string;
  /** The value of the sign-in's own Lax cookie: a callback from another browser is refused. */
  readonly binding: string;
  readonly returnTo: string;
  readonly expiresAtMs: number;
}

/** A sign-in's answer from the provider, verified: who, and the tokens. */
export interface OidcSignIn {
  readonly caller: Caller;
  readonly tokens: SessionTokens;
  readonly returnTo: string;
}

/** How long a sign-in may take at the provider. */
const PENDING_MS = 10 * 60_000;
/** Sign-ins in progress held at once (anyone may start one): the oldest is dropped to make room. */
const MAX_PENDING = 1_000;

export const DEFAULT_SCOPES = 'openid profile email offline_access';

/** The cookie that binds a sign-in in progress to the browser that began it. */
export const LOGIN_COOKIE = 'wfx_login';

/** The console's OIDC client. */
export class OidcLogin {
  private config: Promise<oidc.Configuration> | null = null;
  private readonly pending = new Map<string, PendingLogin>();

  constructor(
    private readonly options: OidcClientOptions,
    /** Verifies an access token as the API does a bearer token: the session's caller is that token's. */
    private readonly verify: BearerVerifier,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Begins a sign-in: the provider's authorization URL to redirect to, and the binding cookie's
   * value to set. `redirectUri` is this daemon's /auth/callback as the browser reaches it.
   */
  async begin(redirectUri: string, returnTo: string): Promise<{ url: string; binding: string }> {
    const config = await this.configuration();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const binding = randomBytes(16).toString('base64url');
    this.sweep();
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(state, { codeVerifier, nonce, binding, returnTo, expiresAtMs: this.now() + PENDING_MS });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.options.scopes ?? DEFAULT_SCOPES,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, binding };
  }

  /**
   * Completes a sign-in from the provider's redirect (`callbackUrl`, its whole URL): the state
   * names a sign-in this daemon began in this browser (`binding`), the code is exchanged with
   * its PKCE verifier, the ID token's nonce checked, and the access token verified as the API
   * verifies bearer tokens. Throws UNAUTHORIZED saying which check failed.
   */
  async complete(callbackUrl: URL, binding: string | null): Promise<OidcSignIn> {
    const error = callbackUrl.searchParams.get('error');
    if (error !== null) {
      const description = callbackUrl.searchParams.get('error_description');
      throw new WfxError(
        'UNAUTHORIZED',
        `the identity provider refused: ${error}${description ? `: ${description}` : ''}`,
      );
    }
    const state = callbackUrl.searchParams.get('state') ?? '';
    const login = this.pending.get(state);
    this.pending.delete(state);
    if (!login || login.expiresAtMs <= this.now())
      throw new WfxError('UNAUTHORIZED', 'this sign-in is unknown or took too long: start it again');
    if (binding !== login.binding)
      throw new WfxError('UNAUTHORIZED', 'this sign-in was begun in another browser: start it again');
    const config = await this.configuration();
    let answer: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      answer = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: login.codeVerifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw new WfxError('UNAUTHORIZED', `the identity provider's answer was refused: ${errorMessage(err)}`);
    }
    const tokens = tokensOf(answer, null);
    return { caller: await this.callerOf(tokens.accessToken), tokens, returnTo: login.returnTo };
  }

  /** New tokens for `tokens` by its refresh token, and their caller; throws UNAUTHORIZED when there is none or the provider refuses. */
  async refresh(tokens: SessionTokens): Promise<{ caller: Caller; tokens: SessionTokens }> {
    if (tokens.refreshToken === null) throw new WfxError('UNAUTHORIZED', 'the sign-in has expired: sign in again');
    let answer: Awaited<ReturnType<typeof oidc.refreshTokenGrant>>;
    try {
      answer = await oidc.refreshTokenGrant(await this.configuration(), tokens.refreshToken);
    } catch (err) {
      throw new WfxError('UNAUTHORIZED', `the sign-in could not be renewed: ${errorMessage(err)}`);
    }
    const renewed = tokensOf(answer, tokens);
    return { caller: await this.callerOf(renewed.accessToken), tokens: renewed };
  }

  /** Where to send the browser to end its session at the provider too, or null when the provider has no end_session_endpoint. */
  async endSessionUrl(tokens: SessionTokens | null, postLogoutRedirectUri: string): Promise<string | null> {
    const config = await this.configuration();
    if (!config.serverMetadata().end_session_endpoint) return null;
    return oidc.buildEndSessionUrl(config, {
      post_logout_redirect_uri: postLogoutRedirectUri,
      client_id: this.options.clientId,
      ...(tokens?.idToken && { id_token_hint: tokens.idToken }),
    }).href;
  }

  private async callerOf(accessToken: string): Promise<Caller> {
    try {
      return await this.verify(accessToken);
    } catch (err) {
      throw new WfxError(
        'UNAUTHORIZED',
        `the provider's access token is not accepted by this daemon: ${errorMessage(err)}`,
      );
    }
  }

  /** The provider's metadata, found once by discovery (again after a failure). */
  private configuration(): Promise<oidc.Configuration> {
    this.config ??= discover(this.options).catch((err: unknown) => {
      this.config = null;
      throw err;
    });
    return this.config;
  }

  private sweep(): void {
    const nowMs = this.now();
    for (const [state, login] of this.pending) if (login.expiresAtMs <= nowMs) this.pending.delete(state);
  }
}

async function discover(options: OidcClientOptions): Promise<oidc.Configuration> {
  const issuer = new URL(options.issuer);
  const auth = options.clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(options.clientSecret);
  try {
    return await oidc.discovery(issuer, options.clientId, options.clientSecret, auth, {
      timeout: 5,
      // Plain HTTP only to a provider on this machine (a development one); anywhere else, HTTPS.
      ...(isLoopback(issuer) && { execute: [oidc.allowInsecureRequests] }),
    });
  } catch (err) {
    throw new WfxError('SERVICE_UNAVAILABLE', `cannot reach the OIDC provider ${options.issuer}: ${errorMessage(err)}`);
  }
}

function isLoopback(url: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

function tokensOf(
  answer: { access_token: string; refresh_token?: string; id_token?: string },
  before: SessionTokens | null,
): SessionTokens {
  return {
    accessToken: answer.access_token,
    // A provider that does not rotate refresh tokens answers a refresh without one: keep the old.
    refreshToken: answer.refresh_token ?? before?.refreshToken ?? null,
    idToken: answer.id_token ?? before?.idToken ?? null,
  };
}
