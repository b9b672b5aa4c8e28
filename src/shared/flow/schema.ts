/**
 * Long file: the flow format's JSON Schema is one document, one entry per node type; editors and
 * the validator read it whole.
 */
import { RESERVED_NAMES } from '../names.js';
import { FIELD_TYPES, INPUT_TYPES, type NodeType } from './types.js';

/**
 * The JSON Schema of flow files (draft-07, which editors' YAML and JSON language servers
 * support). `wfx flow schema` prints it; the validator checks flows against this same schema,
 * so the two never disagree. One entry per node type the engine runs: a type the seed names
 * but the engine cannot run yet is not in it (the validator says so by name).
 */

type Schema = Record<string, unknown>;

const ID_PATTERN = '^[A-Za-z_][A-Za-z0-9_-]*$';
const nodeRef: Schema = { type: 'string', pattern: ID_PATTERN, description: 'id of another node of this flow' };
const next: Schema = {
  description: 'the next node, or a list of nodes to run in parallel',
  oneOf: [nodeRef, { type: 'array', items: nodeRef, minItems: 1 }],
};
const duration: Schema = {
  type: 'string',
  description: 'a duration: 500ms, 30s, 5m, 2h, 1d or ISO 8601 (PT30M)',
  pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d)|P.+)$',
};
const condition: Schema = {
  type: 'string',
  description: 'a JUEL condition, ${...}, over the variables',
  pattern: '^\\s*\\$\\{[\\s\\S]*\\}\\s*$',
};
const option: Schema = {
  oneOf: [
    { type: 'string' },
    { type: 'number' },
    {
      type: 'object',
      required: ['value'],
      additionalProperties: false,
      properties: { value: { type: ['string', 'number'] }, label: { type: 'string' } },
    },
  ],
};
const field: Schema = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    type: { enum: [...FIELD_TYPES] },
    required: { type: 'boolean' },
    label: { type: 'string' },
    options: { type: 'array', items: option },
  },
};
const common: Schema = {
  name: { type: 'string', description: 'display name (nodeName in logs); default: the node id' },
  description: { type: 'string' },
};
const errorFlow: Schema = { ...nodeRef, description: 'taken when this node fails' };

const nodesRef: Schema = { $ref: '#/definitions/nodes' };
const resultVariable: Schema = {
  type: 'string',
  pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
  description: 'the variable the result goes to',
};
const retry: Schema = {
  type: 'object',
  additionalProperties: false,
  description: 'retries on network errors, timeouts, 5xx and 429 (Retry-After honoured)',
  properties: {
    maxAttempts: { type: 'integer', minimum: 1, maximum: 100, description: 'attempts in all (default 3)' },
    initialInterval: { ...duration, description: 'the first wait (default 1s)' },
    backoff: { type: 'number', minimum: 1, description: 'each wait is this many times the last (default 2)' },
    maxInterval: { ...duration, description: 'the longest wait (default 1m)' },
  },
};
const memoryName: Schema = { type: 'string', minLength: 1, maxLength: 512 };
/** The model properties aiTask and callAgent share. */
const modelProperties: Record<string, Schema> = {
  provider: {
    type: 'string',
    minLength: 1,
    description: "a registered provider's name (default: the organization's default)",
  },
  model: { type: 'string', minLength: 1, description: "overrides the provider's model" },
  systemPrompt: { type: 'string', description: 'the system message ({ref} resolved)' },
  prompt: { type: 'string', description: 'the user message ({ref} resolved); or messages' },
  messages: {
    type: 'array',
    minItems: 1,
    description: 'the conversation to send ({ref} resolved in each content); or prompt',
    items: {
      type: 'object',
      required: ['role', 'content'],
      additionalProperties: false,
      properties: { role: { enum: ['system', 'user', 'assistant'] }, content: { type: 'string' } },
    },
  },
  responseFormat: { enum: ['text', 'json'], description: 'default text; json with schema' },
  schema: { type: 'object', description: 'a JSON Schema the answer must match (implies json)' },
  temperature: { type: 'number', minimum: 0, maximum: 2 },
  maxTokens: { type: 'integer', minimum: 1, description: 'the longest answer, in tokens' },
  seed: { type: 'integer' },
  timeout: { ...duration, description: 'per attempt (default 2m)' },
  retry: { ...retry, description: 'retries on network errors, timeouts, 5xx and 429 (Retry-After honoured)' },
  repairs: {
    type: 'integer',
    minimum: 0,
    maximum: 3,
    description: 'repair requests after a JSON answer that does not parse or match schema (default 1)',
  },
  memory: {
    type: 'object',
    required: ['namespace', 'key'],
    additionalProperties: false,
    description:
      'chat memory: the last `window` messages of this list go before the prompt; prompt and answer are appended',
    properties: {
      namespace: memoryName,
      key: memoryName,
      window: { type: 'integer', minimum: 1, description: 'messages remembered and sent (default 20)' },
    },
  },
};

