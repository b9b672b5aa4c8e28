import type {
  Activated,
  ActivateBody,
  ActivatedJobs,
  ActivateJobsBody,
  CompleteJobBody,
  CompleteJobsBody,
  CompletedJobs,
  DomainHealthList,
  DomainList,
  DomainView,
  FailJobBody,
  HeartbeatJobBody,
  JobAnswer,
  JobList,
  JobListQuery,
  RegisterDomainBody,
  ConnectionView,
  CreateConnectionBody,
  CreateKeyBody,
  CreatedKey,
  Deleted,
  Environment,
  EventBody,
  EventDelivered,
  FlowDetail,
  FlowList,
  FlowPage,
  FlowPageQuery,
  Health,
  ExecutionListQuery,
  FailureGroups,
  FailuresQuery,
  InstanceListQuery,
  InstancePage,
  InstanceView,
  KeyList,
  KeyView,
  LogEntry,
  LogProgress,
  MoveBody,
  Moved,
  FileDeleted,
  FileLimits,
  FileListQuery,
  FilePage,
  FileView,
  MemoryDeleted,
  MemoryEntryView,
  MemoryListQuery,
  MemoryNamespaces,
  MemoryPage,
  CreateProviderBody,
  ProviderList,
  ProviderTested,
  ProviderView,
  UpdateProviderBody,
  PublishBody,
  Published,
  StartBody,
  Started,
  StartQuery,
  TaskAnswerBody,
  TaskAnswered,
  TaskListQuery,
  TaskPage,
  TriggerList,
  UpdateConnectionBody,
  UpdateKeyBody,
  VariableChanged,
  Variables,
  WhoAmI,
  SignInLink,
  ReplayBody,
  Replayed,
  RetryBody,
  Retried,
} from '../shared/api/index.js';
import type { SseEvent } from '../shared/sse.js';
import { adminApi } from './admin.js';
import { ApiClient, path, withQuery, type Connection } from './http.js';
import { webhookCalls } from './webhooks.js';
import { bulkCalls } from './bulk.js';

/** What starting an execution takes: the flow, its input variables, and optionally where and which version. */
export interface StartRequest {
  readonly processId: string;
  readonly data: Record<string, unknown>;
  /** The environment to run in (the daemon's default: PRODUCTION). */
  readonly environment?: string;
  /** Run this version instead of the environment's active one. */
  readonly version?: string;
  readonly correlationKey?: string;
}

/** How to read an execution's log stream. */
export interface LogStreamOptions {
  /** Resume after this entry (its SSE id). */
  readonly lastEventId?: string;
  /** false: the entries so far, then the stream ends (the daemon's default: true, live ones too). */
  readonly follow?: boolean;
  /**
   * true: also yield `event: progress` (a model's answer as it streams in; read it with
   * `progressOf`). Without it they are left out, so a reader of entries sees entries and `end` only.
   */
  readonly progress?: boolean;
  readonly signal?: AbortSignal;
}

/** The LogProgress of an `event: progress` of a log stream, else null. Pure; throws on data that is not JSON. */
export function progressOf(ev: SseEvent): LogProgress | null {
  return ev.event === 'progress' && ev.data !== undefined ? (JSON.parse(ev.data) as LogProgress) : null;
}

/** `events` without the `progress` ones. */
async function* withoutProgress(events: AsyncGenerator<SseEvent>): AsyncGenerator<SseEvent> {
  for await (const ev of events) if (ev.event !== 'progress') yield ev;
}

/** `?organization=` of admin requests (system callers name the organization they act in). */
type Org = { readonly organization?: string };

/**
 * The typed client of the daemon's HTTP API: one method per route, its request and answer types
 * from shared/api. Every method throws a WfxError: the daemon's error code when it answered (the
 * codes docs/api.md lists per route), DAEMON_UNREACHABLE when it did not, UNAUTHORIZED (a hint
 * names the credential tried). Only the codes particular to a method are named on it.
 */
export class WfxClient {
  /** The transport: for requests no method covers (and tests that send their own). */
  readonly http: ApiClient;

  constructor(connection: Connection | ApiClient) {
    this.http = connection instanceof ApiClient ? connection : new ApiClient(connection);
  }

  /** Where the daemon is and who is asking. */
  get connection(): Connection {
    return this.http.connection;
  }

