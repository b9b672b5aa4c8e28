import type { NodeFailureCode, PassedOnFailureCode } from '../../../shared/flow/failure-codes.js';
import type { FlowDefinition, NodeByType, NodeType } from '../../../shared/flow/types.js';
import type { AgentUpdate } from '../../state/agent.js';
import type { AiCall, AiMessage, AiUsage } from '../../ai/types.js';
import type { MemoryEntry } from '../../state/memory.js';
import type { AgentState, DomainAction, Execution, StoredFile, Wait } from '../../state/state.js';
import type { VoiceCall } from '../../voice/types.js';
import type { HttpCall } from '../../outbound/http-request.js';
import type { WorkResult } from '../../outbound/result.js';
import type { ScriptRun } from '../work/script.js';
import type { McpCall, McpServer } from '../work/mcp.js';

/** What a node's handler may read and compute with. Reads only: handlers never change state. */
export interface NodeScope {
  readonly instance: Readonly<Execution>;
  /** The node's id in the flow. */
  readonly nodeId: string;
  readonly now: Date;
  /** The most iterations a loopNode may run, whatever its `maxIterations` says (the daemon's loop-iterations limit). */
  readonly maxLoopIterations: number;
  /**
   * Resolves `{ref}` templates in a property (deeply); a missing reference logs a WARN.
   * `fallback` holds values a reference finds when no variable of that name exists; `secret`,
   * what `{secret.NAME}` resolves to (a serviceTask's stand-ins; without it, missing).
   */
  resolve(value: unknown, fallback?: Readonly<Record<string, unknown>>, secret?: (name: string) => string): unknown;
  /** As `resolve`, but a missing reference is returned in `missing` instead of logged (the node decides). */
  resolveChecked(
    value: unknown,
    fallback?: Readonly<Record<string, unknown>>,
  ): { readonly value: unknown; readonly missing: readonly string[] };
  /**
   * Evaluates a `${...}` condition over the variables (or over `variables` when given).
   * Throws ExpressionError (the node fails with EXPRESSION_ERROR).
   */
  condition(text: string, variables?: Readonly<Record<string, unknown>>): boolean;
  /** What the node waits for now (on resume), else null. */
  readonly wait: Wait | null;
  /** The values of the environment's credential-looking `{env.*}` names (TOKEN, KEY, SECRET...): never logged. */
  credentials(): readonly string[];
  /**
   * The live memory entry at `namespace`/`key` of the execution's organization (no other), or
   * undefined when there is none or it expired by `now`.
   */
  memory(namespace: string, key: string): MemoryEntry | undefined;
  /** The live entries of a namespace of the execution's organization, by key (in no order). */
  memoryEntries(namespace: string): Array<[string, MemoryEntry]>;
  /** The file `fileId` of the execution's organization, or undefined. */
  file(fileId: string): StoredFile | undefined;
  /** A callAgent's journaled state (its conversation and tool calls so far); null before its first turn. */
  readonly agent: AgentState | null;
  /**
   * The version of flow `processId` a start from this execution would run (the execution's
   * organization, its environment's active version), or undefined when there is none.
   */
  publishedFlow(processId: string): { readonly version: string; readonly definition: FlowDefinition } | undefined;
  /** The action `action` of the execution's organization's domain `domain`, or undefined when either is not registered. */
  domainAction(domain: string, action: string): DomainAction | undefined;
  /** Why `value` does not match the JSON Schema `schema` (naming it `what`), or null when it does. Never throws. */
  schemaProblem(schema: Record<string, unknown>, value: unknown, what: string): string | null;
}

/** A memory entry a node sets (`entry`) or removes (null), in its execution's organization. */
export interface MemoryWrite {
  readonly namespace: string;
  readonly key: string;
  readonly entry: MemoryEntry | null;
}

/** A child execution a node starts (subProcess, loopNode) or an execution it calls (callProcess). */
export interface ChildStart {
  /** A published flow of the organization; absent: the node's own body (`nodes:`). */
  readonly processId?: string;
  readonly versionNumber?: string;
  readonly variables: Record<string, unknown>;
  readonly correlationKey?: string | null;
  /** A loop iteration's index. */
  readonly iteration?: number;
  /** The callAgent tool call the child runs (its result goes back to the model). */
  readonly toolCallId?: string;
}

/** Work done outside the engine's step (it takes time): the node stays Active until its result. */
export type WorkRequest =
  | { readonly kind: 'http'; readonly call: HttpCall }
  | { readonly kind: 'script'; readonly run: ScriptRun }
  /** A model call; `chat`: where chat memory keeps this turn, and the node's own messages it appends with the answer. */
  | {
      readonly kind: 'ai';
      readonly call: AiCall;
      readonly chat?: ChatTurn;
      /** A callAgent's MCP servers: their tools are listed and offered beside `call.tools`. */
      readonly mcp?: readonly McpServer[];
    }
  /** A callAgent's call of a tool of an MCP server. */
  | { readonly kind: 'mcp'; readonly call: McpCall }
  /** A voiceTask's speak or transcribe. */
  | { readonly kind: 'voice'; readonly call: VoiceCall };

/**
 * An aiTask's turn in its chat memory, as resolved when the call was made: the resume appends
 * to this address (not one resolved again from variables that may have changed meanwhile).
 */
export interface ChatTurn {
  readonly namespace: string;
  readonly key: string;
  /** The node's own user and assistant messages (its prompt); the system prompt is not remembered. */
  readonly messages: readonly AiMessage[];
}

