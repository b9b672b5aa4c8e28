/*
 * Executions: start (POST /process/exec, /process/start), cancel, one execution, its log (SSE)
 * and a flow's executions; an execution's node instances are node-instances.ts's. Answers
 * without a reply schema are types only: a reply schema makes Fastify serialize with
 * fast-json-stringify, which drops properties the schema does not name (an execution's `data`,
 * a node's `wait`), so those answers stay serialized by JSON.stringify.
 */
import { Type, type Static } from './schema.js';
import type { ExecutionEndState } from '../flow/types.js';
import { SEARCH_MAX_ATTRIBUTES, SEARCH_NAME_PATTERN, SEARCH_VALUE_MAX } from '../flow/search-attributes.js';
import { WAITING_FOR, type NodeView } from './node-instances.js';
import type { ReplayOfView, RetryView } from './recovery.js';
import {
  Answer,
  ENVIRONMENTS,
  IdParams,
  NullableString,
  OrganizationFilter,
  Page,
  PageFields,
  StringEnum,
  type Environment,
} from './common.js';

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

/** Body of POST /process/exec and /process/start. */
export const StartBody = Type.Object(
  {
    processId: Type.String({ minLength: 1, maxLength: 200 }),
    correlationKey: Type.Optional(NullableString({ maxLength: 1000 })),
    data: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object' })),
    /** Higher first where starts wait their turn (a flow's concurrency queue) and work waits for a sandbox or a job worker. */
    priority: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000 })),
  },
  { additionalProperties: false },
);
export type StartBody = Static<typeof StartBody>;

/** The longest `?wait=` a start takes, in seconds (a caller that needs longer asks again: GET /process/instance/{id}). */
export const MAX_START_WAIT_SECONDS = 300;

/** Querystring of POST /process/exec and /process/start: where, which version, and how long to wait for its end. */
export const StartQuery = Type.Object(
  {
    environment: Type.Optional(StringEnum(ENVIRONMENTS)),
    versionNumber: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
    /**
     * Seconds to wait for the execution to end: 200 with its state and variables if it does,
     * else 202 with its id once they pass (MAX_START_WAIT_SECONDS at most).
     */
    wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_START_WAIT_SECONDS })),
  },
  { additionalProperties: false },
);
export type StartQuery = Static<typeof StartQuery>;

/** How long an MCP tool call waits for its execution's end by default (a client's own timeout is often a minute). */
export const MCP_DEFAULT_WAIT_SECONDS = 50;

/** Querystring of /mcp (the URL an MCP client is configured with): which flows' versions, and how long a call waits. */
export const McpQuery = Type.Object(
  {
    environment: Type.Optional(StringEnum(ENVIRONMENTS)),
    /** Seconds a tools/call waits for its execution to end before answering that it still runs. */
    wait: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_START_WAIT_SECONDS })),
  },
  { additionalProperties: false },
);
export type McpQuery = Static<typeof McpQuery>;

/**
 * What POST /process/exec and /process/start answer (a reply schema): `status` `started`, or
 * `queued` (its flow's concurrency limit is reached); with `?wait=` and the execution ended in
 * time, its end: `status` `completed`, `failed` or `cancelled`, its `state`, and its variables
 * as `data` (a failure's error in `data.error`) and its `output`.
 */
export const Started = Answer({
  processInstanceId: Type.String(),
  processId: Type.String(),
  status: Type.String(),
  startTime: Type.String(),
  state: Type.Optional(StringEnum(EXECUTION_STATES)),
  stateCd: Type.Optional(Type.Integer()),
  endTime: Type.Optional(NullableString()),
  data: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true })),
  output: Type.Optional(
    Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true }),
  ),
});
export type Started = Static<typeof Started>;

/** What POST /process/instance/{id}/cancel answers (a reply schema). */
export const Cancelled = Answer({ processInstanceId: Type.String(), status: Type.String() });
export type Cancelled = Static<typeof Cancelled>;

