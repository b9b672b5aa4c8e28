/**
 * The flow format (SPEC.md section 2) as TypeScript types. A flow file is YAML or JSON of
 * this shape; `schema.ts` publishes the same shape as JSON Schema. The work nodes' types are in
 * work-node-types.ts (re-exported here).
 */
import type { Next, NodeBase } from './node-base.js';
import type {
  ServiceTaskNode,
  ScriptTaskNode,
  AiTaskNode,
  CallAgentNode,
  VoiceTaskNode,
  MemoryActionNode,
  DomainTaskNode,
} from './work-node-types.js';

export type { Next } from './node-base.js';
export type {
  RetrySpec,
  ServiceTaskNode,
  ScriptTaskNode,
  AiMessageSpec,
  AiTaskNode,
  AgentToolSpec,
  FlowToolSpec,
  McpToolsSpec,
  CallAgentNode,
  VoiceTaskNode,
  MemoryAction,
  MemoryActionNode,
  DomainTaskNode,
} from './work-node-types.js';
export { VOICE_OPERATIONS, VOICE_FORMATS, MEMORY_ACTIONS } from './work-node-types.js';

/** Every node type the service interface names. */
export const SEED_NODE_TYPES = [
  'startEvent',
  'endEvent',
  'serviceTask',
  'userTask',
  'task',
  'scriptTask',
  'exclusiveGateway',
  'inclusiveGateway',
  'parallelGateway',
  'boundaryEvent',
  'intermediateThrowEvent',
  'intermediateCatchEvent',
  'subProcess',
  'loopNode',
  'aiTask',
  'voiceTask',
  'ifElse',
  'callProcess',
  'inputNode',
  'outputNode',
  'domainTask',
  'memoryAction',
  'callAgent',
  'setVariable',
] as const;
export type SeedNodeType = (typeof SEED_NODE_TYPES)[number];

/** The seed's input types of an Input Node. */
export const INPUT_TYPES = [
  'textbox',
  'textarea',
  'number',
  'date',
  'select',
  'checkbox',
  'radio',
  'file',
  'form',
] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/** Field types of a form. */
export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'select', 'array'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** An option of a select, radio or checkbox input: a plain value or a value with a label. */
export type InputOption = string | number | { readonly value: string | number; readonly label?: string };

export interface FormField {
  readonly name: string;
  readonly type: FieldType;
  readonly required?: boolean;
  readonly label?: string;
  readonly options?: readonly InputOption[];
  /** The value a form starts with (the console prefills it); it must fit the field. An answer without the field does not get it. */
  readonly default?: unknown;
}

export interface StartEventNode extends NodeBase {
  readonly type: 'startEvent';
  readonly next: Next;
}
export interface EndEventNode extends NodeBase {
  readonly type: 'endEvent';
  readonly terminate?: boolean;
}
export interface TaskNode extends NodeBase {
  readonly type: 'task';
  readonly next: Next;
}
export interface SetVariableNode extends NodeBase {
  readonly type: 'setVariable';
  readonly variables: Readonly<Record<string, unknown>>;
  readonly next: Next;
}
export interface OutputNode extends NodeBase {
  readonly type: 'outputNode';
  readonly outputs: Readonly<Record<string, unknown>>;
  readonly next: Next;
}
export interface IfElseNode extends NodeBase {
  readonly type: 'ifElse';
  readonly condition: string;
  readonly then: string;
  readonly else: string;
}
export interface Branch {
  readonly condition: string;
  readonly next: string;
}
export interface GatewayNode extends NodeBase {
  readonly type: 'exclusiveGateway' | 'inclusiveGateway';
  readonly branches?: readonly Branch[];
  readonly default?: string;
  /** A purely converging gateway has no branches, only `next`. */
  readonly next?: string;
}
export interface ParallelGatewayNode extends NodeBase {
  readonly type: 'parallelGateway';
  readonly next: Next;
}
export interface InputNodeDef extends NodeBase {
  readonly type: 'inputNode';
  readonly formTitle?: string;
  readonly inputType: InputType;
  readonly options?: readonly InputOption[];
  readonly fields?: readonly FormField[];
  readonly timeout?: string;
  readonly next: Next;
  readonly timeoutFlow?: string;
}
export interface UserTaskNode extends NodeBase {
  readonly type: 'userTask';
  readonly formTitle?: string;
  readonly assignee?: string;
  readonly fields?: readonly FormField[];
  readonly timeout?: string;
  readonly next: Next;
  readonly timeoutFlow?: string;
}
export interface CatchEventNode extends NodeBase {
  readonly type: 'intermediateCatchEvent';
  readonly eventType: 'message' | 'signal' | 'timer';
  readonly messageRef?: string;
  readonly correlationKey?: string;
  readonly duration?: string;
  readonly until?: string;
  readonly next: Next;
}
export interface ThrowEventNode extends NodeBase {
  readonly type: 'intermediateThrowEvent';
  readonly eventType: 'message' | 'signal';
  readonly messageRef: string;
  readonly correlationKey?: string;
  readonly data?: Readonly<Record<string, unknown>>;
  readonly next: Next;
}

