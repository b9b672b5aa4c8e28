/*
 * The jobs API: workers pull the jobs of domainTasks (POST /jobs/activate, a long poll), then
 * complete, fail, heartbeat or release each. Operators list jobs and workers (GET /jobs,
 * GET /jobs/workers). Answers are types only.
 */
import { Type, type Static } from './schema.js';
import { Name } from './common.js';
import { ACTION_NAME_PATTERN } from './domains.js';

/** A worker's name: it holds the locks it takes by it (give each worker process its own). */
const WorkerName = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\s]+$' });
/** How long a lock lasts, in milliseconds. */
const LockDuration = Type.Integer({ minimum: 100, maximum: 24 * 60 * 60 * 1000 });
/** A worker's error code: what an error boundary event's `errorCode` matches. */
export const WORKER_ERROR_CODE_PATTERN = '^[A-Z][A-Z0-9_]{0,99}$';

/** The longest a long poll may be held open, in milliseconds. */
export const MAX_REQUEST_TIMEOUT_MS = 60_000;
/** A long poll's default, in milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 20_000;
/** A lock's default duration, in milliseconds. */
export const DEFAULT_LOCK_DURATION_MS = 60_000;

/** Body of POST /jobs/activate. */
export const ActivateJobsBody = Type.Object(
  {
    domain: Name,
    /** Only these actions (default: every action of the domain). */
    actions: Type.Optional(
      Type.Array(Type.String({ pattern: ACTION_NAME_PATTERN }), { minItems: 1, maxItems: 200, uniqueItems: true }),
    ),
    worker: WorkerName,
    maxJobs: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })),
    lockDuration: Type.Optional({ ...LockDuration, default: DEFAULT_LOCK_DURATION_MS }),
    requestTimeout: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_REQUEST_TIMEOUT_MS,
        default: DEFAULT_REQUEST_TIMEOUT_MS,
        description: 'ms to wait for a job when none is available (0: answer at once)',
      }),
    ),
    /** System keys: the organization whose jobs (default: default). */
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type ActivateJobsBody = Static<typeof ActivateJobsBody>;

/** A job as a worker gets it. */
export interface ActivatedJob {
  /** What complete, fail, heartbeat and release name. */
  readonly key: string;
  readonly domain: string;
  readonly action: string;
  readonly input: Record<string, unknown>;
  /** This attempt (1-based) of `maxAttempts`. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Attempts left after this one fails. */
  readonly retriesLeft: number;
  /** Until when this worker holds it: heartbeat before, or the job goes to another worker. */
  readonly lockedUntil: string;
  /** The node's deadline (its `timeout`), or null. */
  readonly deadline: string | null;
  readonly processInstanceId: string;
  readonly processId: string;
  readonly nodeId: string;
  readonly organization: string;
}

/** Answer of POST /jobs/activate: the jobs now locked to the worker (empty when none came in time). */
export interface ActivatedJobs {
  readonly jobs: readonly ActivatedJob[];
}

/** Path parameters of /jobs/{key}/... */
export const JobParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) });
export type JobParams = Static<typeof JobParams>;

