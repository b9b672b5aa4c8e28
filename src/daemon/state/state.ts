/**
 * The daemon's live state: what the snapshot holds and the journal's records change. Plain
 * JSON (it is serialized as is). Finished executions do not live here (see store/history.ts).
 * Later capabilities (flows, executions, triggers) add their collections here and their records
 * to records.ts.
 */
export interface WfxState {
  /** Organizations by name. */
  organizations: Record<string, Organization>;
  /** API keys by keyId. */
  apiKeys: Record<string, ApiKey>;
}

export interface Organization {
  readonly name: string;
  readonly createdAt: string;
}

/** Roles and the permissions they carry (SPEC.md section 6). */
export const ROLE_PERMISSIONS = {
  viewer: ['WORKFLOW_READ'],
  operator: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE'],
  developer: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WORKFLOW_PUBLISH'],
  admin: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WORKFLOW_PUBLISH', 'ADMIN'],
} as const;

export type Role = keyof typeof ROLE_PERMISSIONS;
export type Permission = (typeof ROLE_PERMISSIONS)[Role][number];
export type ApiKeyStatus = 'ACTIVE' | 'SUSPENDED' | 'REVOKED';

/** An API key as stored: the secret only as a SHA-256 hash (hex). */
export interface ApiKey {
  readonly keyId: string;
  readonly name: string;
  /** Owning organization; null for a system key (not bound to one organization). */
  readonly organization: string | null;
  readonly role: Role;
  readonly secretHash: string;
  status: ApiKeyStatus;
  readonly rateLimitPerMinute: number | null;
  readonly rateLimitPerHour: number | null;
  readonly expiresAt: string | null;
  readonly createdAt: string;
  updatedAt: string;
}

/** The state of an empty data directory. */
export function initialState(): WfxState {
  return { organizations: {}, apiKeys: {} };
}
