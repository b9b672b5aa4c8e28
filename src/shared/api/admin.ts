/* Environment variables (/admin/environments/{env}/variables) and backups (POST /admin/backup). Answers are types only. */
import { Type, type Static } from './schema.js';
import { RESERVED_NAMES } from '../names.js';
import { ENVIRONMENTS, StringEnum, type Environment } from './common.js';

/** Path parameters of /admin/environments/{env}/variables. */
export const EnvParams = Type.Object({ env: StringEnum(ENVIRONMENTS) });
export type EnvParams = Static<typeof EnvParams>;

/** Path parameters of /admin/environments/{env}/variables/{name}. */
export const EnvVariableParams = Type.Object({
  env: StringEnum(ENVIRONMENTS),
  name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,199}$', not: { enum: RESERVED_NAMES } }),
});
export type EnvVariableParams = Static<typeof EnvVariableParams>;

/** Body of PUT /admin/environments/{env}/variables/{name}. */
export const SetVariableBody = Type.Object(
  { value: Type.String({ maxLength: 100_000 }) },
  { additionalProperties: false },
);
export type SetVariableBody = Static<typeof SetVariableBody>;

/** GET /admin/environments/{env}/variables: the {env.NAME} values. */
export interface Variables {
  readonly organization: string;
  readonly environment: Environment;
  readonly variables: Record<string, string>;
}

/** What PUT (and, with `deleted`, DELETE) of a variable answers. */
export interface VariableChanged {
  readonly organization: string;
  readonly environment: Environment;
  readonly name: string;
  readonly deleted?: true;
}

/** Body of POST /admin/backup: a new directory on the daemon's host (absolute). */
export const BackupBody = Type.Object(
  { directory: Type.String({ minLength: 1, maxLength: 4096, pattern: '^/' }) },
  { additionalProperties: false },
);
export type BackupBody = Static<typeof BackupBody>;

/** What POST /admin/backup answers: what the copy holds. */
export interface BackupReport {
  /** The copy's directory (absolute). */
  readonly directory: string;
  /** The journal entry the copy's snapshot covers. */
  readonly snapshotSeq: number;
  /** The last journal entry in the copy: everything acknowledged up to it is there. */
  readonly lastSeq: number;
  /** Files written. */
  readonly files: number;
  /** Bytes in them. */
  readonly bytes: number;
  /** Partial copies beside the directory that backups cut by a crash left, removed (absent: none). */
  readonly removedPartials?: readonly string[];
  /**
   * The keys that encrypt the copy's secrets, which the copy does not hold (with them it would
   * be as good as plain text): where they are kept and their ids. Keep them apart from the copy.
   */
  readonly secretsKey?: { readonly where: string; readonly keyIds: readonly string[] };
}