export interface LoopNode extends NodeBase {
  readonly type: 'loopNode';
  /** A `{ref}` to an array (or an array): one iteration per item. Exclusive with `condition`. */
  readonly collection?: unknown;
  readonly itemVariable?: string;
  readonly indexVariable?: string;
  /** `${...}`: iterate while it holds (checked before each iteration). */
  readonly condition?: string;
  readonly maxIterations?: number;
  readonly parallel?: boolean;
  readonly concurrency?: number;
  /** The body: a nested flow with its own startEvent. */
  readonly nodes: Readonly<Record<string, FlowNode>>;
  readonly collect?: string;
  readonly next: Next;
}
export interface BoundaryEventNode extends NodeBase {
  readonly type: 'boundaryEvent';
  readonly attachedTo: string;
  readonly event: 'timer' | 'error';
  readonly duration?: string;
  readonly errorCode?: string;
  readonly cancelActivity?: boolean;
  readonly next: Next;
}
export interface SubProcessNode extends NodeBase {
  readonly type: 'subProcess';
  /** Embedded body (exclusive with processId). */
  readonly nodes?: Readonly<Record<string, FlowNode>>;
  readonly processId?: string;
  readonly versionNumber?: string;
  /** Variables of the child: name -> value (templates); default all of the parent's. */
  readonly input?: Readonly<Record<string, unknown>>;
  /** Variables of the child merged back; default all. */
  readonly output?: readonly string[];
  readonly next: Next;
}
export interface CallProcessNode extends NodeBase {
  readonly type: 'callProcess';
  readonly processId: string;
  readonly versionNumber?: string;
  readonly data?: Readonly<Record<string, unknown>>;
  readonly correlationKey?: string;
  readonly next: Next;
}
/** Node types whose `nodes:` is a nested flow (a loop's body, an embedded subprocess). */
export const CONTAINER_TYPES = ['loopNode', 'subProcess'] as const;

/** Every node the engine runs, by type. */
export interface NodeByType {
  startEvent: StartEventNode;
  endEvent: EndEventNode;
  task: TaskNode;
  setVariable: SetVariableNode;
  outputNode: OutputNode;
  ifElse: IfElseNode;
  exclusiveGateway: GatewayNode & { readonly type: 'exclusiveGateway' };
  inclusiveGateway: GatewayNode & { readonly type: 'inclusiveGateway' };
  parallelGateway: ParallelGatewayNode;
  inputNode: InputNodeDef;
  userTask: UserTaskNode;
  intermediateCatchEvent: CatchEventNode;
  intermediateThrowEvent: ThrowEventNode;
  loopNode: LoopNode;
  subProcess: SubProcessNode;
  callProcess: CallProcessNode;
  boundaryEvent: BoundaryEventNode;
  serviceTask: ServiceTaskNode;
  scriptTask: ScriptTaskNode;
  aiTask: AiTaskNode;
  callAgent: CallAgentNode;
  memoryAction: MemoryActionNode;
  voiceTask: VoiceTaskNode;
  domainTask: DomainTaskNode;
}
export type NodeType = keyof NodeByType;
export type FlowNode = NodeByType[NodeType];

/** The end states an execution trigger can watch. */
export type ExecutionEndState = 'COMPLETED' | 'FAILED' | 'CANCELLED';