export { IdParams };
// The node instances an execution's answer carries: exported here too, with the answer they are part of.
export * from './node-instances.js';

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
    ...PageFields(1000, 50),
    /** Include child executions (loop iterations, subprocesses, agents' tools); default: top-level only. */
    children: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type InstanceListQuery = Static<typeof InstanceListQuery>;

/** A querystring key `search.NAME` (NAME a search attribute's name). */
export const SEARCH_QUERY_KEY = `^search\\.${SEARCH_NAME_PATTERN.slice(1)}`;

/**
 * Search attributes as a mapping, NAME -> VALUE: a bulk query's `search`, as the querystring's
 * `search.NAME=VALUE` parameters.
 */
export const SearchAttributes = Type.Unsafe<Record<string, string>>({
  type: 'object',
  propertyNames: { pattern: SEARCH_NAME_PATTERN },
  additionalProperties: { type: 'string', maxLength: SEARCH_VALUE_MAX },
  maxProperties: SEARCH_MAX_ATTRIBUTES,
  description: 'executions whose search attribute NAME is exactly VALUE, for each NAME: VALUE',
});

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
    /**
     * Running executions waiting for this at some node (`person`: an input node or user task;
     * `event`, `timer`, `worker`, `child`, `queue`; `any`: waiting for anything); only running
     * executions match.
     */
    waiting: Type.Optional(StringEnum([...WAITING_FOR, 'any'] as const)),
    /**
     * Search attributes (a flow's `search:`), each `name=value`: executions whose attribute
     * `name` is exactly `value`, all of them (repeat the parameter for more).
     */
    where: Type.Optional(
      Type.Array(
        Type.String({
          pattern: `${SEARCH_NAME_PATTERN.slice(0, -1)}=`,
          maxLength: 41 + SEARCH_VALUE_MAX,
          description: 'name=value',
        }),
        { maxItems: SEARCH_MAX_ATTRIBUTES },
      ),
    ),
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
    ...PageFields(200, 50),
    organization: OrganizationFilter('executions'),
  },
  {
    additionalProperties: false,
    // `search.NAME=VALUE` (SPEC section 11): `where=NAME=VALUE` written as a parameter of its own.
    patternProperties: {
      [SEARCH_QUERY_KEY]: Type.String({
        maxLength: SEARCH_VALUE_MAX,
        description: 'search.NAME=VALUE: executions whose search attribute NAME is exactly VALUE',
      }),
    },
  },
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
  /** A start queued by its flow's concurrency limit: its place in the queue (1: the next to start); absent otherwise. */
  queuePosition: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Where a running execution waits, and for what (WAITING_FOR), in node order; absent when it waits nowhere. */
  waits: Type.Optional(
    Type.Array(Answer({ nodeId: Type.String(), nodeName: Type.String(), for: StringEnum(WAITING_FOR) })),
  ),
  /** Its search attributes (its flow's `search:`, nodes' updates); absent when it has none. */
  search: Type.Optional(
    Type.Unsafe<Readonly<Record<string, string>>>({ type: 'object', additionalProperties: { type: 'string' } }),
  ),
});
export type InstanceSummary = Static<typeof InstanceSummary>;

/** GET /process/instances and /process/{id}/instances: a page, newest first (a type only). */
export const InstancePage = Page(InstanceSummary);
export type InstancePage = Static<typeof InstancePage>;

/** The error of a failed execution, in its `data.error`. */
export interface ExecutionError {
  readonly code: string;
  readonly message: string;
  readonly nodeId: string | null;
}

/** A failed execution's error as GET /process/instance/{id} gives it (`data.error`). */
export interface InstanceFailure extends ExecutionError {
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
  /** Its start's priority (higher first where starts and work wait their turn); absent: 0. */
  readonly priority?: number;
  /** Its search attributes (its flow's `search:`, nodes' updates); absent when it has none. */
  readonly search?: Readonly<Record<string, string>>;
  /** A start queued by its flow's concurrency limit: its place in the queue (1: the next to start); absent otherwise. */
  readonly queuePosition?: number;
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