  /** GET /health: the daemon serves (and its version). Throws the store's failure (STORE_FAILED) once its store failed. */
  health(): Promise<Health> {
    return this.http.get<Health>('/health');
  }

  readonly auth = {
    /** GET /auth/whoami: the credential's organization, system or not, permissions. */
    whoami: (): Promise<WhoAmI> => this.http.get<WhoAmI>('/auth/whoami'),
    /** POST /auth/links: a one-time console sign-in link for this API key (`wfx console`). Throws FORBIDDEN for a bearer token. */
    signInLink: (): Promise<SignInLink> => this.http.post<SignInLink>('/auth/links'),
  };

  readonly process = {
    /**
     * Starts an execution the way this credential must: system keys through POST /process/start,
     * organization keys through POST /process/exec (asked of GET /auth/whoami). Throws
     * PROCESS_NOT_FOUND, PROCESS_NOT_PUBLISHED, VERSION_NOT_FOUND, FORBIDDEN, VALIDATION_ERROR.
     */
    start: async (req: StartRequest): Promise<Started> => {
      const { system } = await this.auth.whoami();
      const query = {
        ...(req.environment && { environment: req.environment }),
        ...(req.version && { versionNumber: req.version }),
      } as StartQuery;
      const body: StartBody = {
        processId: req.processId,
        data: req.data,
        ...(req.correlationKey !== undefined && { correlationKey: req.correlationKey }),
      };
      return system ? this.process.startAny(body, query) : this.process.exec(body, query);
    },
    /** POST /process/exec: in the caller's organization (organization keys). Throws as `start`. */
    exec: (body: StartBody, query: StartQuery = {}): Promise<Started> =>
      this.http.post<Started>(withQuery('/process/exec', query), body),
    /** POST /process/start: any organization's flow (system keys; others get FORBIDDEN). Throws as `start`. */
    startAny: (body: StartBody, query: StartQuery = {}): Promise<Started> =>
      this.http.post<Started>(withQuery('/process/start', query), body),
  };

  readonly instances = {
    /** GET /process/instance/{id}. Throws INSTANCE_NOT_FOUND (another organization's too). */
    get: (id: string): Promise<InstanceView> => this.http.get<InstanceView>(path`/process/instance/${id}`),
    /** GET /process/{processId}/instances: a page, newest first. Throws PROCESS_NOT_FOUND. */
    list: (processId: string, query: InstanceListQuery = {}): Promise<InstancePage> =>
      this.http.get<InstancePage>(withQuery(path`/process/${processId}/instances`, query)),
    /**
     * GET /process/instances: a page of every execution the credential may see, newest first,
     * filtered. Throws FORBIDDEN (an organization's key naming another organization).
     */
    search: (query: ExecutionListQuery = {}): Promise<InstancePage> =>
      this.http.get<InstancePage>(withQuery('/process/instances', query)),
    /**
     * GET /process/failures: failed executions grouped by flow, failure code and node, each with
     * its count and newest execution. Throws FORBIDDEN (an organization's key naming another).
     */
    failures: (query: FailuresQuery = {}): Promise<FailureGroups> =>
      this.http.get<FailureGroups>(withQuery('/process/failures', query)),
    /** Where the daemon's browser console shows execution `id`. Pure. */
    consoleUrl: (id: string): string =>
      `${this.connection.url.replace(/\/+$/, '')}/executions/${encodeURIComponent(id)}`,
    /** POST /process/instance/{id}/cancel. Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING. */
    cancel: (id: string): Promise<{ processInstanceId: string; status: string }> =>
      this.http.post(path`/process/instance/${id}/cancel`),
    /**
     * POST /process/instance/{id}/retry: a failed execution goes on where it failed. Throws
     * INSTANCE_NOT_FOUND, INSTANCE_NOT_FAILED, INSTANCE_IS_CHILD, VERSION_NOT_FOUND, VALIDATION_ERROR.
     */
    retry: (id: string, body: RetryBody = {}): Promise<Retried> =>
      this.http.post<Retried>(path`/process/instance/${id}/retry`, body),
    /**
     * POST /process/instance/{id}/replay: a new execution of the same version from a node. Throws
     * INSTANCE_NOT_FOUND, INSTANCE_IS_CHILD, NODE_NOT_FOUND, NODE_NOT_REACHED, REPLAY_VARIABLES_UNKNOWN.
     */
    replay: (id: string, body: ReplayBody): Promise<Replayed> =>
      this.http.post<Replayed>(path`/process/instance/${id}/replay`, body),
    /**
     * POST /process/instance/{id}/move: to another published version of its flow (`dryRun`:
     * check only). Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING, VERSION_NOT_FOUND,
     * INSTANCE_MOVES_WITH_PARENT, INSTANCE_NOT_MOVABLE (`details.problems`: MoveProblem[]), FORBIDDEN.
     */
    move: (id: string, body: MoveBody): Promise<Moved> =>
      this.http.post<Moved>(path`/process/instance/${id}/move`, body),
    /**
     * GET /process/instance/{id}/logs as Server-Sent Events: each entry (`data`: a LogEntry,
     * `id`: its number), with `progress: true` also `event: progress` (no id), then `event: end`
     * once the execution finished. Throws INSTANCE_NOT_FOUND when the stream cannot be opened.
     */
    streamLogs: (id: string, options: LogStreamOptions = {}): AsyncGenerator<SseEvent> => {
      const events = this.http.stream(
        withQuery(path`/process/instance/${id}/logs`, { follow: options.follow === false ? false : undefined }),
        options.lastEventId,
        options.signal,
      );
      return options.progress ? events : withoutProgress(events);
    },
    /** The log entries so far (the stream with follow=false). Throws as `streamLogs`. */
    logs: async (id: string): Promise<LogEntry[]> => {
      const entries: LogEntry[] = [];
      for await (const ev of this.instances.streamLogs(id, { follow: false }))
        if (ev.event !== 'end' && ev.data !== undefined) entries.push(JSON.parse(ev.data) as LogEntry);
      return entries;
    },
  };

