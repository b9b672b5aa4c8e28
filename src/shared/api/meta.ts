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

/**
 * GET /health: `history` only when the daemon checked its history for damage. A daemon standing
 * by for a database answers `status: 'standby'`, why, and the daemon it forwards requests to:
 * 200 while it has one, 503 while it has none (a takeover under way, the database away).
 */
export interface Health {
  readonly status: 'ok' | 'standby';
  readonly version: string;
  /** status standby: since when, why (who holds the lease, or that the database cannot be reached), and where requests go. */
  readonly standby?: { readonly since: string; readonly reason: string; readonly forwardingTo?: string };
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

/** GET /admin/cluster (`--store` only): one daemon on the database, serving or standing by. */
export interface ClusterDaemon {
  /** Its id (its data directory's `daemon.id`): the owner named by its leases. */
  readonly id: string;
  /** Where it answers, and where standbys forward to while it serves. */
  readonly url: string;
  readonly pid: number;
  readonly host: string;
  readonly version: string;
  readonly startedAt: string;
  /** Milliseconds since it last renewed its registration (every third of a lease). */
  readonly seenMsAgo: number;
  /** The daemon that answered. */
  readonly self: boolean;
  /**
   * A standby's copy of the state, which it keeps current while it waits so that a takeover
   * replays only the entries it had not applied: the last journal entry it applied, and how many
   * entries that was behind the journal's head, as of its last registration (`seenMsAgo`). Null
   * while it serves or has no copy yet (loading it).
   */
  readonly following: { readonly appliedSeq: number; readonly behindEntries: number } | null;
  /** The partitions whose lease it holds, each with the epoch its writes carry; none: it stands by. */
  readonly partitions: ReadonlyArray<{
    readonly partition: number;
    readonly epoch: number;
    readonly leaseMsLeft: number;
    /** Journal entries since its last checkpoint: what a daemon taking it over replays (the takeover's lag). */
    readonly replayEntries: number;
  }>;
}

export interface ClusterList {
  readonly items: readonly ClusterDaemon[];
}
