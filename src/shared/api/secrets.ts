/* The daemon's secrets keys (GET /admin/secrets, POST /admin/secrets/rotate). Answers are types only. */
import { Type, type Static } from './schema.js';

/** Where the keys that encrypt stored secrets are kept, and which seal what: never a key. */
export interface SecretsKeyReport {
  /** The key new secrets are sealed with. */
  readonly keyId: string;
  /** Where this daemon's keys are kept: a file path, `WFX_SECRETS_KEY`, or the OS keyring entry. */
  readonly where: string;
  /** Whether `rotate` can add a key there itself (a file, the keyring; not the environment). */
  readonly writable: boolean;
  /** Every key this daemon holds, and every key a stored secret is sealed with, and how many each seals. */
  readonly keys: ReadonlyArray<{ readonly keyId: string; readonly held: boolean; readonly secrets: number }>;
  /** Secrets still in plain text (written by an earlier version; none once a daemon of this version started). */
  readonly plain: number;
}

/** Body of POST /admin/secrets/rotate: the key to seal with from now on; absent, the daemon adds a new one to its key file. */
export const RotateSecretsBody = Type.Object(
  {
    keyId: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{16}$',
        description: 'a key already in the key file (every daemon of a database must hold it)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RotateSecretsBody = Static<typeof RotateSecretsBody>;

/** What POST /admin/secrets/rotate answers: the key now used, what was sealed again, and the keys as they are after. */
export interface SecretsRotated extends SecretsKeyReport {
  /** Whether the key was made by this rotation (added to the key file). */
  readonly added: boolean;
  /** Secrets sealed again with the new key. */
  readonly resealed: number;
  /** Secrets that could not be opened, left as they were (the daemon log names them). */
  readonly unreadable: number;
}
