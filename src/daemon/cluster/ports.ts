/**
 * The cluster room's ports: the small interfaces the engine, the HTTP app and the process
 * lifecycle are given when their daemon shares a PostgreSQL database with others (decisions
 * 041-044). Types only. What implements them is built in this folder (serving.ts) and reaches
 * the rest of the daemon through DaemonOptions.sharing, set by rejoin.ts, which the launcher
 * loads only for `--store postgres://...`: a daemon on the JSON store loads nothing of the
 * cluster but this file's (erased) types. Outside this folder, nothing else of it is imported
 * (scripts/check-imports.mjs).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type {
  ActivateJobsBody,
  ActivatedJob,
  CompletedJob,
  CompleteJobsBody,
  EventBody,
  EventDelivered,
  WithDefaults,
} from '../../shared/api/index.js';
import type { SseEvent } from '../../shared/sse.js';
import type { ThrownEvent } from '../engine/engine-events.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { Subscription } from '../state/subscriptions.js';
import type { PgRateLimits } from '../store/pg/pg-rate-limits.js';
import type { PgStoreOptions } from '../store/pg/pg-store-options.js';
import type { PgStore } from '../store/pg/pg-store.js';

// --- the engine's port -------------------------------------------------------------------

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

// --- the routes' port --------------------------------------------------------------------

/** A worker's activation (POST /jobs/activate), as OtherDaemons.activateJobs takes it. */
export interface JobsAcross {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly body: WithDefaults<ActivateJobsBody, 'maxJobs' | 'lockDuration' | 'requestTimeout'>;
  /** Activates jobs held here, waiting up to `requestTimeoutMs` (JobBoard.activate). */
  readonly activateHere: (
    requestTimeoutMs: number,
    ended: () => boolean,
    signal?: AbortSignal,
  ) => Promise<ActivatedJob[]>;
  /** Gives job `key`, held here and locked to the worker, back. */
  readonly releaseHere: (key: string) => Promise<unknown>;
  /** Aborts when the worker goes away. */
  readonly left: AbortSignal;
}

/**
 * What the routes ask of the other daemons sharing the database (decision 042). Each method but
 * passedOn throws PARTITION_MOVING (with Retry-After on `reply`) while a partition moves or has
 * no holder, or a daemon cannot be reached: an answer short of a partition would read as "none".
 */
export interface OtherDaemons {
  /** Whether another daemon asked `request` of this one for its own partitions only: answered from here alone. */
  passedOn(request: FastifyRequest): boolean;
  /**
   * Delivers the event of `request` (`deliver`: its body without what is kept) to what waits on
   * the other daemons. Resolves with what they resumed; throws the error one answered.
   */
  deliverEvent(
    request: FastifyRequest,
    reply: FastifyReply,
    deliver: Omit<EventBody, 'ttlSeconds' | 'messageId'>,
  ): Promise<EventDelivered['matched']>;
  /**
   * Activates up to `maxJobs` jobs held here and by the other daemons (cluster/activate-across.ts).
   * Resolves null when no other daemon serves executions: the activation is this daemon's alone.
   */
  activateJobs(a: JobsAcross): Promise<ActivatedJob[] | null>;
  /**
   * Whether job `key`'s execution is in a partition this daemon serves now (a key that names no
   * execution: here, which refuses it as one that is not found).
   */
  holdsJob(key: string): boolean;
  /**
   * Completes `body.jobs`, none held here, where each is held (POST /jobs/complete asked of the
   * other daemons): one outcome per job, in order; PARTITION_MOVING for one no daemon holds now.
   */
  completeJobs(request: FastifyRequest, reply: FastifyReply, body: CompleteJobsBody): Promise<CompletedJob[]>;
  /** Follows the event stream `request` asks for on every other daemon, each event to `onEvent`, until closed. */
  follow(request: FastifyRequest, onEvent: (event: SseEvent) => void): { close(): void };
}

// --- the HTTP app's port -----------------------------------------------------------------

/** What the HTTP app of a daemon sharing a database is given (buildServer's `sharing`). */
export interface SharedServing {
  /** Rate limits counted in the database. */
  readonly rateLimits: PgRateLimits;
  /** Whether `request` is signed as counted already by the daemon that passed it on: not counted again. */
  counted(request: FastifyRequest): boolean;
  /** The organization a daemon of the database made `request` for itself (its credential); null for any other. */
  daemonCall(request: FastifyRequest): string | null;
  /**
   * Installs on `app`, after authentication and before the routes, how requests reach what
   * they need: those naming an execution go to its holder, lists gather every daemon's.
   */
  install(app: FastifyInstance): void;
  /** What the routes ask of the other daemons. */
  readonly others: OtherDaemons;
}

// --- the process lifecycle's port --------------------------------------------------------

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

/** This daemon's partitions moving toward its share as daemons come and go (cluster/partition-moves.ts). */
export interface PartitionMoves {
  /** Acts on who holds what as last read, then on each read. */
  start(): void;
  /** Stops, once the move under way (if any) is done. */
  close(): Promise<void>;
}

/** What a daemon sharing a database serves with once its store is open. */
export interface ClusterServing {
  /** The engine's part (EngineOptions.cluster). */
  readonly engine: EngineClusterPort;
  /** The HTTP app's part (buildServer's `sharing`). */
  readonly server: SharedServing;
  /** This daemon's partition moves; `takeDirectory` restarts the daemon to take partition 0 when it is free. */
  moves(parts: { engine: MovingExecutions; takeDirectory: () => void }): PartitionMoves;
}

/** What the lifecycle of a daemon sharing a database (`--share`) is given (DaemonOptions.sharing, from rejoin.ts). */
export interface DaemonSharing {
  /** The partitions this daemon holds when it joins, read as its store opens (PgStoreOptions.join). */
  readonly join: NonNullable<PgStoreOptions<WfxState, WfxRecord>['join']>;
  /** What the daemon serves with on `store` (its partitions move with the others'). */
  serve(store: PgStore<WfxState, WfxRecord>, logger: Logger): Promise<ClusterServing>;
}