export type Trigger =
  | ({ readonly type: 'webhook'; readonly webhook: string; readonly eventType?: string } & StartPacing)
  | {
      readonly type: 'schedule';
      readonly cron: string;
      readonly timezone?: string;
      readonly missedRuns?: 'skip' | 'last' | 'all';
      /** What a fire does while an execution an earlier fire started still runs (default `allow`). */
      readonly overlap?: ScheduleOverlap;
    }
  | ({
      readonly type: 'email';
      readonly connection: string;
      readonly filters?: {
        readonly subjectContains?: string;
        readonly senderMatches?: string;
        readonly bodyContains?: string;
      };
    } & StartPacing)
  /**
   * Starts the flow when a top-level execution of `processId` (absent: any other flow of the
   * organization) ends in one of `states`.
   */
  | {
      readonly type: 'execution';
      readonly processId?: string;
      readonly states: readonly ExecutionEndState[];
    }
  /** Documentary: the flow is meant to be started by hand or over the API (nothing fires it). */
  | { readonly type: 'on-demand'; readonly description?: string };

/**
 * How a webhook or email trigger paces its starts (triggers/start-pacing.ts): `debounce` makes a
 * burst one start, `debounce` after the last event of the burst, with the last one's data (per
 * value of `debounceKey`, a template over the start's variables); `throttle` (`N/s`, `N/m`,
 * `N/h`) starts at most N a period and drops the rest.
 */
export interface StartPacing {
  readonly debounce?: string;
  readonly debounceKey?: string;
  readonly throttle?: string;
}

/** What a schedule's fire does while an execution it started earlier still runs. */
export type ScheduleOverlap = 'skip' | 'buffer-one' | 'allow' | 'cancel-other';

/** What a start over a flow's concurrency limit does. */
export type ConcurrencyPolicy = 'queue' | 'cancel-new' | 'cancel-oldest';

/**
 * At most `limit` executions of the flow run at once (per environment; with `key`, per value of
 * that template over the start data); a start over it waits, is refused, or cancels the oldest.
 */
export interface FlowConcurrency {
  readonly limit: number;
  readonly key?: string;
  readonly policy?: ConcurrencyPolicy;
}

/** A whole flow definition, as published. */
export interface FlowDefinition {
  readonly processId: string;
  readonly name: string;
  readonly description?: string;
  readonly public?: boolean;
  /**
   * A JSON Schema of the start data (an object): checked on every start, and the parameters
   * of the flow when an agent calls it as a tool. Absent: any object.
   */
  readonly inputs?: Readonly<Record<string, unknown>>;
  readonly triggers?: readonly Trigger[];
  /** How many of its executions run at once (engine/step/concurrency.ts); absent: no limit. */
  readonly concurrency?: FlowConcurrency;
  /** Search attributes: name to a template over the start data (search-attributes.ts). */
  readonly search?: Readonly<Record<string, string>>;
  readonly nodes: Readonly<Record<string, FlowNode>>;
}

/**
 * The node map at `scope` inside a flow: [] is the flow's own nodes, ['each'] the body of
 * container node `each`, ['each', 'inner'] a container inside that body. Undefined when the
 * path names no container (a definition that changed shape cannot, versions are immutable).
 */
export function nodesAt(
  definition: Pick<FlowDefinition, 'nodes'>,
  scope: readonly string[] | undefined,
): Readonly<Record<string, FlowNode>> | undefined {
  let nodes: Readonly<Record<string, FlowNode>> | undefined = definition.nodes;
  for (const id of scope ?? [])
    nodes = (nodes?.[id] as { nodes?: Readonly<Record<string, FlowNode>> } | undefined)?.nodes;
  return nodes;
}

/** A node of a flow wherever it stands: at the top level or in a body (a loopNode's, an inline subProcess's). */
export interface PlacedNode {
  /** Its id in its own node map. */
  readonly id: string;
  readonly node: FlowNode;
  /** The top-level node that holds it (itself at the top level): the node a problem names. */
  readonly nodeId: string;
  /** Its property path from that top-level node, ending in a dot (`nodes.a.`); empty at the top level. */
  readonly at: string;
}

/**
 * Every node of `nodes` and of the bodies in them, in declaration order, a body's nodes before
 * the container that holds them. Pure.
 */
export function* nodesWithin(
  nodes: Readonly<Record<string, FlowNode>>,
  container: { readonly nodeId: string; readonly path: string } | null = null,
): Generator<PlacedNode> {
  for (const [id, node] of Object.entries(nodes)) {
    const nodeId = container?.nodeId ?? id;
    const at = container ? `${container.path}.${id}.` : '';
    if (node.type === 'loopNode' || (node.type === 'subProcess' && node.nodes))
      yield* nodesWithin(node.nodes!, { nodeId, path: `${at}nodes` });
    yield { id, node, nodeId, at };
  }
}
