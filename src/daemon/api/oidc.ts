import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { WfxError } from '../../shared/errors.js';
import { isOrganizationName } from '../../shared/names.js';
import type { BearerVerifier } from './auth.js';
import type { Caller } from './caller.js';
import { ROLE_PERMISSIONS, type Permission, type Role } from '../state/state.js';

export interface OidcOptions {
  /** The issuer URL; its discovery document is `${issuer}/.well-known/openid-configuration`. */
  readonly issuer: string;
  /** The audience tokens must carry (the `aud` claim). */
  readonly audience: string;
  /** The claim that names the organization (default `org_id`). */
  readonly orgClaim?: string;
  /** The clock (tests move it to expire tokens). */
  readonly now?: () => Date;
  /** Least time between two JWKS fetches on an unknown key id (default 30 s; key rotation). */
  readonly jwksCooldownMs?: number;
}

const PERMISSIONS = new Set<string>(Object.values(ROLE_PERMISSIONS).flat());
const SKEW_SECONDS = 60;

/**
 * A verifier of bearer JWTs issued by an OIDC provider: signature against the issuer's JWKS
 * (found by discovery, fetched lazily and again when a token names an unknown key: rotation),
 * issuer, audience, expiry and not-before with 60 s of skew. The organization comes from
 * `orgClaim`, permissions from a `permissions` claim (array or space-separated) and/or the
 * permissions of the roles in a `roles` claim. Failures are WfxError UNAUTHORIZED saying why.
 */
export function createOidcVerifier(options: OidcOptions): BearerVerifier {
  const issuer = options.issuer.replace(/\/$/, '');
  const orgClaim = options.orgClaim ?? 'org_id';
  let jwks: ReturnType<typeof createRemoteJWKSet> | null = null;
  let discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | null = null;

  const keySet = () => {
    if (jwks) return Promise.resolve(jwks);
    discovering ??= (async () => {
      const url = `${issuer}/.well-known/openid-configuration`;
      let doc: { issuer?: string; jwks_uri?: string };
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        doc = (await res.json()) as typeof doc;
      } catch (err) {
        throw new WfxError('UNAUTHORIZED', `cannot read the OIDC discovery document ${url}: ${(err as Error).message}`);
      }
      if (typeof doc.jwks_uri !== 'string')
        throw new WfxError('UNAUTHORIZED', `the OIDC discovery document ${url} has no jwks_uri`);
      jwks = createRemoteJWKSet(new URL(doc.jwks_uri), {
        cooldownDuration: options.jwksCooldownMs ?? 30_000,
        timeoutDuration: 5000,
      });
      return jwks;
    })().finally(() => {
      discovering = null;
    });
    return discovering;
  };

  return async (token: string): Promise<Caller> => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await keySet(), {
        issuer: options.issuer,
        audience: options.audience,
        clockTolerance: SKEW_SECONDS,
        currentDate: options.now?.(),
        // jose checks `exp` only when a token has one: a token that never expires is refused.
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw new WfxError('UNAUTHORIZED', `invalid bearer token: ${describe(err)}`);
    }
    const org = payload[orgClaim];
    if (typeof org !== 'string' || org === '')
      throw new WfxError('UNAUTHORIZED', `the bearer token has no ${orgClaim} claim naming an organization`);
    if (!isOrganizationName(org))
      throw new WfxError('UNAUTHORIZED', `the bearer token's ${orgClaim} claim is not a valid organization name`);
    return {
      kind: 'jwt',
      keyId: null,
      subject: typeof payload.sub === 'string' ? payload.sub : null,
      ...(typeof payload.iss === 'string' && { issuer: payload.iss }),
      organization: org,
      system: false,
      permissions: permissionsOf(payload),
      expiresAtMs: (payload.exp! + SKEW_SECONDS) * 1000,
    };
  };
}

function permissionsOf(payload: JWTPayload): Set<Permission> {
  const out = new Set<Permission>();
  const raw = payload.permissions;
  const listed = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(' ') : [];
  for (const p of listed) if (typeof p === 'string' && PERMISSIONS.has(p)) out.add(p as Permission);
  const roles = Array.isArray(payload.roles) ? payload.roles : [];
  for (const role of roles) {
    if (typeof role === 'string' && Object.hasOwn(ROLE_PERMISSIONS, role))
      for (const p of ROLE_PERMISSIONS[role as Role]) out.add(p);
  }
  return out;
}

function describe(err: unknown): string {
  if (err instanceof WfxError) return err.message;
  if (err instanceof joseErrors.JWTExpired) return 'it has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `its ${err.claim} claim is not accepted (${err.reason})`;
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'it is signed by a key the issuer does not publish';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (err instanceof joseErrors.JOSEError) return err.message;
  return 'it cannot be read';
}