/** Properties of each node type, besides `type`. */
const NODE_PROPERTIES: {
  readonly [T in NodeType]: { properties: Schema; required: readonly string[]; description: string };
} = {
  startEvent: { description: 'start of the flow', properties: { next }, required: ['next'] },
  endEvent: {
    description: 'ends its token; terminate: true cancels every other active node and completes the execution',
    properties: { terminate: { type: 'boolean' } },
    required: [],
  },
  task: { description: 'does nothing, passes on', properties: { next, errorFlow }, required: ['next'] },
  setVariable: {
    description: 'sets variables; a value that is exactly one {ref} keeps its type',
    properties: { variables: { type: 'object' }, next, errorFlow },
    required: ['variables', 'next'],
  },
  outputNode: {
    description: "sets variables and records them as the execution's output",
    properties: { outputs: { type: 'object' }, next, errorFlow },
    required: ['outputs', 'next'],
  },
  ifElse: {
    description: 'takes `then` when the JUEL condition is true, else `else`',
    properties: { condition, then: nodeRef, else: nodeRef, errorFlow },
    required: ['condition', 'then', 'else'],
  },
  exclusiveGateway: {
    description: 'the first branch whose condition is true, else default; converging: passes each token',
    properties: gatewayProperties(),
    required: [],
  },
  inclusiveGateway: {
    description:
      'every branch whose condition is true (or default); converging: waits until no active token can still reach it',
    properties: gatewayProperties(),
    required: [],
  },
  parallelGateway: {
    description: 'forks to every `next`; converging: waits for one token per incoming connection',
    properties: { next },
    required: ['next'],
  },
  inputNode: {
    description: 'waits for input submitted with POST /process/task',
    properties: {
      formTitle: { type: 'string' },
      inputType: { enum: [...INPUT_TYPES] },
      options: { type: 'array', items: option, minItems: 1 },
      fields: { type: 'array', items: field, minItems: 1 },
      timeout: duration,
      next,
      errorFlow: { ...nodeRef, description: 'taken when the input is cancelled' },
      timeoutFlow: { ...nodeRef, description: 'taken when the timeout passes with no input' },
    },
    required: ['inputType', 'next'],
  },
  userTask: {
    description: 'a form for a person (an input node of type form)',
    properties: {
      formTitle: { type: 'string' },
      assignee: { type: 'string' },
      fields: { type: 'array', items: field, minItems: 1 },
      timeout: duration,
      next,
      errorFlow: { ...nodeRef, description: 'taken when the task is cancelled' },
      timeoutFlow: { ...nodeRef, description: 'taken when the timeout passes with no input' },
    },
    required: ['next'],
  },
  intermediateCatchEvent: {
    description: 'waits for a message or signal (POST /process/event) or a timer',
    properties: {
      eventType: { enum: ['message', 'signal', 'timer'] },
      messageRef: { type: 'string', minLength: 1 },
      correlationKey: { type: 'string' },
      duration,
      until: { type: 'string', description: 'an ISO 8601 instant, or a {ref} to one' },
      next,
      errorFlow,
    },
    required: ['eventType', 'next'],
  },
  intermediateThrowEvent: {
    description: 'delivers a message or signal to waiting catch events of the organization, then passes on',
    properties: {
      eventType: { enum: ['message', 'signal'] },
      messageRef: { type: 'string', minLength: 1 },
      correlationKey: { type: 'string' },
      data: { type: 'object' },
      next,
      errorFlow,
    },
    required: ['eventType', 'messageRef', 'next'],
  },
  loopNode: {
    description: 'runs its body (a nested flow) once per item of a collection, or while a condition holds',
    properties: {
      collection: { description: 'a {ref} to an array, or an array: one iteration per item' },
      itemVariable: { ...resultVariable, description: 'the variable holding the item (default item)' },
      indexVariable: { ...resultVariable, description: 'the variable holding the 0-based index (default index)' },
      condition: {
        ...condition,
        description: 'a JUEL condition checked before each iteration: iterate while it holds',
      },
      maxIterations: {
        type: 'integer',
        minimum: 1,
        maximum: 100_000,
        description:
          "more iterations fail the node with LOOP_LIMIT (default 1000; at most 100000, and never more than the daemon's loop-iterations limit)",
      },
      parallel: {
        type: 'boolean',
        description: 'run iterations at once, each with its own copy of the variables (collection only)',
      },
      concurrency: {
        type: 'integer',
        minimum: 1,
        maximum: 1000,
        description:
          "at most this many iterations at once (parallel; default 10; at most 1000, and the daemon's children limit holds)",
      },
      nodes: { ...nodesRef, description: 'the body: a nested flow with its own startEvent' },
      collect: {
        ...resultVariable,
        description: 'gather this variable of each iteration into an array of the same name',
      },
      next,
      errorFlow,
    },
    required: ['nodes', 'next'],
  },
  subProcess: {
    description: 'runs a nested flow (nodes) or a published flow (processId) as a child execution and waits for it',
    properties: {
      nodes: { ...nodesRef, description: 'an embedded flow with its own startEvent' },
      processId: {
        type: 'string',
        minLength: 1,
        description: 'a published flow of the organization (instead of nodes)',
      },
      versionNumber: {
        type: 'string',
        pattern: '^[0-9]+$',
        description: "default: the active version of the execution's environment",
      },
      input: {
        type: 'object',
        description: "the child's variables, name -> value ({ref} resolved); default all of the parent's",
      },
      output: {
        type: 'array',
        items: { type: 'string' },
        description: "the child's variables merged back; default all",
      },
      next,
      errorFlow,
    },
    required: ['next'],
  },
  callProcess: {
    description: 'starts another flow and passes on at once, setting {calledProcessInstanceId}',
    properties: {
      processId: { type: 'string', minLength: 1 },
      versionNumber: { type: 'string', pattern: '^[0-9]+$' },
      data: { type: 'object', description: 'the variables of the started execution ({ref} resolved)' },
      correlationKey: { type: 'string' },
      next,
      errorFlow,
    },
    required: ['processId', 'next'],
  },
  boundaryEvent: {
    description: 'a timer or error event attached to another node: fires while that node runs or waits',
    properties: {
      attachedTo: { ...nodeRef, description: 'the node it watches (same flow level)' },
      event: { enum: ['timer', 'error'] },
      duration: { ...duration, description: 'timer: fires this long after the attached node started' },
      errorCode: { type: 'string', minLength: 1, description: 'error: only failures with this code (default any)' },
      cancelActivity: { type: 'boolean', description: 'cancel the attached node when it fires (default true)' },
      next,
    },
    required: ['attachedTo', 'event', 'next'],
  },
  serviceTask: {
    description: 'an HTTP call; the result {status, headers, body} goes to resultVariable (default: the node id)',
    properties: {
      method: {
        type: 'string',
        pattern: '^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|get|head|post|put|patch|delete|options)$',
      },
      url: { type: 'string', minLength: 1 },
      headers: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
      query: { type: 'object' },
      body: { description: 'sent as JSON, or as is when text' },
      timeout: { ...duration, description: 'per attempt (default 30s)' },
      retry,
      acceptStatus: {
        type: 'array',
        minItems: 1,
        items: {
          oneOf: [
            { type: 'integer', minimum: 100, maximum: 599 },
            { type: 'string', pattern: '^[1-5]xx$' },
          ],
        },
        description: 'accepted statuses, e.g. [200, "3xx"] (default ["2xx"])',
      },
      resultVariable,
      next,
      errorFlow,
    },
    required: ['url', 'next'],
  },
  scriptTask: {
    description: 'JavaScript in a sandbox: reads vars; a returned object is merged into the variables',
    properties: {
      language: { enum: ['javascript'] },
      script: { type: 'string', minLength: 1, description: 'a function body; `vars` holds the variables' },
      timeout: { ...duration, description: 'default 5s' },
      resultVariable: { ...resultVariable, description: 'put the returned value here instead of merging it' },
      next,
      errorFlow,
    },
    required: ['script', 'next'],
  },
  aiTask: {
    description:
      'one model call; the result {text, data, model, finishReason, usage} goes to resultVariable (default: the node id)',
    properties: {
      ...modelProperties,
      resultVariable,
      next,
      errorFlow,
    },
    required: ['next'],
  },
  callAgent: {
    description:
      'a durable tool-use loop: the model calls tools (published flows that declare inputs:) until it answers; result {text, data, steps, toolCalls, usage}',
    properties: {
      ...modelProperties,
      tools: {
        type: 'array',
        minItems: 1,
        description: 'the flows the model may call: processIds, or {processId, name, description}',
        items: {
          oneOf: [
            { type: 'string', minLength: 1 },
            {
              type: 'object',
              required: ['processId'],
              additionalProperties: false,
              properties: {
                processId: { type: 'string', minLength: 1 },
                name: {
                  type: 'string',
                  pattern: '^[A-Za-z0-9_-]{1,64}$',
                  description: "the tool's name for the model (default: from the flow's name)",
                },
                description: { type: 'string', description: "what the tool does (default: the flow's description)" },
              },
            },
          ],
        },
      },
      maxSteps: {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        description: 'model turns at most (default 10); a turn that still asks for tools then fails (AGENT_MAX_STEPS)',
      },
      maxToolCalls: { type: 'integer', minimum: 1, description: 'tool calls at most (AGENT_BUDGET_EXCEEDED)' },
      maxTotalTokens: {
        type: 'integer',
        minimum: 1,
        description: 'tokens at most over every turn (AGENT_BUDGET_EXCEEDED)',
      },
      parallelToolCalls: { type: 'boolean', description: 'the calls of one answer run at once (default true)' },
      failOnToolError: {
        type: 'boolean',
        description: 'a failed tool fails the node (default false: the error goes back to the model)',
      },
      resultVariable,
      next,
      errorFlow,
    },
    required: ['tools', 'next'],
  },
  voiceTask: {
    description:
      'speaks text into an audio file of the file store, or transcribes one: with the local engine (espeak-ng, pocketsphinx) or a provider',
    properties: {
      operation: { enum: ['speak', 'transcribe'] },
      text: { type: 'string', minLength: 1, description: 'speak: what to say ({ref} resolved)' },
      voice: { type: 'string', minLength: 1, description: 'speak: an espeak-ng voice (en-us), or the provider’s' },
      rate: { type: 'integer', minimum: 80, maximum: 450, description: 'speak: words per minute (default 175)' },
      format: { enum: ['wav', 'mp3', 'opus', 'flac'], description: 'speak: default wav (the local engine: wav only)' },
      audio: { type: 'string', minLength: 1, description: 'transcribe: a file reference ({ref} resolved)' },
      language: { type: 'string', pattern: '^[a-z]{2}(-[A-Za-z]{2})?$', description: 'transcribe: default en' },
      vocabulary: {
        type: 'array',
        minItems: 1,
        maxItems: 1000,
        items: { type: 'string', pattern: "^[a-zA-Z']+( [a-zA-Z']+)*$" },
        description: 'transcribe, local engine: the words or phrases to listen for',
      },
      provider: { type: 'string', minLength: 1, description: 'a model provider (openai-compatible); default: local' },
      model: { type: 'string', minLength: 1, description: "the provider's model (tts-1, whisper-1)" },
      timeout: { ...duration, description: 'default 1m' },
      retry: { ...retry, description: "a provider's failures, as aiTask's" },
      resultVariable,
      next,
      errorFlow,
    },
    required: ['operation', 'next'],
  },
  memoryAction: {
    description: "reads or writes the organization's durable memory: a value or a list per namespace and key",
    properties: {
      action: { enum: ['store', 'retrieve', 'append', 'delete', 'list'] },
      namespace: { ...memoryName, description: '{ref} resolved' },
      key: { ...memoryName, description: '{ref} resolved; every action but list' },
      value: { description: 'store, append: the value ({ref} resolved; a lone {ref} keeps its type)' },
      window: { type: 'integer', minimum: 1, description: 'retrieve: the last N items of a list' },
      maxItems: {
        type: 'integer',
        minimum: 1,
        description: 'append: the oldest items beyond it are dropped (at most 10000)',
      },
      ttl: { ...duration, description: 'store, append: the entry expires this long after the write' },
      default: { description: 'retrieve: the result when the key is missing (default null)' },
      resultVariable,
      next,
      errorFlow,
    },
    required: ['action', 'namespace', 'next'],
  },
  domainTask: {
    description:
      "a job for an external worker of a registered domain; the worker's output goes to resultVariable (default: the node id)",
    properties: {
      domain: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$', description: 'a registered domain' },
      action: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,99}$', description: 'one of its actions' },
      input: {
        description: "the job's input: a map ({ref} resolved in each value) or one {ref} to an object",
        type: ['object', 'string'],
      },
      timeout: { ...duration, description: 'the whole job, from when the node is reached (default: none)' },
      retry: {
        ...retry,
        description: "attempts of the job: a worker's failure or invalid output is retried after the interval",
      },
      resultVariable,
      next,
      errorFlow,
    },
    required: ['domain', 'action', 'next'],
  },
};