  readonly tasks = {
    /** GET /process/tasks: waiting input nodes and user tasks, oldest first. Throws PROCESS_NOT_FOUND, FORBIDDEN. */
    list: (query: TaskListQuery = {}): Promise<TaskPage> => this.http.get<TaskPage>(withQuery('/process/tasks', query)),
    /** POST /process/task: completes or cancels a waiting node. Throws INSTANCE_NOT_FOUND, INSTANCE_NOT_RUNNING, NODE_NOT_WAITING, VALIDATION_ERROR (an answer that does not fit). */
    answer: (body: TaskAnswerBody): Promise<TaskAnswered> => this.http.post<TaskAnswered>('/process/task', body),
  };

  readonly events = {
    /** POST /process/event: delivers a message or signal (buffered when nothing waits and ttlSeconds is given). Throws NO_MATCHING_SUBSCRIPTION, FORBIDDEN, VALIDATION_ERROR. */
    send: (body: EventBody): Promise<EventDelivered> => this.http.post<EventDelivered>('/process/event', body),
    /** GET /events: lifecycle events as Server-Sent Events (`event`: its type, `data`: the event). */
    stream: (signal?: AbortSignal): AsyncGenerator<SseEvent> => this.http.stream('/events', undefined, signal),
  };

  readonly flows = {
    /** POST /admin/flows: validates and publishes. Throws FLOW_INVALID (details.problems), PROCESS_ID_CONFLICT, FORBIDDEN. */
    publish: (body: PublishBody): Promise<Published> => this.http.post<Published>('/admin/flows', body),
    /** GET /admin/flows. Throws FORBIDDEN. */
    list: (query: Org = {}): Promise<FlowList> => this.http.get<FlowList>(withQuery('/admin/flows', query)),
    /** GET /admin/flows/{processId}: one version's definition (default: the latest). Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND. */
    get: (processId: string, version?: string): Promise<FlowDetail> =>
      this.http.get<FlowDetail>(withQuery(path`/admin/flows/${processId}`, { version })),
    /** POST /admin/flows/{processId}/activate. Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND. */
    activate: (processId: string, body: ActivateBody): Promise<Activated> =>
      this.http.post<Activated>(path`/admin/flows/${processId}/activate`, body),
    /** GET /process/list: the flows the caller may start (public ones only without WORKFLOW_READ). */
    startable: (query: FlowPageQuery = {}): Promise<FlowPage> =>
      this.http.get<FlowPage>(withQuery('/process/list', query)),
  };

