import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider, { type ClientMetadata, type KoaContextWithOIDC } from 'oidc-provider';
import type { Page } from 'playwright-core';
import type { Test } from 'tap';

/** Claims each test client's tokens carry, by client id. */
export const CLIENT_CLAIMS: Record<string, Record<string, unknown>> = {
  'acme-operator': { org_id: 'acme', roles: ['operator'] },
  'acme-reader': { org_id: 'acme', permissions: 'WORKFLOW_READ' },
  'no-org': { roles: ['admin'] },
};

/**
 * The people who sign in at the provider's login page (authorization code flow), by login
 * name, and the claims their access tokens carry. Every one's password is ACCOUNT_PASSWORD.
 */
export const ACCOUNTS: Record<string, Record<string, unknown>> = {
  'alice@acme': { org_id: 'acme', roles: ['operator'] },
  'bob@globex': { org_id: 'globex', roles: ['operator'] },
  'rita@acme': { org_id: 'acme', permissions: 'WORKFLOW_READ' },
};

/** The password of every account of ACCOUNTS. */
export const ACCOUNT_PASSWORD = 'test-password';

/** A browser application signing in with the authorization code flow (PKCE always required). */
export interface BrowserClient {
  readonly clientId: string;
  /** The one redirect URI allowed (the daemon's `/auth/callback`). */
  readonly redirectUri: string;
  /** Where RP-initiated logout may send the browser back to. */
  readonly postLogoutRedirectUri?: string;
  /** A confidential client's secret; without it the client is public (no client authentication). */
  readonly secret?: string;
  /** How a confidential client authenticates at the token endpoint (default client_secret_basic). */
  readonly authMethod?: 'client_secret_basic' | 'client_secret_post';
}

/** Lifetimes in seconds: short ones let a test see a token expire or refresh. */
export interface IssuerOptions {
  /** Access tokens (default 300). */
  readonly accessTokenTTL?: number;
  /** Refresh tokens (default 3600). */
  readonly refreshTokenTTL?: number;
  /** The provider's own sign-in session (default 3600). */
  readonly sessionTTL?: number;
}

export interface TestIssuer {
  readonly issuer: string;
  /** An access token (a JWT) from the client_credentials grant, for `resource` (its audience). */
  token(clientId: keyof typeof CLIENT_CLAIMS, resource?: string): Promise<string>;
  /** Replaces the issuer's signing key (key rotation): new tokens carry a new key id. */
  rotate(): Promise<void>;
  /**
   * A JWT with exactly `claims` (issuer and audience added), signed with the issuer's current
   * key: for tokens a provider would not issue (no expiry, say).
   */
  sign(claims: JWTPayload): Promise<string>;
  /**
   * Registers a browser client (public, or confidential with `secret`): authorization code
   * with PKCE, refresh tokens, RP-initiated logout to `postLogoutRedirectUri`. Its access tokens
   * are JWTs for AUDIENCE carrying the signed-in account's claims (ACCOUNTS). Sign-ins in
   * progress and signed-in sessions survive it.
   */
  addBrowserClient(client: BrowserClient): Promise<void>;
}

export const AUDIENCE = 'https://wfx.test/api';

async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

/**
 * A real OIDC provider (oidc-provider) on 127.0.0.1, issuing JWT access tokens: to clients
 * (client_credentials, CLIENT_CLAIMS) and, through its own login page, to the people of ACCOUNTS
 * signing in at a browser client (`addBrowserClient`, `signInAtProvider`).
 */