function gatewayProperties(): Schema {
  return {
    branches: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['condition', 'next'],
        additionalProperties: false,
        properties: { condition, next: nodeRef },
      },
    },
    default: { ...nodeRef, description: 'taken when no branch condition is true' },
    next: { ...nodeRef, description: 'for a purely converging gateway' },
  };
}

/** Node types the engine runs, in the schema's order. */
export const NODE_TYPES = Object.keys(NODE_PROPERTIES) as NodeType[];

const TRIGGERS: Schema[] = [
  {
    type: 'object',
    required: ['type', 'webhook'],
    additionalProperties: false,
    properties: { type: { const: 'webhook' }, webhook: { type: 'string' }, eventType: { type: 'string' } },
  },
  {
    type: 'object',
    required: ['type', 'cron'],
    additionalProperties: false,
    properties: {
      type: { const: 'schedule' },
      cron: { type: 'string' },
      timezone: { type: 'string' },
      missedRuns: { enum: ['skip', 'last', 'all'] },
    },
  },
  {
    type: 'object',
    required: ['type', 'connection'],
    additionalProperties: false,
    properties: {
      type: { const: 'email' },
      connection: { type: 'string' },
      filters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          subjectContains: { type: 'string' },
          senderMatches: { type: 'string' },
          bodyContains: { type: 'string' },
        },
      },
    },
  },
  {
    type: 'object',
    required: ['type'],
    additionalProperties: false,
    description: 'documentary: the flow is started by hand or over the API',
    properties: { type: { const: 'on-demand' }, description: { type: 'string' } },
  },
];

