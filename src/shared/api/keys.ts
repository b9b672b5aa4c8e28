/* API keys (/admin/api-keys): roles, the permissions they carry, and the key as the API shows it. */
import { Type, type Static } from './schema.js';
import { Answer, Items, Name, Nullable, NullableString, PatchBody, StringEnum } from './common.js';

/** Roles and the permissions they carry (SPEC.md section 6). */
export const ROLE_PERMISSIONS = {
  viewer: ['WORKFLOW_READ'],
  operator: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE'],
  developer: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WORKFLOW_PUBLISH'],
  admin: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WORKFLOW_PUBLISH', 'ADMIN', 'JOB_WORKER'],
  /** A job worker's key: activates and completes its organization's jobs (the jobs API), nothing else. */
  worker: ['JOB_WORKER'],
} as const;
/** A role name. */
export type Role = keyof typeof ROLE_PERMISSIONS;
/** A permission a role carries. */
export type Permission = (typeof ROLE_PERMISSIONS)[Role][number];
/** The role names, in the order above (the worker role last: it is no step of the others). */
export const ROLES = Object.keys(ROLE_PERMISSIONS) as Role[];
/** What a key may be: in use, suspended (may be activated again), revoked (for good). */
export const KEY_STATUSES = ['ACTIVE', 'SUSPENDED', 'REVOKED'] as const;
/** A key's status (one of KEY_STATUSES). */
export type ApiKeyStatus = (typeof KEY_STATUSES)[number];

/** A rate limit per window: a count, or null for none. */
const Limit = Nullable<number>('integer', { minimum: 0, maximum: 1_000_000 });
const ExpiresAt = NullableString({ format: 'date-time' });

/** Body of POST /admin/api-keys. */
export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: Type.Optional(StringEnum(ROLES, { default: 'operator' })),
    organization: Type.Optional(Name),
    system: Type.Optional(Type.Boolean({ default: false })),
    rateLimitPerMinute: Type.Optional(Limit),
    rateLimitPerHour: Type.Optional(Limit),
    expiresAt: Type.Optional(ExpiresAt),
    expiresIn: Type.Optional(Type.String({ description: 'a duration from now, e.g. 30d' })),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

/** Body of PATCH /admin/api-keys/{keyId}: at least one of these. */
export const UpdateKeyBody = PatchBody({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  rateLimitPerMinute: Type.Optional(Limit),
  rateLimitPerHour: Type.Optional(Limit),
  expiresAt: Type.Optional(ExpiresAt),
});
export type UpdateKeyBody = Static<typeof UpdateKeyBody>;

/** Path parameters of /admin/api-keys/{keyId}. */
export const KeyParams = Type.Object({ keyId: Type.String({ maxLength: 100 }) });
export type KeyParams = Static<typeof KeyParams>;

/** A key as the API shows it: never the secret, never its hash (a type only). */
export const KeyView = Answer({
  keyId: Type.String(),
  name: Type.String(),
  role: StringEnum(ROLES),
  permissions: Type.Unsafe<readonly Permission[]>({ type: 'array', items: { type: 'string' } }),
  organization: NullableString(),
  system: Type.Boolean(),
  status: StringEnum(KEY_STATUSES),
  rateLimitPerMinute: Nullable<number>('integer'),
  rateLimitPerHour: Nullable<number>('integer'),
  expiresAt: NullableString(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type KeyView = Static<typeof KeyView>;

/** What POST /admin/api-keys answers (201): the key and, this once, its secret. */
export type CreatedKey = KeyView & { readonly apiKey: string };

/** GET /admin/api-keys. */
export const KeyList = Items(KeyView);
export type KeyList = Static<typeof KeyList>;
