/*
 * An execution's node instances, as GET /process/instance/{id} gives them (process.ts): their
 * status, what a waiting one waits for (an answer, an event, a timer, its children, its loop's
 * iterations, its tool calls, a job and the worker holding it), and a callAgent's conversation.
 */
import type { FormField, InputType } from '../flow/types.js';

/** Node instance states, `statusCd`. */
export const STATUS = { ACTIVE: 0, WAITING: 1, COMPLETED: 2, FAILED: 3, CANCELLED: 4, TIMED_OUT: 5 } as const;
/** A node instance's `statusCd` (a value of STATUS). */
export type StatusCd = (typeof STATUS)[keyof typeof STATUS];

/** What a waiting node waits for (`kind`), in the order the engine introduced them. */
export const WAIT_KINDS = ['input', 'event', 'timer', 'child', 'loop', 'job'] as const;
/** A wait's `kind` (one of WAIT_KINDS). */
export type WaitKind = (typeof WAIT_KINDS)[number];

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
  /**
   * Its tool's entry says `approve: true`: `pending` while it waits for a person, then
   * `approved` (it runs, with the arguments the person may have edited) or `refused`.
   */
  readonly approval?: 'pending' | 'approved' | 'refused';
  /** A call of a tool of an MCP server (`processId` is then empty): the server, the tool's name there. */
  readonly mcp?: {
    readonly url: string;
    readonly tool: string;
    /** The index of the server's entry in the node's `tools`. */
    readonly entry: number;
    /** The server says a second call does no more than one: a call under way at a crash is made again. */
    readonly idempotent: boolean;
  };
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

/**
 * What a running execution waits for at a node, in the words of lists and filters: a person (an
 * input node or user task), an event (a message or signal), a timer, a worker (a domainTask's
 * job), its child executions (a subprocess, loop, called flow, an agent's tools), or a slot of
 * its flow's concurrency limit (queued).
 */
export const WAITING_FOR = ['person', 'event', 'timer', 'worker', 'child', 'queue'] as const;
export type WaitingFor = (typeof WAITING_FOR)[number];

/** What a node waiting with `kind` waits for (WAITING_FOR). Pure. */
export function waitingFor(kind: Wait['kind']): WaitingFor {
  switch (kind) {
    case 'input':
      return 'person';
    case 'event':
      return 'event';
    case 'timer':
      return 'timer';
    case 'job':
      return 'worker';
    case 'queue':
      return 'queue';
    case 'child':
    case 'loop':
    case 'tools':
      return 'child';
  }
}

/** What a waiting node waits for. `dueAt` arms a timer (input timeout, timer event). */
/** What a person approves: the tool call of an agent, and what the model said before asking for it. */
export interface ApprovalView {
  readonly callId: string;
  /** The tool's name, as the model called it. */
  readonly tool: string;
  readonly arguments: unknown;
  /** The model's text in the turn that asked for the call (its reasoning so far), clipped; null: none. */
  readonly reasoning: string | null;
  /** The flow the tool runs, or the MCP server it calls. */
  readonly processId?: string;
  readonly server?: string;
}

export type Wait =
  | {
      readonly kind: 'input';
      readonly inputType: InputType;
      readonly formTitle: string | null;
      readonly options: readonly unknown[] | null;
      readonly fields: readonly FormField[] | null;
      readonly assignee: string | null;
      readonly dueAt: string | null;
      /** A callAgent's tool call waiting for a person's approval (the node is the agent). */
      readonly approval?: ApprovalView;
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
  | JobWait
  /**
   * A start of a flow with a `concurrency` limit, over it under policy `queue`: its start event
   * waits until one of the executions holding a slot ends (engine/step/concurrency.ts).
   */
  | { readonly kind: 'queue'; readonly dueAt: null };

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
  /** The input, resolved when the node was reached; a `{secret.NAME}` in it as a stand-in (see `secrets`). */
  readonly input: Record<string, unknown>;
  /**
   * The stand-ins of the input's `{secret.NAME}` references, each with its secret's name: the
   * worker gets the values in their place as it activates the job; they are never kept.
   */
  readonly secrets?: Readonly<Record<string, string>>;
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
  /** Who claimed it while it waits (POST /process/task CLAIM), as answeredBy names callers, and when; absent: nobody. */
  readonly claimedBy?: string;
  readonly claimedAt?: string;
}
