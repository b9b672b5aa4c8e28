/*
 * Executions: start (POST /process/exec, /process/start), cancel, one execution, its log (SSE)
 * and a flow's executions. Answers without a reply schema are types only: a reply schema makes
 * Fastify serialize with fast-json-stringify, which drops properties the schema does not name
 * (an execution's `data`, a node's `wait`), so those answers stay serialized by JSON.stringify.
 */
import { Type, type Static } from './schema.js';
import type { ExecutionEndState, FormField, InputType } from '../flow/types.js';
import type { ReplayOfView, RetryView } from './recovery.js';
import { Answer, ENVIRONMENTS, IdParams, Name, NullableString, Page, StringEnum, type Environment } from './common.js';

/** Execution states, `stateCd` (SPEC.md section 4). */
export const STATE = { RUNNING: 0, COMPLETED: 1, FAILED: 2, CANCELLED: 3 } as const;
/** An execution's `stateCd` (a value of STATE). */
export type StateCd = (typeof STATE)[keyof typeof STATE];
/** An execution's `state`: the name of its `stateCd`, for scripts that would rather not map 0-3. */
export type StateName = keyof typeof STATE;
/** The state names, by `stateCd`. */
export const EXECUTION_STATES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const satisfies readonly StateName[];
/** The name of `stateCd` (`RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`). */
export function stateName(stateCd: number): StateName {
  return EXECUTION_STATES[stateCd] ?? 'RUNNING';
}

/** Node instance states, `statusCd`. */
export const STATUS = { ACTIVE: 0, WAITING: 1, COMPLETED: 2, FAILED: 3, CANCELLED: 4, TIMED_OUT: 5 } as const;
/** A node instance's `statusCd` (a value of STATUS). */
export type StatusCd = (typeof STATUS)[keyof typeof STATUS];

/** What a waiting node waits for (`kind`), in the order the engine introduced them. */
export const WAIT_KINDS = ['input', 'event', 'timer', 'child', 'loop', 'job'] as const;
/** A wait's `kind` (one of WAIT_KINDS). */
export type WaitKind = (typeof WAIT_KINDS)[number];

/** Body of POST /process/exec and /process/start. */
export const StartBody = Type.Object(
  {
    processId: Type.String({ minLength: 1, maxLength: 200 }),
    correlationKey: Type.Optional(NullableString({ maxLength: 1000 })),
    data: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object' })),
  },
  { additionalProperties: false },
);
export type StartBody = Static<typeof StartBody>;

/** Querystring of POST /process/exec and /process/start: where and which version. */
export const StartQuery = Type.Object(
  {
    environment: Type.Optional(StringEnum(ENVIRONMENTS)),
    versionNumber: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
  },
  { additionalProperties: false },
);
export type StartQuery = Static<typeof StartQuery>;

/** What POST /process/exec and /process/start answer (a reply schema). */
export const Started = Answer({
  processInstanceId: Type.String(),
  processId: Type.String(),
  status: Type.String(),
  startTime: Type.String(),
});
export type Started = Static<typeof Started>;

/** What POST /process/instance/{id}/cancel answers (a reply schema). */
export const Cancelled = Answer({ processInstanceId: Type.String(), status: Type.String() });
export type Cancelled = Static<typeof Cancelled>;

export { IdParams };

