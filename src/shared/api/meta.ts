/* Health, the caller's identity and lifecycle events: GET /health, /auth/whoami, /events. Answers are types only. */
import type { Permission } from './keys.js';
import type { StateName } from './process.js';

/** What a daemon's state is kept in (GET /health's `store`): its data directory, or PostgreSQL with a lease. */
export interface StoreHealth {
  readonly kind: 'json' | 'postgres';
  /** postgres: the epoch of this daemon's lease, which its writes carry. */
  readonly epoch?: number;
  /** postgres: how long the lease lasts unrenewed, in milliseconds. */
  readonly leaseMs?: number;
  /** postgres: milliseconds since the last renewal that succeeded was sent. */
  readonly renewedMsAgo?: number;
}

/** GET /health: `history` only when the daemon checked its history for damage. */
export interface Health {
  readonly status: 'ok';
  readonly version: string;
  readonly store?: StoreHealth;
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
  /** PROCESS_* events: the execution's state code (STATE) and its name. */
  readonly stateCd?: number;
  readonly state?: StateName;
  readonly [field: string]: unknown;
}