  readonly keys = {
    /** POST /admin/api-keys: the answer holds the secret, this once. Throws FORBIDDEN, VALIDATION_ERROR. */
    create: (body: CreateKeyBody): Promise<CreatedKey> => this.http.post<CreatedKey>('/admin/api-keys', body),
    /** GET /admin/api-keys. Throws FORBIDDEN. */
    list: (query: Org = {}): Promise<KeyList> => this.http.get<KeyList>(withQuery('/admin/api-keys', query)),
    /** GET /admin/api-keys/{keyId}. Throws NOT_FOUND. */
    get: (keyId: string): Promise<KeyView> => this.http.get<KeyView>(path`/admin/api-keys/${keyId}`),
    /** PATCH /admin/api-keys/{keyId}. Throws NOT_FOUND, KEY_REVOKED. */
    update: (keyId: string, body: UpdateKeyBody): Promise<KeyView> =>
      this.http.request<KeyView>('PATCH', path`/admin/api-keys/${keyId}`, body),
    /** POST /admin/api-keys/{keyId}/{suspend|activate|revoke}. Throws NOT_FOUND, KEY_REVOKED. */
    setStatus: (keyId: string, action: 'suspend' | 'activate' | 'revoke'): Promise<KeyView> =>
      this.http.post<KeyView>(`${path`/admin/api-keys/${keyId}`}/${action}`),
  };

  /** /admin/webhooks: registrations, their delivery log, signing test payloads (webhooks.ts). */
  readonly webhooks = webhookCalls(this);

  /** /process/bulk: operations over the executions a query selects (bulk.ts). */
  readonly bulk = bulkCalls(this);

  readonly emailConnections = {
    /** POST /admin/email-connections. Throws VALIDATION_ERROR (a name in use). */
    create: (body: CreateConnectionBody, query: Org = {}): Promise<ConnectionView> =>
      this.http.post<ConnectionView>(withQuery('/admin/email-connections', query), body),
    /** GET /admin/email-connections. */
    list: (query: Org = {}): Promise<{ items: ConnectionView[] }> =>
      this.http.get<{ items: ConnectionView[] }>(withQuery('/admin/email-connections', query)),
    /** GET /admin/email-connections/{name}. Throws NOT_FOUND. */
    get: (name: string, query: Org = {}): Promise<ConnectionView> =>
      this.http.get<ConnectionView>(withQuery(path`/admin/email-connections/${name}`, query)),
    /** PATCH /admin/email-connections/{name}. Throws NOT_FOUND. */
    update: (name: string, body: UpdateConnectionBody, query: Org = {}): Promise<ConnectionView> =>
      this.http.request<ConnectionView>('PATCH', withQuery(path`/admin/email-connections/${name}`, query), body),
    /** DELETE /admin/email-connections/{name}. Throws NOT_FOUND. */
    delete: (name: string, query: Org = {}): Promise<Deleted> =>
      this.http.request<Deleted>('DELETE', withQuery(path`/admin/email-connections/${name}`, query)),
  };

  readonly aiProviders = {
    /** POST /admin/ai-providers: the key is kept, never returned (`hasApiKey`). Throws VALIDATION_ERROR (a name in use, a field of the other kind, a base URL with credentials, a model file that is no GGUF file). */
    create: (body: CreateProviderBody, query: Org = {}): Promise<ProviderView> =>
      this.http.post<ProviderView>(withQuery('/admin/ai-providers', query), body),
    /** GET /admin/ai-providers. */
    list: (query: Org = {}): Promise<ProviderList> =>
      this.http.get<ProviderList>(withQuery('/admin/ai-providers', query)),
    /** GET /admin/ai-providers/{name}. Throws NOT_FOUND. */
    get: (name: string, query: Org = {}): Promise<ProviderView> =>
      this.http.get<ProviderView>(withQuery(path`/admin/ai-providers/${name}`, query)),
    /** PATCH /admin/ai-providers/{name} (`apiKey: null` removes the key). Throws NOT_FOUND, VALIDATION_ERROR (as `create`; a changed kind). */
    update: (name: string, body: UpdateProviderBody, query: Org = {}): Promise<ProviderView> =>
      this.http.request<ProviderView>('PATCH', withQuery(path`/admin/ai-providers/${name}`, query), body),
    /** DELETE /admin/ai-providers/{name}. Throws NOT_FOUND. */
    delete: (name: string, query: Org = {}): Promise<Deleted> =>
      this.http.request<Deleted>('DELETE', withQuery(path`/admin/ai-providers/${name}`, query)),
    /** POST /admin/ai-providers/{name}/test: a tiny prompt, answered. Throws NOT_FOUND, AI_PROVIDER_TEST_FAILED (`details.code`: the node failure code), SERVICE_UNAVAILABLE. */
    test: (name: string, query: Org = {}): Promise<ProviderTested> =>
      this.http.post<ProviderTested>(withQuery(path`/admin/ai-providers/${name}/test`, query)),
  };

