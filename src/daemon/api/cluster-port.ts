/**
 * What the HTTP app is given when its daemon shares a PostgreSQL database with others (decision
 * 042, docs/clustering.md): routing and signing installed on the app, rate limits counted in the
 * database, and what the routes ask of the other daemons. Built by the cluster room
 * (cluster/serving.ts) and handed over through buildServer's `sharing`. Types only.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
import type { PgRateLimits } from '../store/pg/pg-rate-limits.js';

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
