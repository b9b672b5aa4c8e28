import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import type { Test } from 'tap';

/** Claims each test client's tokens carry, by client id. */
export const CLIENT_CLAIMS: Record<string, Record<string, unknown>> = {
  'acme-operator': { org_id: 'acme', roles: ['operator'] },
  'acme-reader': { org_id: 'acme', permissions: 'WORKFLOW_READ' },
  'no-org': { roles: ['admin'] },
};

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
}

export const AUDIENCE = 'https://wfx.test/api';

async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

/** A real OIDC provider (oidc-provider) on 127.0.0.1, issuing JWT access tokens. */
export async function startIssuer(t: Test): Promise<TestIssuer> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let generation = 0;
  let key: JWK | null = null;
  const configure = async () => {
    key = await signingKey(`key-${++generation}`);
    const provider = new Provider(issuer, {
      clients: Object.keys(CLIENT_CLAIMS).map((client_id) => ({
        client_id,
        client_secret: 'test-secret',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      features: {
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => AUDIENCE,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({
            scope: 'api',
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 300,
          }),
        },
      },
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => CLIENT_CLAIMS[token.clientId ?? ''] ?? {},
      jwks: { keys: [key] },
    });
    handler = provider.callback();
  };
  await configure();
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
    rotate: configure,
    async sign(claims) {
      const jwk = key!;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid! })
        .setIssuer(issuer)
        .setAudience(AUDIENCE)
        .sign(await importJWK(jwk, 'RS256'));
    },
  };
}