/** Querystring of GET /process/instance/{id}/logs. */
export const LogsQuery = Type.Object(
  {
    follow: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'false: the entries so far, then the stream closes (no `end` unless finished)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LogsQuery = Static<typeof LogsQuery>;

/** Headers GET /process/instance/{id}/logs reads: `Last-Event-ID` resumes after that entry. */
export const LogsHeaders = Type.Object({ 'last-event-id': Type.Optional(Type.String()) });

/** Querystring of GET /process/{id}/instances. */
export const InstanceListQuery = Type.Object(
  {
    stateCd: Type.Optional(Type.Integer({ minimum: 0, maximum: 3 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    /** Include child executions (loop iterations, subprocesses, agents' tools); default: top-level only. */
    children: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type InstanceListQuery = Static<typeof InstanceListQuery>;

/** Querystring of GET /process/instances: every execution the caller may see, filtered. */
export const ExecutionListQuery = Type.Object(
  {
    processId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** A flow version (`processVersion`). */
    version: Type.Optional(Type.String({ pattern: '^[0-9]+$', maxLength: 20 })),
    environment: Type.Optional(StringEnum(ENVIRONMENTS)),
    state: Type.Optional(StringEnum(EXECUTION_STATES)),
    /** The failure code of a failed execution (its `data.error.code`). */
    errorCode: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** The node a failed execution failed at (its `data.error.nodeId`); only failed executions match. */
    failedNode: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    correlationKey: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    /** Started at or after this instant. */
    startedAfter: Type.Optional(Type.String({ format: 'date-time' })),
    /** Started before this instant. */
    startedBefore: Type.Optional(Type.String({ format: 'date-time' })),
    /** Include child executions (loop iterations, subprocesses, agents' tools); default: top-level only. */
    children: Type.Optional(Type.Boolean({ default: false })),
    /** The direct children of this execution only. */
    parentId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /**
     * The tree of this top-level execution: it and every execution started under it (children,
     * loop iterations, agents' tools, called flows and theirs), even after it ended; children
     * included whatever `children` says.
     */
    rootId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    /** The `nextCursor` of the previous page. */
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    organization: Type.Optional(
      Type.Unsafe<string>({
        ...Name,
        description: "system keys only: this organization's executions (default: every organization)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExecutionListQuery = Static<typeof ExecutionListQuery>;

/** One execution log entry (the seed's fields): an SSE `data` of GET /process/instance/{id}/logs. */
export interface LogEntry {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly nodeType: string;
  readonly message: string;
  readonly level: 'INFO' | 'WARN' | 'ERROR';
  readonly timestamp: string;
  readonly variables?: Record<string, unknown>;
}

/** An execution without its variables, nodes and log: what GET /process/instances and /process/{id}/instances list (a type only). */
export const InstanceSummary = Answer({
  processInstanceId: Type.String(),
  processId: Type.String(),
  processName: Type.String(),
  processVersion: Type.String(),
  environment: StringEnum(ENVIRONMENTS),
  stateCd: Type.Integer(),
  /** The name of stateCd. */
  state: StringEnum(EXECUTION_STATES),
  /** A failed execution's failure code (its `data.error.code`); null otherwise. */
  errorCode: NullableString(),
  startTime: Type.String(),
  endTime: NullableString(),
  correlationKey: NullableString(),
  parentInstanceId: NullableString(),
  /** Its direct child executions (loop iterations, subprocesses, agents' tools), live and archived. */
  childCount: Type.Integer(),
  /** The nodes a running execution waits at (input, event, timer, child, loop); empty otherwise. */
  waitingNodeIds: Type.Unsafe<readonly string[]>({ type: 'array', items: { type: 'string' } }),
});
export type InstanceSummary = Static<typeof InstanceSummary>;

/** GET /process/instances and /process/{id}/instances: a page, newest first (a type only). */
export const InstancePage = Page(InstanceSummary);
export type InstancePage = Static<typeof InstancePage>;

/** Where a loop is (a loop node's wait). */
export interface LoopState {
  /** The items of a collection loop (resolved when it started); null for a condition loop. */
  readonly items: readonly unknown[] | null;
  /** Iterations started, done, and running now. */
  readonly started: number;
  readonly done: number;
  readonly running: number;
  /** `collect`: one value per iteration, by index. */
  readonly collected: readonly unknown[];
}

/** A tool call a model asked for, as its conversation keeps it. */
export interface AgentToolCall {
  /** The provider's id for the call (made up where it gives none); its result names it. */
  readonly id: string;
  /** The tool's name, as the model was told it. */
  readonly name: string;
  /** The arguments as the model wrote them: JSON text (kept as text: a model may write invalid JSON). */
  readonly arguments: string;
}

/**
 * One message of a callAgent's conversation: what was sent (system prompt, remembered
 * messages, prompt), each answer of the model (with the tool calls it asked for), and each
 * tool's result.
 */
export type AgentMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string; readonly toolCalls?: readonly AgentToolCall[] }
  | {
      readonly role: 'tool';
      readonly toolCallId: string;
      readonly name: string;
      /** The tool flow's output as JSON text, or `{"error": ...}`. */
      readonly content: string;
    };

/** A tool call as the agent tracks it: which child execution runs it and how it ended. */
export interface AgentCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
  /** The flow the tool runs. */
  readonly processId: string;
  /** The turn (1-based) whose answer asked for it. */
  readonly step: number;
  /** The child execution running it; null before it starts (one at a time) or when the arguments were refused. */
  readonly childInstanceId: string | null;
  /** null while it runs or waits its turn; true when its flow completed; false for a refusal or a failure. */
  readonly ok: boolean | null;
}

/**
 * A callAgent node's journaled state: the conversation so far and every tool call. Each turn
 * appends to it (the new messages only), so after a crash only the turn in flight is redone.
 */
export interface AgentState {
  readonly messages: readonly AgentMessage[];
  /** Model turns answered so far (maxSteps counts them; never reset by a retry or a restart). */
  readonly steps: number;
  readonly calls: readonly AgentCall[];
  /** Tokens of every turn so far (maxTotalTokens counts them). */
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number };
}

/** What a waiting node waits for. `dueAt` arms a timer (input timeout, timer event). */
export type Wait =
  | {
      readonly kind: 'input';
      readonly inputType: InputType;
      readonly formTitle: string | null;
      readonly options: readonly unknown[] | null;
      readonly fields: readonly FormField[] | null;
      readonly assignee: string | null;
      readonly dueAt: string | null;
    }
  | {
      readonly kind: 'event';
      readonly eventType: 'message' | 'signal';
      readonly messageRef: string;
      readonly correlationKey: string | null;
      readonly dueAt: null;
    }
  | { readonly kind: 'timer'; readonly dueAt: string }
  /** A subProcess waits for its child execution (in `children`). */
  | { readonly kind: 'child'; readonly dueAt: null }
  /** A loopNode runs its iterations as child executions. */
  | { readonly kind: 'loop'; readonly dueAt: null; readonly state: LoopState }
  /** A callAgent waits for the child executions running its tool calls (its state: the node's `agent`). */
  | { readonly kind: 'tools'; readonly dueAt: null }
  /** A domainTask's job waits for a worker (the jobs API); `dueAt` is the node's `timeout`. */
  | JobWait;

/** The worker holding a job, and until when (a lock past `expiresAt` has lapsed: the job is available again). */
export interface JobLock {
  readonly worker: string;
  readonly activatedAt: string;
  readonly expiresAt: string;
  /** The lock duration the worker asked for: a heartbeat without its own extends by this. */
  readonly durationMs: number;
}

/**
 * A domainTask's job, as its node's wait keeps it: everything a worker gets, and the state of
 * its attempts. Changed only by records (an activation, a heartbeat, a release: `job.locked`; a
 * failed attempt: a new `node.waiting`), so a restart finds each lock as it was.
 */
export interface JobWait {
  readonly kind: 'job';
  /** The node's `timeout` from when it was reached (JOB_TIMEOUT); null: none. */
  readonly dueAt: string | null;
  readonly domain: string;
  readonly action: string;
  /** The input, resolved when the node was reached. */
  readonly input: Record<string, unknown>;
  /** The attempt being made (1-based): a failed attempt makes the next. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Activations so far, lapsed locks included. */
  readonly activations: number;
  /** A retry's backoff: not activated before this instant; null: at once. */
  readonly notBefore: string | null;
  /** The worker holding it, or null (waiting for one). */
  readonly lock: JobLock | null;
  /** The last failed attempt's error. */
  readonly lastError: { readonly code: string; readonly message: string } | null;
}

/** A node instance as GET /process/instance/{id} gives it. */
export interface NodeView {
  readonly nodeInstanceId: string;
  readonly nodeId: string;
  readonly nodeName: string;
  readonly nodeType: string;
  readonly statusCd: StatusCd;
  readonly startTime: string;
  readonly endTime: string | null;
  /** What it waits for, while it waits (statusCd 1). */
  readonly wait?: Wait;
  /** Child executions this node started (subProcess, loopNode, callAgent's tools), oldest first. */
  readonly childInstanceIds?: readonly string[];
  /** A callAgent's conversation and tool calls so far. */
  readonly agent?: AgentState;
  /** The tries a failed node made (a serviceTask's or aiTask's retries, a job's attempts), when more than one. */
  readonly attempts?: number;
  /**
   * Who answered it, an input node or user task: `key:<id>` (an API key or a console session),
   * `oidc:<subject>` (a bearer token) or `daemon`; never a secret. Absent: not answered through the API.
   */
  readonly answeredBy?: string;
  /** When it was answered (with answeredBy). */
  readonly answeredAt?: string;
}

/** The error of a failed execution, in its `data.error`. */
export interface InstanceError {
  readonly code: string;
  readonly message: string;
  readonly nodeId: string | null;
}

/** A failed execution's error as GET /process/instance/{id} gives it (`data.error`). */
export interface InstanceFailure extends InstanceError {
  /**
   * How many times the failing node ran in this execution: each of its node instances (a retry
   * runs it again as a new one) counted with the tries its work made (NodeView.attempts). 0 when
   * it failed at no node.
   */
  readonly attempts: number;
}

/**
 * GET /process/instance/{id}: the seed's fields, plus output, parentInstanceId, error (in
 * `data.error`) and nodes (a type only: see the top of this file).
 */
export interface InstanceView {
  readonly processInstanceId: string;
  readonly processId: string;
  readonly processName: string;
  readonly processVersion: string;
  /** STATE. */
  readonly stateCd: number;
  /** The name of stateCd. */
  readonly state: StateName;
  readonly startTime: string;
  readonly endTime: string | null;
  readonly correlationKey: string | null;
  /** The organization it runs in (what a system key names in `?organization=` to act there). */
  readonly organization: string;
  readonly data: Record<string, unknown> & { error?: InstanceFailure };
  readonly output: Record<string, unknown> | null;
  readonly parentInstanceId: string | null;
  readonly parentNodeInstanceId?: string;
  /**
   * The top-level execution of its tree (`GET /process/instances?rootId=`), for one started under
   * another (a child, a flow called); absent for a top-level one, itself a tree's root.
   */
  readonly rootId?: string;
  /** A loop iteration's 0-based index. */
  readonly iteration?: number;
  /** The agent's tool call this execution runs (a callAgent's child). */
  readonly toolCallId?: string;
  readonly environment: Environment;
  readonly nodes: readonly NodeView[];
  /** Model tokens the execution's aiTasks used so far (summed over their calls); absent before its first. */
  readonly usage?: ExecutionUsage;
  /** Each retry after a failure, oldest first (POST /process/instance/{id}/retry); absent before the first. */
  readonly retries?: readonly RetryView[];
  /** The execution this one replays, from which node, started by whom (POST /process/instance/{id}/replay). */
  readonly replayOf?: ReplayOfView;
  /** The ended execution whose execution trigger started this one, and the chain of flows before it. */
  readonly triggeredBy?: TriggeredByView;
}

/**
 * What started an execution by an execution trigger: the ended execution, its flow (id and name),
 * the state it ended in, the flows before it (oldest first, the ended one's last), their count.
 */
export interface TriggeredByView {
  readonly processInstanceId: string;
  readonly processId: string;
  /** The ended execution's flow name then; absent for starts journaled before it was recorded. */
  readonly processName?: string;
  /** The state it ended in (what fired the trigger); absent for starts journaled before it was recorded. */
  readonly state?: ExecutionEndState;
  readonly depth: number;
  readonly chain: readonly string[];
}

/** Model usage summed over an execution's aiTask calls. */
export interface ExecutionUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Completed aiTask calls counted. */
  readonly calls: number;
}

/**
 * The `data` of the SSE event `progress` of GET /process/instance/{id}/logs (with `follow`):
 * a piece of a model's answer as it streams in. Not journaled, so it has no event id, is not
 * replayed on reconnect, and may be missed; the node's result in the variables is the record.
 */
export interface LogProgress {
  readonly nodeId: string;
  readonly nodeInstanceId: string;
  /** The text that arrived since the last `progress` of this node. */
  readonly delta: string;
}

/** The `data` of the SSE event `end` of GET /process/instance/{id}/logs. */
export interface LogEnd {
  readonly processInstanceId: string;
}