export async function startIssuer(t: Test, options: IssuerOptions = {}): Promise<TestIssuer> {
  let provider: Provider | null = null;
  const server = createServer((req, res) => {
    if (provider === null) return void res.writeHead(503).end();
    interactions(provider, req, res).then(
      (handled) => void (handled || provider!.callback()(req, res)),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.close();
    // A browser's kept-alive and preconnected sockets would hold close() until they time out.
    server.closeAllConnections();
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const accessTokenTTL = options.accessTokenTTL ?? 300;
  const cookieKeys = [randomBytes(32).toString('base64url')];
  const browserClients: ClientMetadata[] = [];
  let generation = 0;
  let key = await signingKey(`key-${++generation}`);
  // The provider is built anew for each change; its sessions, grants and tokens live in
  // oidc-provider's in-memory store, shared by every instance of this process, and its cookies
  // are signed with this issuer's keys, so a browser mid-sign-in carries on.
  const configure = () => {
    provider = new Provider(issuer, {
      clients: [
        ...Object.keys(CLIENT_CLAIMS).map((client_id) => ({
          client_id,
          client_secret: 'test-secret',
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
        })),
        ...browserClients,
      ],
      cookies: { keys: cookieKeys },
      findAccount: (_ctx, sub) =>
        ACCOUNTS[sub] ? { accountId: sub, claims: () => ({ sub, preferred_username: sub }) } : undefined,
      claims: { openid: ['sub'], profile: ['preferred_username'] },
      features: {
        clientCredentials: { enabled: true },
        devInteractions: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => AUDIENCE,
          // The token endpoint issues for the granted audience without a `resource` parameter.
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({
            scope: 'api',
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL,
          }),
        },
        rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource },
      },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      pkce: { required: () => true },
      // Refresh tokens without `offline_access` (which needs prompt=consent): what a daemon
      // keeping a session alive asks for.
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string; accountId?: string }) =>
        token.accountId ? ACCOUNTS[token.accountId] : (CLIENT_CLAIMS[token.clientId ?? ''] ?? {}),
      ttl: {
        AccessToken: accessTokenTTL,
        ClientCredentials: accessTokenTTL,
        AuthorizationCode: 60,
        IdToken: accessTokenTTL,
        RefreshToken: options.refreshTokenTTL ?? 3600,
        Interaction: 600,
        Session: options.sessionTTL ?? 3600,
        Grant: options.sessionTTL ?? 3600,
      },
      clientBasedCORS: () => false,
      renderError,
      jwks: { keys: [key] },
    });
  };
  configure();
  return {
    issuer,
    async token(clientId, resource = AUDIENCE) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:test-secret`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'api' }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`the issuer refused a token: ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    async rotate() {
      key = await signingKey(`key-${++generation}`);
      configure();
    },
    async sign(claims) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.kid! })
        .setIssuer(issuer)
        .setAudience(AUDIENCE)
        .sign(await importJWK(key, 'RS256'));
    },
    async addBrowserClient(client) {
      const index = browserClients.findIndex((c) => c.client_id === client.clientId);
      if (index >= 0) browserClients.splice(index, 1);
      browserClients.push({
        client_id: client.clientId,
        ...(client.secret === undefined
          ? { token_endpoint_auth_method: 'none' }
          : { client_secret: client.secret, token_endpoint_auth_method: client.authMethod ?? 'client_secret_basic' }),
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [client.redirectUri],
        post_logout_redirect_uris: client.postLogoutRedirectUri ? [client.postLogoutRedirectUri] : [],
      });
      configure();
    },
  };
}

/**
 * The provider's login page and its answer (`/interaction/:uid`, `/interaction/:uid/login`);
 * consent is given at once (the test clients are first-party). False for every other request.
 */
async function interactions(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(path);
  if (!match) return false;
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'consent') {
    const grant =
      (details.grantId && (await provider.Grant.find(details.grantId))) ||
      new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(resource, scopes.join(' '));
    await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } });
    return true;
  }
  if (match[2] && req.method === 'POST') {
    const form = new URLSearchParams(await readBody(req));
    const login = form.get('login') ?? '';
    if (ACCOUNTS[login] && form.get('password') === ACCOUNT_PASSWORD) {
      await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
      return true;
    }
    page(res, 200, 'Sign in', loginForm(details.uid, login, 'Unknown login or wrong password.'));
    return true;
  }
  page(res, 200, 'Sign in', loginForm(details.uid, ''));
  return true;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function loginForm(uid: string, login: string, error?: string): string {
  return `<h1>Sign in to the test provider</h1>
${error ? `<p role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}/login">
<p><label for="login">Login</label> <input id="login" name="login" autocomplete="username" value="${escape(login)}" required></p>
<p><label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p>
</form>`;
}

/** The provider's pages: plain HTML, no script and nothing fetched from anywhere. */
function page(res: ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)} · test provider</title></head>
<body><main>${body}</main></body></html>`);
}

function html(ctx: KoaContextWithOIDC, title: string, body: string, script = ''): void {
  ctx.type = 'html';
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)} · test provider</title></head>
<body><main>${body}</main>${script}</body></html>`;
}

/**
 * RP-initiated logout's confirmation, confirmed at once: the form signs the person out of the
 * provider (`logout=yes`) and submits itself, so a test's sign-out needs no click here.
 */
async function logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  const confirmed = form.replace(
    '</form>',
    '<input type="hidden" name="logout" value="yes"><button type="submit">Sign out</button></form>',
  );
  html(ctx, 'Signing out', `<h1>Signing out</h1>${confirmed}`, '<script>document.forms[0].submit()</script>');
}

async function postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
  html(ctx, 'Signed out', '<h1>Signed out</h1><p>You are signed out of the test provider.</p>');
}

async function renderError(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }): Promise<void> {
  html(
    ctx,
    'Error',
    `<h1>Error</h1><p id="error">${escape(out.error)}</p><p>${escape(out.error_description ?? '')}</p>`,
  );
}

/**
 * Signs in as `login` (an ACCOUNTS name) on the provider's login page, where `page` is (or is
 * going: the redirect from the application's sign-in), and waits until the provider has sent the
 * browser back to the application (another origin than the provider's).
 */
export async function signInAtProvider(page: Page, login: string, password = ACCOUNT_PASSWORD): Promise<void> {
  await page.waitForURL((url) => url.pathname.startsWith('/interaction/'));
  const provider = new URL(page.url()).origin;
  await page.getByLabel('Login').fill(login);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const refused = page.getByRole('alert');
  // Whichever comes first: back at the application, or the login page saying no.
  const back = page.waitForURL((url) => url.origin !== provider).then(() => true);
  const failed = refused.waitFor().then(
    () => false,
    () => true, // the page moved on (or closed): `back` tells
  );
  if (!(await Promise.race([back, failed])))
    throw new Error(`the provider refused ${login}: ${await refused.textContent()}`);
}
