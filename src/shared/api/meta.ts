/* Health, the caller's identity and lifecycle events: GET /health, /auth/whoami, /events. Answers are types only. */
import type { Permission } from './keys.js';

/** GET /health: `history` only when the daemon checked its history for damage. */
export interface Health {
  readonly status: 'ok';
  readonly version: string;
  readonly history?: {
    readonly damagedRecords: number;
    readonly findings: ReadonlyArray<{
      readonly file: string;
      readonly offset: number;
      readonly code: string;
      readonly message: string;
    }>;
  };
}

/** GET /auth/whoami: an API key has a keyId, an OIDC token a subject. */
export interface WhoAmI {
  readonly keyId?: string;
  readonly subject?: string | null;
  readonly organization: string | null;
  readonly system: boolean;
  readonly permissions: readonly Permission[];
}

/** A lifecycle event of GET /events (the SSE `event` is its `type`, `data` this object). */
export interface LifecycleEventView {
  readonly type: string;
  readonly organization: string;
  readonly processInstanceId: string;
  readonly [field: string]: unknown;
}
