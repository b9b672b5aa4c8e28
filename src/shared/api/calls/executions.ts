/* The calls of sessions, executions, tasks, events and bulk operations (/auth, /process, /events). */
import type {
  BulkDryRun,
  BulkListQuery,
  BulkPage,
  BulkRequest,
  BulkResultPage,
  BulkResultsQuery,
  BulkView,
  ConsoleAuthConfig,
  EventBody,
  EventDelivered,
  ExecutionListQuery,
  FailureGroups,
  FailuresQuery,
  InstanceListQuery,
  InstancePage,
  InstanceView,
  MoveBody,
  Moved,
  ReplayBody,
  Replayed,
  RetryBody,
  Retried,
  SessionBody,
  SignedIn,
  SignedOut,
  SignInLink,
  StartBody,
  Started,
  StartQuery,
  TaskAnswerBody,
  TaskAnswered,
  TaskListQuery,
  TaskPage,
  WhoAmI,
} from '../index.js';
import { get, path, post, withQuery } from './call.js';

/** /auth: who the credential is, and the console's sign-in. */
export const auth = {
  /** GET /auth/whoami: the credential's organization, system or not, permissions. */
  whoami: () => get<WhoAmI>('/auth/whoami'),
  /** POST /auth/links: a one-time console sign-in link for this API key (`wfx console`). Throws FORBIDDEN for a bearer token. */
  signInLink: () => post<SignInLink>('/auth/links'),
  /** GET /auth/config: the ways to sign in to the console this daemon offers. */
  config: () => get<ConsoleAuthConfig>('/auth/config'),
  /** POST /auth/session: a console session for an API key. Throws UNAUTHORIZED (a key unknown, revoked, suspended or expired). */
  signIn: (body: SessionBody) => post<SignedIn>('/auth/session', body),
  /** POST /auth/signout: ends the console session. Throws UNAUTHORIZED (none open). */
  signOut: () => post<SignedOut>('/auth/signout'),
};

/** Starting executions (WfxClient.process.start picks one by the credential). */
export const processStarts = {
  /** POST /process/exec: in the caller's organization (organization keys). Throws PROCESS_NOT_FOUND, PROCESS_NOT_PUBLISHED, VERSION_NOT_FOUND, FORBIDDEN, VALIDATION_ERROR. */
  exec: (body: StartBody, query: StartQuery = {}) => post<Started>(withQuery('/process/exec', query), body),
  /** POST /process/start: any organization's flow (system keys; others get FORBIDDEN). Throws as `exec`. */
  startAny: (body: StartBody, query: StartQuery = {}) => post<Started>(withQuery('/process/start', query), body),
};

/** Executions: read, listed, repaired. */
export const instances = {
  /** GET /process/instance/{id}. Throws INSTANCE_NOT_FOUND (another organization's too). */
  get: (id: string) => get<InstanceView>(path`/process/instance/${id}`),
  /** GET /process/{processId}/instances: a page, newest first. Throws PROCESS_NOT_FOUND. */
  list: (processId: string, query: InstanceListQuery = {}) =>
    get<InstancePage>(withQuery(path`/process/${processId}/instances`, query)),
  /**
   * GET /process/instances: a page of every execution the credential may see, newest first,
   * filtered. Throws FORBIDDEN (an organization's key naming another organization).
   */
  search: (query: ExecutionListQuery = {}) => get<InstancePage>(withQuery('/process/instances', query)),
  /**
   * GET /process/failures: failed executions grouped by flow, failure code and node, each with
   * its count and newest execution. Throws FORBIDDEN (an organization's key naming another).
   */
  failures: (query: FailuresQuery = {}) => get<FailureGroups>(withQuery('/process/failures', query)),
  /** POST /process/instance/{id}/cancel. Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING. */
  cancel: (id: string) => post<{ processInstanceId: string; status: string }>(path`/process/instance/${id}/cancel`),
  /**
   * POST /process/instance/{id}/retry: a failed execution goes on where it failed. Throws
   * INSTANCE_NOT_FOUND, INSTANCE_NOT_FAILED, INSTANCE_IS_CHILD, VERSION_NOT_FOUND, VALIDATION_ERROR.
   */
  retry: (id: string, body: RetryBody = {}) => post<Retried>(path`/process/instance/${id}/retry`, body),
  /**
   * POST /process/instance/{id}/replay: a new execution of the same version from a node. Throws
   * INSTANCE_NOT_FOUND, INSTANCE_IS_CHILD, NODE_NOT_FOUND, NODE_NOT_REACHED, REPLAY_VARIABLES_UNKNOWN.
   */
  replay: (id: string, body: ReplayBody) => post<Replayed>(path`/process/instance/${id}/replay`, body),
  /**
   * POST /process/instance/{id}/move: to another published version of its flow (`dryRun`:
   * check only). Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING, VERSION_NOT_FOUND,
   * INSTANCE_MOVES_WITH_PARENT, INSTANCE_NOT_MOVABLE (`details.problems`: MoveProblem[]), FORBIDDEN.
   */
  move: (id: string, body: MoveBody) => post<Moved>(path`/process/instance/${id}/move`, body),
};

