/**
 * An execution as the live state holds it: its fields, its node instances and its log lines.
 * Plain JSON, as the rest of the state (state.ts).
 */
import type {
  AgentCall,
  AgentMessage,
  Environment,
  ExecutionUsage,
  ExecutionError,
  LogEntry,
  StateCd,
  StatusCd,
  TriggeredByView,
  Wait,
} from '../../shared/api/index.js';

/** One execution of a flow version. */
export interface Execution {
  readonly processInstanceId: string;
  readonly processId: string;
  readonly processName: string;
  /** The flow version it runs: changed only by `instance.moved` (records/moves.ts). */
  processVersion: string;
  readonly organization: string;
  readonly environment: Environment;
  readonly correlationKey: string | null;
  readonly parentInstanceId: string | null;
  /** The parent's node instance (subProcess, loopNode) that waits for this child; absent on a top-level execution. */
  readonly parentNodeInstanceId?: string;
  /**
   * For a child running a body of its flow (an embedded subProcess, a loop iteration): the
   * path of container node ids to that body (see nodesAt). Absent: the flow's own nodes.
   */
  readonly scope?: readonly string[];
  /** A loop iteration's 0-based index. */
  readonly iteration?: number;
  /** The tool call of its parent's callAgent that this execution runs. */
  readonly toolCallId?: string;
  /** How many callProcess starts led to this execution (bounded: a flow calling itself fails). */
  readonly callDepth?: number;
  /**
   * The execution at the top of its tree: children and executions started by callProcess carry
   * their starter's root (or the starter itself). Absent: this execution is a root.
   */
  readonly root?: string;
  /**
   * Its trace while tracing is on (observe/trace-context.ts, ExecutionTrace): `<traceId>-<spanId>`
   * and the span it continues, kept on the record so that nodes run after a restart join it.
   * Absent: started while tracing was off.
   */
  readonly trace?: string;
  /**
   * The concurrency slot it holds or waits for (its flow's `concurrency`, engine/step/concurrency.ts):
   * `<environment>\0<processId>\0<key value>`, within its organization. Absent: its flow has no limit.
   */
  readonly concurrency?: string;
  /** Its start's priority (higher first in queues); absent: 0. */
  readonly priority?: number;
  /** Its search attributes (shared/flow/search-attributes.ts): its flow's `search:` at start, updated by nodes'. Absent: none. */
  search?: Readonly<Record<string, string>>;
  /** The JSON size of `variables`, kept up by the reducer (sizes.ts); absent in records written before it was. */
  varSize?: number;
  /** The JSON size of `logs`, kept up by the reducer (sizes.ts). */
  logSize?: number;
  /** Node instances Active or Waiting: the execution's parallel branches (sizes.ts). */
  liveNodes?: number;
  stateCd: StateCd;
  readonly startTime: string;
  endTime: string | null;
  variables: Record<string, unknown>;
  output: Record<string, unknown> | null;
  error: ExecutionError | null;
  /** Node instances by id (`n1`, `n2`, ...), in creation order. */
  nodes: Record<string, NodeInstance>;
  /** Number of node instances created so far: the next id is `n${nodeCount + 1}`. */
  nodeCount: number;
  /** Tokens waiting at converging gateways: gateway node id -> incoming edge key -> count. */
  joins: Record<string, Record<string, number>>;
  /** Execution log, in order (compact: see LogLine; read it with logEntry); an entry's SSE id is its index + 1. */
  logs: LogLine[];
  /** Model tokens its aiTasks used, summed over their completed calls; absent before the first. */
  usage?: ExecutionUsage;
  /** Each time an operator retried it after a failure, oldest first (records/repair.ts); absent before the first. */
  retries?: RetryMark[];
  /** The execution whose end started this one through an execution trigger, and the chain before it (execution-triggers.ts). */
  readonly triggeredBy?: TriggeredBy;
  /** The execution this one replays, and the node it started at (POST /process/instance/{id}/replay). */
  readonly replayOf?: ReplayOf;
  /**
   * The index of the first log line that should have carried a copy of the variables and did
   * not (the log had grown past LOG_VARIABLES_BYTES): from there on, the log no longer says
   * what the variables were at each node (a replay needs it). Absent: every copy is there.
   */
  varsUnlogged?: number;
}

/**
 * What an execution trigger's start carries: the ended execution that fired it (its flow's name
 * and the state it ended in, as they were then), and its chain. `chain` lists the flows of every
 * execution up the chain, the ended one's last; `depth` is its length (1: started by the end of
 * an execution nothing triggered). The wire shows it as it is kept.
 */
export type TriggeredBy = TriggeredByView;

/** One retry of a failed execution: when, who asked, the failure it undid, the variables it set first. */
export interface RetryMark {
  readonly at: string;
  readonly by: string;
  readonly error: ExecutionError;
  /** The names of the variables the retry set before the failed nodes ran again. */
  readonly set?: readonly string[];
}

/** What a replay started from: the execution replayed and the node it starts at. */
export interface ReplayOf {
  readonly processInstanceId: string;
  readonly nodeId: string;
  /** Who started the replay (api/caller.ts, actorOf). */
  readonly by: string;
}

export interface NodeInstance {
  readonly id: string;
  readonly nodeId: string;
  /** The node's name and type in the execution's version: `instance.moved` sets a live node's to its target's. */
  nodeName: string;
  nodeType: string;
  statusCd: StatusCd;
  readonly startTime: string;
  endTime: string | null;
  /** What a waiting node waits for (statusCd 1); null otherwise. */
  wait: Wait | null;
  /** Child executions this node started (subProcess, loopNode), oldest first. */
  children?: string[];
  /** Non-interrupting boundary events of this node that fired already (each fires once). */
  fired?: string[];
  /** A callAgent's conversation and tool calls (appended by `agent.updated`). */
  agent?: LiveAgentState;
  /** The tries a failed node made (its work's retries, a job's attempts); absent: one. */
  attempts?: number;
  /** Who answered it, an input node or user task (api/caller.ts, actorOf: never a secret), and when (`node.answered`). */
  answeredBy?: string;
  answeredAt?: string;
  /** Who claimed it, a waiting input node or user task (actorOf), and when (`node.claimed`): only they answer it. */
  claimedBy?: string;
  claimedAt?: string;
}

/** AgentState as the reducer keeps it: lists appended to in place. */
export interface LiveAgentState {
  messages: AgentMessage[];
  steps: number;
  calls: AgentCall[];
  usage: { inputTokens: number; outputTokens: number };
}

/**
 * An execution log line as kept. Most lines are one string, `"<node instance> <level> <ms>
 * <message>"` (`"n3 INFO 0 waiting for input"`): the node named by its node instance (empty: the
 * execution itself; a node instance id never holds a space) and the time as milliseconds after
 * the execution's start, so no line repeats the node's id, name and type or a timestamp string.
 * One string takes less memory than an array and parses faster from the snapshot, and a waiting
 * execution's log is much of its memory (docs/decisions/). A line with a copy of the variables
 * is `[nodeInstanceId, level, message, ms, variables]`; a line that names a node without an
 * instance (a warning while resolving) is kept whole. Arrays whose time is an ISO string, and
 * arrays without variables, are older forms still read. Written and read by log-line.ts.
 */
export type LogLine =
  LogEntry | string | readonly [string, LogEntry['level'], string, number | string, Record<string, unknown>?];