/** A resolved property as text: strings as they are, anything else as JSON. */
export const asText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** A message or signal a node sends (intermediateThrowEvent). */
export interface Delivery {
  readonly eventType: string;
  readonly correlationKey: string | null;
  readonly data: Record<string, unknown>;
}

/**
 * What happens after a node ran or resumed. Data, not actions: the engine carries it out
 * (journals the transition, routes tokens, arms timers).
 */
export type Outcome =
  /** Completes the node and moves on: to `to` (node ids), or by default along every `next`. */
  | {
      readonly kind: 'next';
      readonly to?: readonly string[];
      readonly variables?: Record<string, unknown>;
      readonly output?: Record<string, unknown>;
      /** Added to the node's `completed` log line: the branch a gateway took. */
      readonly note?: string;
      readonly deliver?: Delivery;
      /** Memory entries set or removed, journaled in the same step as the completion (exactly once with it). */
      readonly memory?: readonly MemoryWrite[];
      /** Model tokens the node's call used: added to the execution's usage. */
      readonly usage?: AiUsage;
      /** A callAgent's last turn, recorded before the completion. */
      readonly agent?: AgentUpdate;
      /** Files the node made (their blobs durable already), recorded before the completion. */
      readonly files?: readonly StoredFile[];
    }
  /** Completes the node and ends its token (endEvent). */
  | { readonly kind: 'end'; readonly terminate: boolean }
  /**
   * The node waits (statusCd 1), or keeps waiting with a new `wait`; `variables` are set now;
   * `start` are child executions started for it (in `children`; each resumes it when it ends).
   */
  | {
      readonly kind: 'wait';
      readonly wait: Wait;
      readonly variables?: Record<string, unknown>;
      readonly start?: readonly ChildStart[];
      /** A callAgent's turn (its answer and the tool calls the children run), recorded before the wait. */
      readonly agent?: AgentUpdate;
    }
  /**
   * The node does `work` (an HTTP call, a script, a model call) and is Active until the result
   * resumes it (a waiting node becomes Active again: a callAgent's next turn).
   */
  | { readonly kind: 'work'; readonly work: WorkRequest; readonly agent?: AgentUpdate }
  /** Starts another execution (not a child: nothing waits for it) and completes, setting `{variable}` to its id. */
  | { readonly kind: 'call'; readonly start: ChildStart; readonly variable: string }
  /**
   * The node fails; the engine applies the failure rule (error boundary event, else errorFlow,
   * else the execution fails). `code` is from the catalogue (failure-codes.ts), or a failed
   * child's code passed on.
   */
  | {
      readonly kind: 'fail';
      readonly code: NodeFailureCode | PassedOnFailureCode;
      readonly message: string;
      /** Variables set as the node fails (a callAgent's partial result, for inspection). */
      readonly variables?: Record<string, unknown>;
      /** A callAgent's last turn, recorded before the failure. */
      readonly agent?: AgentUpdate;
      /** The tries the node made before it failed (its work's retries, a job's attempts); absent: one. */
      readonly attempts?: number;
    }
  /** The node is cancelled (statusCd 4): along `errorFlow` if it has one, else the execution is cancelled. */
  | { readonly kind: 'cancel'; readonly reason: string; readonly variables?: Record<string, unknown> }
  /** The node timed out (statusCd 5): along `timeoutFlow` if it has one, else the execution fails (TIMEOUT). */
  | { readonly kind: 'timeout'; readonly reason: string };

/**
 * How a domainTask's attempt ended, as the jobs API reports it: the worker's output (checked
 * against the action's schema before), or its failure (`code` null: it gave none).
 */
export type JobResult =
  | { readonly ok: true; readonly output: unknown }
  | {
      readonly ok: false;
      readonly worker: string;
      readonly code: string | null;
      readonly message: string;
      /** false: fail the node now (a business error, or the worker said so). */
      readonly retry: boolean;
      /** The worker's own wait before the next attempt; undefined: the node's retry policy. */
      readonly backoffMs?: number;
    };

/** What resumes a waiting node. */
export type ResumeInput =
  | { readonly kind: 'task'; readonly action: 'COMPLETE' | 'CANCEL'; readonly data: Record<string, unknown> }
  | { readonly kind: 'event'; readonly data: Record<string, unknown> }
  | { readonly kind: 'timer' }
  /** The node's work is done; `request` is what the node asked for (absent for a result from elsewhere). */
  | { readonly kind: 'work'; readonly result: WorkResult; readonly request?: WorkRequest }
  /** One of the node's child executions ended (completed, failed or cancelled). */
  | { readonly kind: 'child'; readonly child: Readonly<Execution> }
  /** A domainTask's job attempt ended (completed or failed through the jobs API). */
  | { readonly kind: 'job'; readonly result: JobResult }
  /** A queued start's execution was given a slot of its flow's concurrency limit. */
  | { readonly kind: 'slot' };

/**
 * One node type's behaviour. `run` is called when a token reaches the node, `resume` when
 * something arrives for it while it waits. Both are pure: scope in, outcome out.
 */
export interface NodeHandler<N> {
  run(node: N, scope: NodeScope): Outcome;
  resume?(node: N, scope: NodeScope, input: ResumeInput): Outcome;
}

/** The registry's shape: a handler for every node type the flow format allows (compile error otherwise). */
export type HandlerRegistry = { readonly [T in NodeType]: NodeHandler<NodeByType[T]> };
