/**
 * The JSON Schema of the work nodes (schema.ts has the rest of the flow format): the nodes
 * that do something outside the step, each with the properties it takes.
 */
import {
  type Schema,
  duration,
  errorFlow,
  memoryName,
  modelProperties,
  next,
  resultVariable,
  retry,
} from './schema-parts.js';
import type { NodeType } from './types.js';

/** A callAgent tool entry's `approve`. */
const approve = {
  type: 'boolean',
  description: "each call waits for a person's approval (an input task on the agent) before it runs (default false)",
} as const;

/** The work node types, in the schema's order. */
type WorkNodeType = 'serviceTask' | 'scriptTask' | 'aiTask' | 'callAgent' | 'voiceTask' | 'memoryAction' | 'domainTask';

/** Properties of each work node type, besides `type`. */
export const WORK_NODE_PROPERTIES: {
  readonly [T in WorkNodeType & NodeType]: { properties: Schema; required: readonly string[]; description: string };
} = {
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
      "a durable tool-use loop: the model calls tools (published flows that declare inputs:, MCP servers' tools) until it answers; result {text, data, steps, toolCalls, usage}",
    properties: {
      ...modelProperties,
      tools: {
        type: 'array',
        minItems: 1,
        description:
          'the tools the model may call: flows (processIds, or {processId, name, description}) and MCP servers ({mcp: {url, headers}, allow})',
        items: {
          oneOf: [
            { type: 'string', minLength: 1 },
            {
              type: 'object',
              required: ['mcp'],
              additionalProperties: false,
              properties: {
                mcp: {
                  type: 'object',
                  required: ['url'],
                  additionalProperties: false,
                  description: 'an MCP server over streamable HTTP: its tools are offered to the model',
                  properties: {
                    url: { type: 'string', pattern: '^https?://', description: "the server's MCP endpoint" },
                    headers: {
                      type: 'object',
                      additionalProperties: { type: 'string' },
                      description: 'headers sent with every request ({secret.NAME} and {env.NAME} resolved)',
                    },
                  },
                },
                allow: {
                  type: 'array',
                  minItems: 1,
                  uniqueItems: true,
                  items: {
                    type: 'string',
                    pattern: '^[A-Za-z0-9_.-]{1,128}$',
                    description: "a tool's name on the server",
                  },
                  description: "the server's tools offered (default: every tool it lists)",
                },
                approve,
              },
            },
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
                approve,
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
