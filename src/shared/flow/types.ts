/**
 * Long file: the flow format's types, one interface per node type, read beside schema.ts and
 * validate.ts; splitting them by node would scatter one format over many files.
 *
 * The flow format (SPEC.md section 2) as TypeScript types. A flow file is YAML or JSON of
 * this shape; `schema.ts` publishes the same shape as JSON Schema.
 */

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

/** A node id, or several (a list on a non-gateway node forks parallel tokens). */
export type Next = string | readonly string[];

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
}

interface NodeBase {
  /** Display name (nodeName in logs); default: the node id. */
  readonly name?: string;
  readonly description?: string;
  /** Taken when the node fails (or, on an input node, is cancelled). */
  readonly errorFlow?: string;
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
/** How a work node retries a failed attempt (serviceTask, aiTask); each field has a default. */
export interface RetrySpec {
  readonly maxAttempts?: number;
  readonly initialInterval?: string;
  readonly backoff?: number;
  readonly maxInterval?: string;
}
export interface ServiceTaskNode extends NodeBase {
  readonly type: 'serviceTask';
  readonly method?: string;
  readonly url: string;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly query?: Readonly<Record<string, unknown>>;
  readonly body?: unknown;
  readonly timeout?: string;
  readonly retry?: RetrySpec;
  readonly acceptStatus?: readonly (number | string)[];
  readonly resultVariable?: string;
  readonly next: Next;
}
export interface ScriptTaskNode extends NodeBase {
  readonly type: 'scriptTask';
  readonly language?: 'javascript';
  readonly script: string;
  readonly timeout?: string;
  readonly resultVariable?: string;
  readonly next: Next;
}

/** One message of an aiTask's `messages` (content with `{ref}` templates). */
export interface AiMessageSpec {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}
export interface AiTaskNode extends NodeBase {
  readonly type: 'aiTask';
  /** A registered provider's name; default: the organization's default provider. */
  readonly provider?: string;
  /** Overrides the provider's model. */
  readonly model?: string;
  readonly systemPrompt?: string;
  /** The user message (exclusive with `messages`). */
  readonly prompt?: string;
  readonly messages?: readonly AiMessageSpec[];
  /** Default text; json with `schema`. */
  readonly responseFormat?: 'text' | 'json';
  /** A JSON Schema the answer must match (compiled at publish; implies json). */
  readonly schema?: Readonly<Record<string, unknown>>;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly seed?: number;
  /** Per attempt; default 2m. */
  readonly timeout?: string;
  readonly retry?: RetrySpec;
  /** Repair requests after an invalid JSON answer (default 1). */
  readonly repairs?: number;
  /** Chat memory: the last `window` messages of a list sent before the prompt; prompt and answer appended after. */
  readonly memory?: { readonly namespace: string; readonly key: string; readonly window?: number };
  readonly resultVariable?: string;
  readonly next: Next;
}
/** A callAgent's tool: a published flow (by processId), optionally named and described for the model. */
export type AgentToolSpec =
  string | { readonly processId: string; readonly name?: string; readonly description?: string };
export interface CallAgentNode extends NodeBase {
  readonly type: 'callAgent';
  readonly provider?: string;
  readonly model?: string;
  readonly systemPrompt?: string;
  readonly prompt?: string;
  readonly messages?: readonly AiMessageSpec[];
  /** The final answer's format (default text; json with `schema`). */
  readonly responseFormat?: 'text' | 'json';
  /** A JSON Schema the final answer must match. */
  readonly schema?: Readonly<Record<string, unknown>>;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly seed?: number;
  /** Per model call attempt; default 2m. */
  readonly timeout?: string;
  readonly retry?: RetrySpec;
  readonly repairs?: number;
  readonly memory?: { readonly namespace: string; readonly key: string; readonly window?: number };
  /** The flows the model may call (each declares `inputs:`, its parameters). */
  readonly tools: readonly AgentToolSpec[];
  /** Model turns at most (default 10): a turn that still asks for tools after it fails the node. */
  readonly maxSteps?: number;
  /** Tool calls at most over the whole run. */
  readonly maxToolCalls?: number;
  /** Input plus output tokens at most over the whole run. */
  readonly maxTotalTokens?: number;
  /** Default true: the calls of one answer run at once; false: one after another. */
  readonly parallelToolCalls?: boolean;
  /** Default false: a failed tool's error goes back to the model; true: it fails the node. */
  readonly failOnToolError?: boolean;
  readonly resultVariable?: string;
  readonly next: Next;
}
/** What a voiceTask does. */
export const VOICE_OPERATIONS = ['speak', 'transcribe'] as const;
/** Audio formats a voiceTask may speak in (the local engine writes wav only). */
export const VOICE_FORMATS = ['wav', 'mp3', 'opus', 'flac'] as const;
export interface VoiceTaskNode extends NodeBase {
  readonly type: 'voiceTask';
  readonly operation: (typeof VOICE_OPERATIONS)[number];
  /** speak: what to say ({ref} resolved). */
  readonly text?: string;
  /** speak: the voice (local: an espeak-ng voice such as en-us; a provider: its voice name). */
  readonly voice?: string;
  /** speak: words per minute (local: 80 to 450, default 175); a provider's speed is rate / 175. */
  readonly rate?: number;
  /** speak: default wav. */
  readonly format?: (typeof VOICE_FORMATS)[number];
  /** transcribe: the audio, a file reference ({ref} resolved: a fileId or {fileId}). */
  readonly audio?: string;
  /** transcribe: the language spoken (default en). */
  readonly language?: string;
  /** transcribe, local engine: the words to listen for (a small vocabulary is transcribed far better). */
  readonly vocabulary?: readonly string[];
  /** A registered model provider (openai-compatible) to speak or transcribe with; default: the local engine. */
  readonly provider?: string;
  /** The provider's model (tts-1, whisper-1, ...). */
  readonly model?: string;
  /** Default 1m. */
  readonly timeout?: string;
  /** For a provider's failures, as aiTask's. */
  readonly retry?: RetrySpec;
  readonly resultVariable?: string;
  readonly next: Next;
}
/** What a memoryAction does with its entry. */
export const MEMORY_ACTIONS = ['store', 'retrieve', 'append', 'delete', 'list'] as const;
export type MemoryAction = (typeof MEMORY_ACTIONS)[number];
export interface MemoryActionNode extends NodeBase {
  readonly type: 'memoryAction';
  readonly action: MemoryAction;
  readonly namespace: string;
  /** Every action but list. */
  readonly key?: string;
  /** store, append. */
  readonly value?: unknown;
  /** retrieve: the last N items of a list. */
  readonly window?: number;
  /** append: the oldest items beyond it are dropped. */
  readonly maxItems?: number;
  /** store, append: the entry expires this long after the write. */
  readonly ttl?: string;
  /** retrieve: the result when the key is missing (default null). */
  readonly default?: unknown;
  readonly resultVariable?: string;
  readonly next: Next;
}

/**
 * A job for an external worker of a registered domain: the action's input (`{ref}` resolved)
 * waits, durable, until a worker activates and completes it (the jobs API).
 */
export interface DomainTaskNode extends NodeBase {
  readonly type: 'domainTask';
  /** A domain registered in the organization (`wfx domains register`). */
  readonly domain: string;
  /** One of the domain's actions. */
  readonly action: string;
  /** The job's input: a map of values (`{ref}` resolved), or one `{ref}` to an object. */
  readonly input?: unknown;
  /** The whole job's deadline, from when the node is reached (JOB_TIMEOUT); default none. */
  readonly timeout?: string;
  /** How a failed attempt is retried (a worker's failure, output that does not match). */
  readonly retry?: RetrySpec;
  readonly resultVariable?: string;
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

export type Trigger =
  | { readonly type: 'webhook'; readonly webhook: string; readonly eventType?: string }
  | {
      readonly type: 'schedule';
      readonly cron: string;
      readonly timezone?: string;
      readonly missedRuns?: 'skip' | 'last' | 'all';
    }
  | {
      readonly type: 'email';
      readonly connection: string;
      readonly filters?: {
        readonly subjectContains?: string;
        readonly senderMatches?: string;
        readonly bodyContains?: string;
      };
    }
  /** Documentary: the flow is meant to be started by hand or over the API (nothing fires it). */
  | { readonly type: 'on-demand'; readonly description?: string };

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
