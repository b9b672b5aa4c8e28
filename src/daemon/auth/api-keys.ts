import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKey, Role } from '../state/state.js';

/** A freshly made key: the full credential is shown once, only its hash is stored. */
export interface NewKeySecret {
  readonly keyId: string;
  /** `apk_{keyId}_{secret}`: what the caller sends in X-API-Key. */
  readonly apiKey: string;
  readonly secretHash: string;
}

const API_KEY_RE = /^apk_([a-z0-9]{16})_([A-Za-z0-9_-]{43})$/;

/** Makes a new key id and secret from the OS CSPRNG (16 hex chars of id, 256 bits of secret). */
export function generateApiKey(): NewKeySecret {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { keyId, apiKey: `apk_${keyId}_${secret}`, secretHash: hashSecret(secret) };
}

/** Splits an X-API-Key value into key id and secret; null when it is not of the form. */
export function parseApiKey(value: string): { keyId: string; secret: string } | null {
  const m = API_KEY_RE.exec(value);
  return m ? { keyId: m[1]!, secret: m[2]! } : null;
}

/**
 * SHA-256 of a secret, hex. A fast hash is right here: secrets are 256 random bits, so there is
 * nothing to brute-force, and a slow password hash would be paid on every request.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Compares a presented secret with a stored hash in constant time. */
export function secretMatches(secret: string, secretHash: string): boolean {
  const presented = hash('sha256', secret, 'buffer'); // one call: half the cost of createHash().update().digest()
  const stored = Buffer.from(secretHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

/**
 * A new ACTIVE key's record and its one-time credential. Pure but for the randomness of
 * generateApiKey. Used by the bootstrap, the admin API and tests, so a key is always built alike.
 */
export function newApiKey(options: {
  name: string;
  organization: string | null;
  role: Role;
  at: Date;
  rateLimitPerMinute?: number | null;
  rateLimitPerHour?: number | null;
  expiresAt?: string | null;
}): { key: ApiKey; apiKey: string } {
  const { keyId, apiKey, secretHash } = generateApiKey();
  const at = options.at.toISOString();
  return {
    apiKey,
    key: {
      keyId,
      name: options.name,
      organization: options.organization,
      role: options.role,
      secretHash,
      status: 'ACTIVE',
      rateLimitPerMinute: options.rateLimitPerMinute ?? null,
      rateLimitPerHour: options.rateLimitPerHour ?? null,
      expiresAt: options.expiresAt ?? null,
      createdAt: at,
      updatedAt: at,
    },
  };
}
