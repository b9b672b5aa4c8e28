/**
 * What the step is given: the state it decides on is passed beside this small context (the
 * flows, ids, limits, what work is in flight), never the live Engine, so a test can drive the
 * step in memory with a context of its own (test/daemon/engine/step/).
 */
import type { FlowGraph } from '../../../shared/flow/graph.js';
import type { FlowDefinition, FlowNode } from '../../../shared/flow/types.js';
import type { DomainSchemas } from '../domain-schemas.js';
import type { Environment, Execution, StoredFile, WfxState } from '../../state/state.js';
import type { NodeKey } from '../keys.js';
import type { ExecutionLimits } from '../limits.js';
import type { StartRate } from '../start-rate.js';
import type { OrganizationScope } from '../scope.js';
import type { WorkRequest } from '../nodes/handler.js';

/** The parameters of a new execution, as the step launches it. */
export type LaunchParams = Omit<
  Execution,
  | 'processInstanceId'
  | 'stateCd'
  | 'startTime'
  | 'endTime'
  | 'output'
  | 'error'
  | 'nodes'
  | 'nodeCount'
  | 'joins'
  | 'logs'
>;

/** The nodes an execution runs: its flow version's, or the body its `scope` names, parsed once. */
export interface FlowScope {
  readonly definition: FlowDefinition;
  readonly nodes: Readonly<Record<string, FlowNode>>;
  readonly graph: FlowGraph;
  readonly startId: string;
}

/** A start of an execution: the flow, and optionally its version, environment, key and data. */
export interface StartRequest extends OrganizationScope {
  readonly processId: string;
  readonly environment?: Environment;
  readonly versionNumber?: string;
  readonly correlationKey?: string | null;
  readonly data?: Record<string, unknown>;
  readonly parentInstanceId?: string | null;
  /** Higher first where starts and work wait their turn (a concurrency queue, sandboxes, job workers); absent: 0. */
  readonly priority?: number;
  /** The W3C `traceparent` the start came with (a webhook delivery's, an API request's): its execution continues that trace while tracing is on. */
  readonly traceparent?: string | undefined;
}

/** The file metadata an answer to a file input is given (FileStore.get's, in the caller's organization). */
export type FileMeta = Pick<StoredFile, 'fileId' | 'name' | 'mimeType' | 'bytes' | 'sha256'>;

/**
 * How a step gives new executions their trace while tracing is on (observe/execution-spans.ts):
 * drawn outside the step, as its ids are, so a step decides the same given the same context.
 */
export interface StepTracing {
  /** The record form of the trace a start's W3C `traceparent` continues; undefined: it continues none. */
  continued(traceparent: string): string | undefined;
  /** The trace of a new execution: its parent's (a child's span), the one it `continues`, or a new one. */
  forStart(
    state: WfxState,
    parentInstanceId: string | null,
    parentNodeInstanceId: string | undefined,
    continues: string | undefined,
  ): string;
}

/** What a step may read besides the state: pure lookups and settings, no I/O. */
export interface StepContext {
  /** The nodes an execution runs (its flow version's, or the body its `scope` names). */
  flowOf(inst: Execution): FlowScope;
  /** The `{env.*}` values of the execution's organization and environment. */
  envOf(inst: Execution): Readonly<Record<string, string>>;
  /** A new execution's id (the store's partitions may choose it). */
  newInstanceId(now: Date, parentInstanceId: string | null): string;
  /** A new time-ordered id of something else a step makes: a kept message, a thrown event. */
  newId(now: Date): string;
  /** Tracing, while it is on (the process's tracer); null: executions carry no trace. */
  readonly tracing: StepTracing | null;
  /** True while the work of node instance `key` (keys.ts) is under way (it must not be started again). */
  isWorking(key: NodeKey): boolean;
  /** A stored file of `organization`, for a file input's answer; undefined: none (or no file store). */
  file(organization: string, fileId: string): FileMeta | undefined;
  /** How deep the variables, output and data a node sets may nest (json-shape.ts); deeper fails the node with DATA_TOO_DEEP. */
  readonly maxJsonDepth: number;
  /** Domain actions' schemas, compiled once (domainTask inputs, workers' outputs). */
  readonly schemas: DomainSchemas;
  /** What one execution, tree and organization may hold (limits.ts). */
  readonly limits: ExecutionLimits;
  /** The org-starts-per-second limit's buckets (start-rate.ts): every start of a step takes from them. */
  readonly startRate: Pick<StartRate, 'take'>;
  /**
   * Whether a kept message is consumed only under a claim won in the database (daemons sharing
   * it, kept-claims.ts): a node that starts waiting then leaves it in `kept`, and waits.
   */
  readonly claimsKept: boolean;
  /**
   * Whether an event thrown is kept until the other daemons sharing the database have it
   * (thrown-outbox.ts): the step then writes it (`event.thrown`) and lists it as an effect.
   */
  readonly keepsThrown: boolean;
}

/** Work a step asks for: carried out once the step is durable. */
export interface WorkOrder {
  readonly instanceId: string;
  readonly nodeInstanceId: string;
  readonly request: WorkRequest;
}

/**
 * What a step asks to be done once its records are durable, as data: work to start, executions
 * it left for a later step (its budget ran out), kept messages to claim, events thrown to pass
 * on. The effects its records imply (timers, log lines, archiving) are derived from the records.
 */
export type StepEffect =
  | ({ readonly kind: 'work' } & WorkOrder)
  | { readonly kind: 'defer'; readonly instanceId: string }
  | { readonly kind: 'claim'; readonly messageId: string }
  | { readonly kind: 'pass'; readonly eventId: string }
  /** An event thrown that wakes executions not in memory: a step of its own delivers it (PendingThrow.here). */
  | { readonly kind: 'deliver'; readonly eventId: string };
