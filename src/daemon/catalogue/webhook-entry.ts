/**
 * How a webhook registration's endpoints and scheme are made from what a caller declares: the
 * admin API's POST /admin/webhooks and a deploy's wfx.yaml make them by the same rules.
 */
import { randomBytes } from 'node:crypto';
import { WfxError } from '../../shared/errors.js';
import type { CustomScheme } from '../../shared/webhooks/providers.js';
import type { RegisterWebhookBody } from '../../shared/api/index.js';

/**
 * An endpoint token: `wht_` and 32 random bytes in base64url. The prefix keeps a token from
 * starting with `-` (base64url's alphabet has it), which a command line would take for an option.
 */
export const newToken = (): string => `wht_${randomBytes(32).toString('base64url')}`;

/**
 * The signature scheme a CUSTOM provider declares (null for the others). Throws
 * VALIDATION_ERROR when a CUSTOM provider that signs names no signature header.
 */
export function customSchemeOf(b: Omit<RegisterWebhookBody, 'name' | 'secret'>): CustomScheme | null {
  if (b.provider !== 'CUSTOM') return null;
  if (b.authType !== 'NONE' && !b.signatureHeader)
    throw new WfxError('VALIDATION_ERROR', 'a CUSTOM provider needs signatureHeader (or authType NONE)');
  return {
    signatureHeader: (b.signatureHeader ?? 'x-signature').toLowerCase(),
    algorithm: (b.algorithm ?? 'sha256') as CustomScheme['algorithm'],
    encoding: (b.encoding ?? 'hex') as CustomScheme['encoding'],
    ...(b.prefix !== undefined && { prefix: b.prefix }),
    ...(b.eventTypeHeader !== undefined && { eventTypeHeader: b.eventTypeHeader.toLowerCase() }),
    ...(b.eventTypePath !== undefined && { eventTypePath: b.eventTypePath }),
    ...(b.eventIdHeader !== undefined && { eventIdHeader: b.eventIdHeader.toLowerCase() }),
    ...(b.eventIdPath !== undefined && { eventIdPath: b.eventIdPath }),
  };
}