/** Body of POST /jobs/{key}/complete. */
export const CompleteJobBody = Type.Object(
  {
    worker: WorkerName,
    /** The result (checked against the action's output schema): goes to the node's resultVariable. */
    output: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type CompleteJobBody = Static<typeof CompleteJobBody>;

/** The most jobs one POST /jobs/complete completes. */
export const MAX_COMPLETE_JOBS = 1000;

/**
 * Body of POST /jobs/complete: many jobs this worker holds completed in one request (each as
 * POST /jobs/{key}/complete would, all made durable together).
 */
export const CompleteJobsBody = Type.Object(
  {
    worker: WorkerName,
    jobs: Type.Array(
      Type.Object(
        {
          key: Type.String({ minLength: 1, maxLength: 200 }),
          /** The result (checked against the action's output schema): goes to the node's resultVariable. */
          output: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_COMPLETE_JOBS },
    ),
  },
  { additionalProperties: false },
);
export type CompleteJobsBody = Static<typeof CompleteJobsBody>;

/** One job's outcome in POST /jobs/complete's answer: its answer, or the error its own call would have had. */
export type CompletedJob =
  | { readonly key: string; readonly status: 'completed' }
  | {
      readonly key: string;
      readonly error: string;
      readonly message: string;
      readonly details?: unknown;
    };

/** Answer of POST /jobs/complete: one outcome per job, in the order asked. */
export interface CompletedJobs {
  readonly results: readonly CompletedJob[];
}

/** Body of POST /jobs/{key}/fail. */
export const FailJobBody = Type.Object(
  {
    worker: WorkerName,
    /** Default JOB_FAILED. With no attempts left the node fails with it (an error boundary's `errorCode`). */
    errorCode: Type.Optional(Type.String({ pattern: WORKER_ERROR_CODE_PATTERN })),
    errorMessage: Type.Optional(Type.String({ maxLength: 10_000 })),
    /** false: do not retry (a business error): the node fails now. */
    retry: Type.Optional(Type.Boolean({ default: true })),
    /** ms before the next attempt (default: the node's retry interval). */
    retryBackoff: Type.Optional(Type.Integer({ minimum: 0, maximum: 24 * 60 * 60 * 1000 })),
  },
  { additionalProperties: false },
);
export type FailJobBody = Static<typeof FailJobBody>;

/** Body of POST /jobs/{key}/heartbeat. */
export const HeartbeatJobBody = Type.Object(
  {
    worker: WorkerName,
    /** ms from now (default: the activation's lockDuration). */
    lockDuration: Type.Optional(LockDuration),
  },
  { additionalProperties: false },
);
export type HeartbeatJobBody = Static<typeof HeartbeatJobBody>;

/** Body of POST /jobs/{key}/release: the worker gives the job back unworked (no attempt counted). */
export const ReleaseJobBody = Type.Object({ worker: WorkerName }, { additionalProperties: false });
export type ReleaseJobBody = Static<typeof ReleaseJobBody>;

/** Answer of complete, fail, heartbeat and release. */
export interface JobAnswer {
  readonly key: string;
  /** completed; retrying (a failed attempt, another follows); failed (the node failed); locked (a heartbeat); released. */
  readonly status: 'completed' | 'retrying' | 'failed' | 'locked' | 'released';
  readonly retriesLeft?: number;
  /** retrying: not activated again before this. */
  readonly notBefore?: string | null;
  /** locked: the lock's new expiry. */
  readonly lockedUntil?: string;
}

/** Querystring of GET /jobs. */
export const JobListQuery = Type.Object(
  {
    domain: Type.Optional(Name),
    action: Type.Optional(Type.String({ pattern: ACTION_NAME_PATTERN })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type JobListQuery = Static<typeof JobListQuery>;

/** A job as GET /jobs lists it. */
export interface JobView {
  readonly key: string;
  readonly organization: string;
  readonly domain: string;
  readonly action: string;
  /** waiting (for a worker), locked (a worker holds it), backoff (a retry's wait). */
  readonly state: 'waiting' | 'locked' | 'backoff';
  readonly worker: string | null;
  readonly lockedUntil: string | null;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly activations: number;
  readonly notBefore: string | null;
  readonly deadline: string | null;
  readonly lastError: { readonly code: string; readonly message: string } | null;
  /** When its node was reached. */
  readonly createdAt: string;
  readonly processInstanceId: string;
  readonly processId: string;
  readonly processName: string;
  readonly nodeId: string;
}

/** GET /jobs: oldest first. */
export interface JobList {
  readonly items: readonly JobView[];
  /** More jobs matched than `limit`. */
  readonly more: boolean;
}

/** A worker as the daemon last saw it (kept in memory: a restart forgets workers until they call again). */
export interface WorkerSeen {
  readonly worker: string;
  readonly lastSeen: string;
  /** A long poll of it is open now. */
  readonly polling: boolean;
}

/** One domain's jobs and workers (GET /jobs/workers, `wfx daemon status`, the TUI's health screen). */
export interface DomainHealth {
  readonly organization: string;
  readonly domain: string;
  /** active: a worker was seen lately; stalled: jobs wait and no worker was seen lately; idle: neither. */
  readonly state: 'active' | 'stalled' | 'idle';
  readonly waiting: number;
  readonly locked: number;
  /** The oldest waiting job's creation. */
  readonly oldestWaiting: string | null;
  readonly workers: readonly WorkerSeen[];
  /** When a worker was last seen, any of them. */
  readonly lastSeen: string | null;
}

/** GET /jobs/workers: every registered domain, and any with jobs, by organization and name. */
export interface DomainHealthList {
  readonly items: readonly DomainHealth[];
}
