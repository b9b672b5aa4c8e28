import type {
  ActivatedJobs,
  ActivateJobsBody,
  FileView,
  Health,
  LogEntry,
  LogProgress,
  StartBody,
  Started,
  StartQuery,
} from '../shared/api/index.js';
import { calls, sent, streams, type Org, type Send } from '../shared/api/calls/index.js';
import type { SseEvent } from '../shared/sse.js';
import { ApiClient, type Connection } from './http.js';

/** What starting an execution takes: the flow, its input variables, and optionally where and which version. */
export interface StartRequest {
  readonly processId: string;
  readonly data: Record<string, unknown>;
  /** The environment to run in (the daemon's default: PRODUCTION). */
  readonly environment?: string;
  /** Run this version instead of the environment's active one. */
  readonly version?: string;
  readonly correlationKey?: string;
  /** Higher first where starts and work wait their turn (the daemon's default: 0). */
  readonly priority?: number;
  /** Seconds to wait for the execution to end (`?wait=`): then the answer carries its state, variables and output. */
  readonly wait?: number;
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

/**
 * The typed client of the daemon's HTTP API: one method per route, its call (path, request and
 * answer types) from shared/api/calls, sent by ApiClient. Every method throws a WfxError: the
 * daemon's error code when it answered (the codes docs/api.md lists per route, and the calls
 * name the ones particular to each), DAEMON_UNREACHABLE when it did not, UNAUTHORIZED (a hint
 * names the credential tried). Here are only what a call cannot say: streams, uploads and
 * downloads, and a start that asks who the credential is first.
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

  /** Sends through this client's transport (read at each call: the groups below are made before it is set). */
  private readonly send: Send = (call) => this.http.send(call);

  /** GET /health: the daemon serves (and its version). Throws the store's failure (STORE_FAILED) once its store failed. */
  health(): Promise<Health> {
    return this.send(calls.health());
  }

  /** /auth: who the credential is; a console sign-in link. */
  readonly auth = sent(calls.auth, this.send);

  /** Whether the credential is a system key, asked once (a credential's organization never changes). */
  private systemKey: Promise<boolean> | undefined;

  private isSystemKey(): Promise<boolean> {
    const asked = (this.systemKey ??= this.auth.whoami().then((w) => w.system));
    // A failed ask (the daemon not reached) is asked again next time.
    asked.catch(() => {
      if (this.systemKey === asked) this.systemKey = undefined;
    });
    return asked;
  }

  readonly process = {
    ...sent(calls.process, this.send),
    /**
     * Starts an execution the way this credential must: system keys through POST /process/start,
     * organization keys through POST /process/exec (asked of GET /auth/whoami, once a client). Throws
     * PROCESS_NOT_FOUND, PROCESS_NOT_PUBLISHED, VERSION_NOT_FOUND, FORBIDDEN, VALIDATION_ERROR.
     */
    start: async (req: StartRequest): Promise<Started> => {
      const system = await this.isSystemKey();
      const query = {
        ...(req.environment && { environment: req.environment }),
        ...(req.version && { versionNumber: req.version }),
        ...(req.wait !== undefined && { wait: req.wait }),
      } as StartQuery;
      const body: StartBody = {
        processId: req.processId,
        data: req.data,
        ...(req.correlationKey !== undefined && { correlationKey: req.correlationKey }),
        ...(req.priority !== undefined && { priority: req.priority }),
      };
      return this.send(system ? calls.process.startAny(body, query) : calls.process.exec(body, query));
    },
  };

  readonly instances = {
    ...sent(calls.instances, this.send),
    /** Where the daemon's browser console shows execution `id`. Pure. */
    consoleUrl: (id: string): string =>
      `${this.connection.url.replace(/\/+$/, '')}/executions/${encodeURIComponent(id)}`,
    /**
     * GET /process/instance/{id}/logs as Server-Sent Events: each entry (`data`: a LogEntry,
     * `id`: its number), with `progress: true` also `event: progress` (no id), then `event: end`
     * once the execution finished. Throws INSTANCE_NOT_FOUND when the stream cannot be opened.
     */
    streamLogs: (id: string, options: LogStreamOptions = {}): AsyncGenerator<SseEvent> => {
      const events = this.http.stream(
        streams.logs(id, { follow: options.follow === false ? false : undefined }),
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

  readonly tasks = sent(calls.tasks, this.send);

  readonly events = {
    ...sent(calls.events, this.send),
    /** GET /events: lifecycle events as Server-Sent Events (`event`: its type, `data`: the event). */
    stream: (signal?: AbortSignal): AsyncGenerator<SseEvent> => this.http.stream(streams.events(), undefined, signal),
  };

  readonly flows = sent(calls.flows, this.send);
  readonly keys = sent(calls.keys, this.send);

  /** /admin/webhooks: registrations, their delivery log, signing test payloads. */
  readonly webhooks = {
    ...sent(calls.webhooks, this.send),
    /** GET /admin/webhooks/{name}/deliveries/stream: each delivery as it is processed (`event: delivery`). Throws NOT_FOUND. */
    streamDeliveries: (name: string, signal?: AbortSignal, query: Org = {}): AsyncGenerator<SseEvent> =>
      this.http.stream(streams.deliveries(name, query), undefined, signal),
  };

  /** /process/bulk: operations over the executions a query selects. */
  readonly bulk = sent(calls.bulk, this.send);
  readonly emailConnections = sent(calls.emailConnections, this.send);
  readonly aiProviders = sent(calls.aiProviders, this.send);
  readonly memory = sent(calls.memory, this.send);

  readonly files = {
    ...sent(calls.files, this.send),
    /**
     * POST /files: uploads `content` (its type as `mimeType`, default application/octet-stream).
     * Throws PAYLOAD_TOO_LARGE (over the daemon's --max-file-size), FORBIDDEN.
     */
    put: (
      content: Uint8Array | ReadableStream<Uint8Array>,
      options: { name?: string; mimeType?: string; organization?: string } = {},
    ): Promise<FileView> =>
      this.http.upload<FileView>(
        calls.files.put({ name: options.name, organization: options.organization }).path,
        content,
        options.mimeType ?? 'application/octet-stream',
      ),
    /** GET /files/{fileId}: the content, as a Response to read. Throws FILE_NOT_FOUND. */
    content: (fileId: string, signal?: AbortSignal): Promise<Response> =>
      this.http.download(calls.files.content(fileId).path, signal),
  };

  readonly environments = sent(calls.environments, this.send);
  /** The values flows name as `{secret.NAME}` (never read back). */
  readonly secrets = sent(calls.secrets, this.send);
  readonly project = sent(calls.project, this.send);
  readonly domains = sent(calls.domains, this.send);

  readonly jobs = {
    ...sent(calls.jobs, this.send),
    /**
     * POST /jobs/activate: up to `maxJobs` jobs locked to `worker`, waiting up to `requestTimeout`
     * ms for some (a long poll; `signal` gives up). Throws DOMAIN_NOT_FOUND, FORBIDDEN.
     */
    activate: (body: ActivateJobsBody, signal?: AbortSignal): Promise<ActivatedJobs> =>
      this.http.send(calls.jobs.activate(body), signal),
  };

  readonly triggers = sent(calls.triggers, this.send);
  /** /admin/schedules: pause, resume, backfill a flow's schedules. */
  readonly schedules = sent(calls.schedules, this.send);

  /** The daemon's operations: backups, the database's daemons, the secrets keys, the audit trail. */
  readonly admin = sent(calls.operator, this.send);
}
