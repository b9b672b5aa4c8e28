/**
 * A stored secret's envelope: AES-256-GCM with a random 96-bit IV per value, written as
 * `wfxenc:v1:<keyId>:<base64url of iv | ciphertext | tag>`. The associated data is the header
 * (`wfxenc:v1:<keyId>:`) followed by the value's context (which record and field it belongs to),
 * so a ciphertext moved to another record, or given another key id, fails authentication. Pure:
 * no I/O; the keys come in.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { WfxError } from '../../shared/errors.js';

const PREFIX = 'wfxenc:';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The length of a key file's keys: AES-256. */
export const KEY_BYTES = 32;
const ENVELOPE_RE = /^wfxenc:v1:([0-9a-f]{16}):([A-Za-z0-9_-]+)$/;

/** A key as used: its id (derived from it) and the AES key derived from it. */
export interface SecretsKey {
  /** 16 hex characters derived from the key (HKDF): names the key in envelopes and messages, reveals nothing of it. */
  readonly id: string;
  readonly aes: Buffer;
}

/**
 * The key of `raw` (KEY_BYTES random bytes, as a key file holds them). Its id and its AES key
 * are derived apart (HKDF-SHA256, distinct infos), so a wrong key can never carry the right id.
 * Throws when `raw` is not KEY_BYTES long.
 */
export function secretsKeyOf(raw: Buffer): SecretsKey {
  if (raw.length !== KEY_BYTES) throw new Error(`a secrets key is ${KEY_BYTES} bytes, not ${raw.length}`);
  const derive = (info: string, bytes: number) => Buffer.from(hkdfSync('sha256', raw, Buffer.alloc(0), info, bytes));
  return { id: derive('wfx secrets key id', 8).toString('hex'), aes: derive('wfx secrets aes-256-gcm', KEY_BYTES) };
}

/** Whether `value` is an envelope (else it is a secret stored in plain text by an earlier version). Pure. */
export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** The id of the key `value` is sealed with; null for a plain value or a malformed envelope. Pure. */
export function envelopeKeyId(value: string): string | null {
  return ENVELOPE_RE.exec(value)?.[1] ?? null;
}

function associatedData(keyId: string, context: string): Buffer {
  return Buffer.from(`${PREFIX}${VERSION}:${keyId}:${context}`, 'utf8');
}

/** Seals `plaintext` under `key` for `context` (where it is stored): a new random IV each time. */
export function seal(key: SecretsKey, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.aes, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(key.id, context));
  const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${VERSION}:${key.id}:${body.toString('base64url')}`;
}

/**
 * Opens an envelope sealed for `context` with the key `keyOf` gives for its id. Throws WfxError
 * SECRETS_KEY_MISSING when `keyOf` has no key of that id (`details.keyId`), SECRET_UNREADABLE
 * when the envelope is malformed or fails authentication (changed, moved from another context,
 * or sealed by another key). Never puts any part of the value in a message.
 */
export function open(value: string, context: string, keyOf: (id: string) => SecretsKey | undefined): string {
  const m = ENVELOPE_RE.exec(value);
  if (!m) throw new WfxError('SECRET_UNREADABLE', 'a stored secret is not a wfxenc:v1 envelope');
  const keyId = m[1]!;
  const key = keyOf(keyId);
  if (!key)
    throw new WfxError(
      'SECRETS_KEY_MISSING',
      `a stored secret is encrypted with key ${keyId}, which this daemon lacks`,
      {
        details: { keyId },
      },
    );
  const body = Buffer.from(m[2]!, 'base64url');
  if (body.length < IV_BYTES + TAG_BYTES)
    throw new WfxError('SECRET_UNREADABLE', 'a stored secret is too short to be an envelope');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.aes, body.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(associatedData(keyId, context));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]);
    return plain.toString('utf8');
  } catch {
    throw new WfxError(
      'SECRET_UNREADABLE',
      `a stored secret sealed with key ${keyId} fails authentication: changed, or moved from another record`,
      { details: { keyId } },
    );
  }
}