/** Waiting input nodes and user tasks. */
export const tasks = {
  /** GET /process/tasks: waiting input nodes and user tasks, oldest first. Throws PROCESS_NOT_FOUND, FORBIDDEN. */
  list: (query: TaskListQuery = {}) => get<TaskPage>(withQuery('/process/tasks', query)),
  /** POST /process/task: completes or cancels a waiting node. Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING, NODE_NOT_WAITING, VALIDATION_ERROR (an answer that does not fit). */
  answer: (body: TaskAnswerBody) => post<TaskAnswered>('/process/task', body),
};

/** Messages and signals. */
export const events = {
  /** POST /process/event: delivers a message or signal (buffered when nothing waits and ttlSeconds is given). Throws NO_MATCHING_SUBSCRIPTION, FORBIDDEN, VALIDATION_ERROR. */
  send: (body: EventBody) => post<EventDelivered>('/process/event', body),
};

/** /process/bulk: operations over the executions a query selects. */
export const bulk = {
  /**
   * POST /process/bulk with `dryRun`: how many executions the operation would select, and a
   * sample, changing nothing. Throws FORBIDDEN, PROCESS_NOT_FOUND, VALIDATION_ERROR.
   */
  dryRun: (body: BulkRequest) => post<BulkDryRun>('/process/bulk', { ...body, dryRun: true }),
  /**
   * POST /process/bulk: creates the operation (its selection fixed now) and starts it. Throws
   * FORBIDDEN, PROCESS_NOT_FOUND, VALIDATION_ERROR, BULK_TOO_LARGE, BULK_LIMIT_EXCEEDED.
   */
  create: (body: BulkRequest) => {
    const { dryRun: _dryRun, sample: _sample, ...create } = body;
    return post<BulkView>('/process/bulk', create);
  },
  /** GET /process/bulk: operations, newest first. */
  list: (query: BulkListQuery = {}) => get<BulkPage>(withQuery('/process/bulk', query)),
  /** GET /process/bulk/{bulkId}: one with its progress. Throws BULK_NOT_FOUND. */
  get: (bulkId: string) => get<BulkView>(path`/process/bulk/${bulkId}`),
  /** GET /process/bulk/{bulkId}/results: a page of its results so far, newest execution first. Throws BULK_NOT_FOUND. */
  results: (bulkId: string, query: BulkResultsQuery = {}) =>
    get<BulkResultPage>(withQuery(path`/process/bulk/${bulkId}/results`, query)),
  /** POST /process/bulk/{bulkId}/cancel. Throws BULK_NOT_FOUND, BULK_NOT_RUNNING. */
  cancel: (bulkId: string) => post<BulkView>(path`/process/bulk/${bulkId}/cancel`),
};
