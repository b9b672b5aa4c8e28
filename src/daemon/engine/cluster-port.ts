/**
 * What the engine is given when its daemon shares a PostgreSQL database with others (decisions
 * 043-044, docs/clustering.md): its part in the cluster, built by the cluster room
 * (cluster/engine-part.ts) and handed over through EngineOptions.cluster. Types only: a daemon
 * on the JSON store loads nothing of the cluster.
 */
import type { WfxState } from '../state/state.js';
import type { Subscription } from '../state/subscriptions.js';
import type { ThrownEvent } from './engine-events.js';

/** What an engine gives its cluster part (EngineClusterPort): its state, and its steps for what that part decides. */
export interface EngineSide {
  readonly state: WfxState;
  /** The engine's clock. */
  readonly now: () => Date;
  /** Consumes kept message `messageId` for the waiting `sub`, in a step. Resolves whether it did (`sub` may no longer wait). */
  readonly consumeKept: (messageId: string, sub: Subscription) => Promise<boolean>;
  /** Delivers `event` to what waits on this daemon, in a step. */
  readonly deliverHere: (event: ThrownEvent) => Promise<void>;
  /** Writes event `id` as passed (the other daemons had it, or it was given up on), in a step. */
  readonly passedThrown: (id: string) => Promise<void>;
  /** Tracks `work` until it settles: the engine's close waits for it. */
  readonly track: (work: Promise<unknown>) => void;
  readonly onError: (err: unknown, what: string) => void;
}

/**
 * An engine's part in a daemon sharing its database: kept messages consumed under claims in the
 * database (decision 043), events thrown kept until the other daemons have them (decision 044),
 * events refused under message ids whose partition moved away.
 */
export interface EngineCluster {
  /** Whether kept messages are consumed only under a claim: a step lists those its nodes began waiting for. */
  readonly claimsKept: boolean;
  /** Whether events thrown are kept (`event.thrown`) until the other daemons have them. */
  readonly keepsThrown: boolean;
  /**
   * Whether this daemon holds the partition of message id `key` (`organization|messageId`) now.
   * An event under one it no longer holds is refused with PARTITION_MOVING.
   */
  holdsMessageId(key: string): boolean;
  /** Claims kept message `id`, which a node began waiting for in a step now durable, and consumes it. */
  offerKept(id: string): void;
  /** Gives event `id`, which a step now durable threw (and delivered here), to the other daemons. */
  thrownHere(id: string): void;
  /** Executions were loaded (a restart, partitions taken): offers every kept message, gives on every event kept. */
  loaded(): void;
  /** Stops trying: the engine is closing. */
  close(): void;
}

/** How an engine gets its cluster part (EngineOptions.cluster): called once, as the engine is made. */
export type EngineClusterPort = (engine: EngineSide) => EngineCluster;

/** What partition moves drive on the engine: executions loaded into and unloaded from this daemon (Engine). */
export interface MovingExecutions {
  /** Resumes executions the store has just loaded (a partition taken). */
  adopt(ids: readonly string[]): Promise<void>;
  /** Hands executions `leaving` over as `removal` (the store's drop) takes them out, with these hooks. */
  handOver(
    leaving: (instanceId: string) => boolean,
    removal: (hooks: { leaving: () => void; left: () => void; settled: () => Promise<void> }) => Promise<void>,
  ): Promise<void>;
}