  readonly memory = {
    /** GET /admin/memory: live entries (no values), by namespace then key; follow `nextCursor`. Throws VALIDATION_ERROR (a cursor it did not give). */
    list: (query: MemoryListQuery = {}): Promise<MemoryPage> =>
      this.http.get<MemoryPage>(withQuery('/admin/memory', query)),
    /** GET /admin/memory/namespaces: each namespace with its live entries' count and bytes. */
    namespaces: (query: Org = {}): Promise<MemoryNamespaces> =>
      this.http.get<MemoryNamespaces>(withQuery('/admin/memory/namespaces', query)),
    /** GET /admin/memory/{namespace}/{key}. Throws NOT_FOUND (missing or past its TTL). */
    get: (namespace: string, key: string, query: Org = {}): Promise<MemoryEntryView> =>
      this.http.get<MemoryEntryView>(withQuery(path`/admin/memory/${namespace}/${key}`, query)),
    /** DELETE /admin/memory/{namespace}/{key}. Throws NOT_FOUND. */
    delete: (namespace: string, key: string, query: Org = {}): Promise<MemoryDeleted> =>
      this.http.request<MemoryDeleted>('DELETE', withQuery(path`/admin/memory/${namespace}/${key}`, query)),
  };

  readonly files = {
    /**
     * POST /files: uploads `content` (its type as `mimeType`, default application/octet-stream).
     * Throws PAYLOAD_TOO_LARGE (over the daemon's --max-file-size), FORBIDDEN.
     */
    put: (
      content: Uint8Array | ReadableStream<Uint8Array>,
      options: { name?: string; mimeType?: string; organization?: string } = {},
    ): Promise<FileView> =>
      this.http.upload<FileView>(
        withQuery('/files', { name: options.name, organization: options.organization }),
        content,
        options.mimeType ?? 'application/octet-stream',
      ),
    /** GET /files/limits: the largest file POST /files takes. */
    limits: (): Promise<FileLimits> => this.http.get<FileLimits>('/files/limits'),
    /** GET /files: newest first; follow `nextCursor`. */
    list: (query: FileListQuery = {}): Promise<FilePage> => this.http.get<FilePage>(withQuery('/files', query)),
    /** GET /files/{fileId}/meta. Throws FILE_NOT_FOUND (also another organization's). */
    meta: (fileId: string): Promise<FileView> => this.http.get<FileView>(path`/files/${fileId}/meta`),
    /** GET /files/{fileId}: the content, as a Response to read. Throws FILE_NOT_FOUND. */
    content: (fileId: string, signal?: AbortSignal): Promise<Response> =>
      this.http.download(path`/files/${fileId}`, signal),
    /** DELETE /files/{fileId} (ADMIN). Throws FILE_NOT_FOUND. */
    delete: (fileId: string): Promise<FileDeleted> => this.http.request<FileDeleted>('DELETE', path`/files/${fileId}`),
  };

  readonly environments = {
    /** GET /admin/environments/{env}/variables. Throws FORBIDDEN. */
    variables: (env: Environment, query: Org = {}): Promise<Variables> =>
      this.http.get<Variables>(withQuery(path`/admin/environments/${env}/variables`, query)),
    /** PUT /admin/environments/{env}/variables/{name}. Throws VALIDATION_ERROR. */
    set: (env: Environment, name: string, value: string, query: Org = {}): Promise<VariableChanged> =>
      this.http.request<VariableChanged>('PUT', withQuery(path`/admin/environments/${env}/variables/${name}`, query), {
        value,
      }),
    /** DELETE /admin/environments/{env}/variables/{name}. Throws NOT_FOUND. */
    unset: (env: Environment, name: string, query: Org = {}): Promise<VariableChanged> =>
      this.http.request<VariableChanged>(
        'DELETE',
        withQuery(path`/admin/environments/${env}/variables/${name}`, query),
      ),
  };

