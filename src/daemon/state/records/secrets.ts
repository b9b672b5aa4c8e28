/**
 * Records of the secrets key: the key new secrets are sealed with, secrets sealed again under
 * it, and the checkpoint after which no file holds their old forms.
 */
import { applyReseal, type SecretRef } from '../secret-fields.js';
import type { Handlers } from './handlers.js';

/** The records of sealed secrets (WfxRecord). */
export type SecretRecord =
  /** New secrets are sealed with key `keyId` from now on (the first sealed, or a rotation). */
  | { readonly type: 'secretsKey.changed'; readonly keyId: string }
  /** A stored secret sealed again (a rotation, one kept in plain text before): `to` replaces `from`; null forgets it (its key lost). */
  | { readonly type: 'secret.resealed'; readonly ref: SecretRef; readonly from: string; readonly to: string | null }
  /** A checkpoint after reseals is durable: no journal entry or snapshot holds the secrets' old forms. */
  | { readonly type: 'secrets.checkpointed' };

/** The reducer's part for sealed secrets (records.ts). */
export const secretHandlers: Handlers<SecretRecord> = {
  'secretsKey.changed': (state, r) => {
    state.secretsKey = r.keyId;
  },
  'secret.resealed': (state, r) => {
    applyReseal(state, r.ref, r.from, r.to);
    state.secretsResealed = true;
  },
  'secrets.checkpointed': (state) => {
    delete state.secretsResealed;
  },
};
