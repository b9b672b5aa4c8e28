/*
 * The daemon's secrets keys (GET /admin/secrets, POST /admin/secrets/rotate), and the secrets
 * flows name (`{secret.NAME}`: /admin/secrets/values). Answers are types only.
 */
import { Type, type Static } from './schema.js';
import { ENVIRONMENTS, Name, StringEnum, type Environment } from './common.js';

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

/** Path parameters of /admin/secrets/values/{name}: a secret's name, as `{secret.NAME}` writes it. */
export const FlowSecretParams = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,199}$' }),
});
export type FlowSecretParams = Static<typeof FlowSecretParams>;

/** Querystring of GET /admin/secrets/values: one environment's (default both), one organization's (system keys; default every one). */
export const FlowSecretListQuery = Type.Object(
  { environment: Type.Optional(StringEnum(ENVIRONMENTS)), organization: Type.Optional(Name) },
  { additionalProperties: false },
);
export type FlowSecretListQuery = Static<typeof FlowSecretListQuery>;

/** Which environment's secret (default PRODUCTION), and for a system key whose organization's. */
export const FlowSecretQuery = Type.Object(
  {
    environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })),
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type FlowSecretQuery = Static<typeof FlowSecretQuery>;

/** Body of PUT /admin/secrets/values/{name}: the value, sealed as it arrives and never answered. */
export const SetFlowSecretBody = Type.Object(
  {
    value: Type.String({ minLength: 1, maxLength: 65_536 }),
    environment: Type.Optional(StringEnum(ENVIRONMENTS, { default: 'PRODUCTION' })),
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type SetFlowSecretBody = Static<typeof SetFlowSecretBody>;

/** A flow secret as the API shows it: its name and where it is set, never its value. */
export interface FlowSecretView {
  readonly name: string;
  readonly organization: string;
  readonly environment: Environment;
  readonly updatedAt: string;
}

/** GET /admin/secrets/values. */
export interface FlowSecretList {
  readonly items: readonly FlowSecretView[];
}