  readonly domains = {
    /** PUT /admin/domains/{name}: registers the domain, or replaces it whole. Throws VALIDATION_ERROR (`details.problems`: a schema that does not compile), DOMAIN_IN_USE (an action left out still has jobs). */
    register: (name: string, body: RegisterDomainBody, query: Org = {}): Promise<DomainView> =>
      this.http.request<DomainView>('PUT', withQuery(path`/admin/domains/${name}`, query), body),
    /** GET /admin/domains. */
    list: (query: Org = {}): Promise<DomainList> => this.http.get<DomainList>(withQuery('/admin/domains', query)),
    /** GET /admin/domains/{name}. Throws DOMAIN_NOT_FOUND. */
    get: (name: string, query: Org = {}): Promise<DomainView> =>
      this.http.get<DomainView>(withQuery(path`/admin/domains/${name}`, query)),
    /** DELETE /admin/domains/{name}. Throws DOMAIN_NOT_FOUND, DOMAIN_IN_USE. */
    delete: (name: string, query: Org = {}): Promise<Deleted> =>
      this.http.request<Deleted>('DELETE', withQuery(path`/admin/domains/${name}`, query)),
  };

  readonly jobs = {
    /**
     * POST /jobs/activate: up to `maxJobs` jobs locked to `worker`, waiting up to `requestTimeout`
     * ms for some (a long poll; `signal` gives up). Throws DOMAIN_NOT_FOUND, FORBIDDEN.
     */
    activate: (body: ActivateJobsBody, signal?: AbortSignal): Promise<ActivatedJobs> =>
      this.http.request<ActivatedJobs>('POST', '/jobs/activate', body, signal),
    /** POST /jobs/{key}/complete. Throws JOB_NOT_FOUND, JOB_LOCK_LOST, JOB_OUTPUT_INVALID (the attempt counted as failed). */
    complete: (key: string, body: CompleteJobBody): Promise<JobAnswer> =>
      this.http.post<JobAnswer>(path`/jobs/${key}/complete`, body),
    /**
     * POST /jobs/complete: many jobs completed in one request; one outcome per job, in order
     * (`{key, status: "completed"}`, or the error its own complete would have thrown, as
     * `{key, error, message, details?}`).
     */
    completeMany: (body: CompleteJobsBody): Promise<CompletedJobs> =>
      this.http.post<CompletedJobs>('/jobs/complete', body),
    /** POST /jobs/{key}/fail: a failed attempt (retried while attempts are left). Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
    fail: (key: string, body: FailJobBody): Promise<JobAnswer> =>
      this.http.post<JobAnswer>(path`/jobs/${key}/fail`, body),
    /** POST /jobs/{key}/heartbeat: extends the lock. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
    heartbeat: (key: string, body: HeartbeatJobBody): Promise<JobAnswer> =>
      this.http.post<JobAnswer>(path`/jobs/${key}/heartbeat`, body),
    /** POST /jobs/{key}/release: gives the job back unworked. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
    release: (key: string, worker: string): Promise<JobAnswer> =>
      this.http.post<JobAnswer>(path`/jobs/${key}/release`, { worker }),
    /** GET /jobs: waiting jobs, oldest first. */
    list: (query: JobListQuery = {}): Promise<JobList> => this.http.get<JobList>(withQuery('/jobs', query)),
    /** GET /jobs/workers: each domain's jobs and the workers seen lately. */
    workers: (query: Org = {}): Promise<DomainHealthList> =>
      this.http.get<DomainHealthList>(withQuery('/jobs/workers', query)),
  };

  readonly triggers = {
    /** GET /admin/triggers: every active flow version's triggers and their health. */
    list: (query: Org = {}): Promise<TriggerList> => this.http.get<TriggerList>(withQuery('/admin/triggers', query)),
  };

  /** The daemon's operations (client/admin.ts): backups, the database's daemons, the secrets keys. */
  get admin(): ReturnType<typeof adminApi> {
    return adminApi(this.http);
  }
}