/**
 * The JSON Schema of a flow file. Pure; a new object each call. With `bodies: 'unchecked'` a
 * body (`nodes:` of a container) must only be a mapping: the validator checks each body on its
 * own (schema-check.ts), so that no schema check recurses as deep as bodies nest.
 */
export function flowSchema(options?: { readonly bodies?: 'checked' | 'unchecked' }): Schema {
  const definitions: Record<string, Schema> = {};
  for (const type of NODE_TYPES) {
    const spec = NODE_PROPERTIES[type];
    const properties: Record<string, Schema> = { type: { const: type }, ...common, ...spec.properties };
    if (options?.bodies === 'unchecked' && properties.nodes)
      properties.nodes = { type: 'object', description: properties.nodes.description };
    definitions[type] = {
      type: 'object',
      description: spec.description,
      required: ['type', ...spec.required],
      additionalProperties: false,
      properties,
    };
  }
  definitions.node = {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: NODE_TYPES, description: 'the node type' } },
    allOf: NODE_TYPES.map((type) => ({
      if: { properties: { type: { const: type } }, required: ['type'] },
      then: { $ref: `#/definitions/${type}` },
    })),
  };
  definitions.nodes = {
    type: 'object',
    description: 'node id -> node',
    minProperties: 1,
    propertyNames: { pattern: ID_PATTERN, not: { enum: [...RESERVED_NAMES] } },
    additionalProperties: { $ref: '#/definitions/node' },
  };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://wfx.dev/schemas/flow.json',
    title: 'wfx flow',
    type: 'object',
    required: ['processId', 'name', 'nodes'],
    additionalProperties: false,
    properties: {
      $schema: { type: 'string' },
      processId: {
        type: 'string',
        description: 'UUID, stable across versions',
        pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      },
      name: { type: 'string', minLength: 1, description: 'display name' },
      description: { type: 'string' },
      public: { type: 'boolean', description: 'listed by GET /process/list for callers without WORKFLOW_READ' },
      inputs: {
        type: 'object',
        description:
          'a JSON Schema of the start data (type object; describe each property): checked on every start, and the parameters of the flow as an agent tool',
      },
      triggers: {
        type: 'array',
        items: {
          type: 'object',
          required: ['type'],
          properties: {
            type: { enum: TRIGGERS.map((tr) => (tr.properties as { type: { const: string } }).type.const) },
          },
          // By type, as for nodes: a mistake is reported on the property, not as "matches no form".
          allOf: TRIGGERS.map((tr) => ({
            if: {
              properties: { type: { const: (tr.properties as { type: { const: string } }).type.const } },
              required: ['type'],
            },
            then: tr,
          })),
        },
      },
      nodes: nodesRef,
    },
    definitions,
  };
}
