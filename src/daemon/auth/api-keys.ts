import { hash, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../../shared/constant-time.js';
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
function secretMatches(secret: string, secretHash: string): boolean {
  const presented = hash('sha256', secret, 'buffer'); // one call: half the cost of createHash().update().digest()
  const stored = Buffer.from(secretHash, 'hex');
  return constantTimeEqual(presented, stored);
}

/**
 * The secret last found to match a key, with the hash it matched (a key whose hash changed is
 * checked again). Weak: a key replaced in the state (updated, deleted) takes its entry along.
 */
const verified = new WeakMap<Pick<ApiKey, 'secretHash'>, { readonly secretHash: string; readonly secret: Buffer }>();
/** What an unknown key id is compared with, so that it costs what a known one does. */
const NO_SECRET = Buffer.alloc(43);

/**
 * Whether `secret` is the secret of `key` (null: no such key). Once a secret has matched, a key's
 * next requests compare against it byte for byte, in constant time, instead of hashing again: the
 * same answer (only that secret has that SHA-256), far cheaper than a hash, on every request
 * (docs/decisions/009-http-per-request-costs.md). An unknown key id gets the same compare, so
 * it costs what a key in use does; only the first check of a key after a start hashes (ids are
 * 64 random bits: timing that tells such a key apart does not help to find one). The daemon
 * holds each presented secret in memory while it checks it anyway.
 */
export function keyMatches(secret: string, key: Pick<ApiKey, 'secretHash'> | null): boolean {
  const presented = Buffer.from(secret, 'latin1');
  const known = key === null ? undefined : verified.get(key);
  if (key === null || (known !== undefined && known.secretHash === key.secretHash)) {
    const against = known?.secret ?? NO_SECRET;
    // Every secret has 43 characters (parseApiKey), so the length check tells nothing.
    return constantTimeEqual(presented, against) && key !== null;
  }
  if (!secretMatches(secret, key.secretHash)) return false;
  verified.set(key, { secretHash: key.secretHash, secret: presented });
  return true;
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
