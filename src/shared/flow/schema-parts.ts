/**
 * The pieces the flow format's JSON Schema (schema.ts) is made of: node references, durations,
 * conditions, form fields, retries, the model properties aiTask and callAgent share.
 */
import { searchSchema } from './search-attributes.js';
import { FIELD_TYPES } from './types.js';

/** A JSON Schema object. */
export type Schema = Record<string, unknown>;

export const ID_PATTERN = '^[A-Za-z_][A-Za-z0-9_-]*$';
export const nodeRef: Schema = { type: 'string', pattern: ID_PATTERN, description: 'id of another node of this flow' };
export const next: Schema = {
  description: 'the next node, or a list of nodes to run in parallel',
  oneOf: [nodeRef, { type: 'array', items: nodeRef, minItems: 1 }],
};
export const duration: Schema = {
  type: 'string',
  description: 'a duration: 500ms, 30s, 5m, 2h, 1d or ISO 8601 (PT30M)',
  pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d)|P.+)$',
};
export const condition: Schema = {
  type: 'string',
  description: 'a JUEL condition, ${...}, over the variables',
  pattern: '^\\s*\\$\\{[\\s\\S]*\\}\\s*$',
};
export const option: Schema = {
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
export const field: Schema = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    type: { enum: [...FIELD_TYPES] },
    required: { type: 'boolean' },
    label: { type: 'string' },
    options: { type: 'array', items: option },
    default: { description: 'the value the form starts with; it must fit the field' },
  },
};
export const common: Schema = {
  name: { type: 'string', description: 'display name (nodeName in logs); default: the node id' },
  description: { type: 'string' },
  search: searchSchema('node'),
};
export const errorFlow: Schema = { ...nodeRef, description: 'taken when this node fails' };

export const nodesRef: Schema = { $ref: '#/definitions/nodes' };
export const resultVariable: Schema = {
  type: 'string',
  pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
  description: 'the variable the result goes to',
};
export const retry: Schema = {
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
export const memoryName: Schema = { type: 'string', minLength: 1, maxLength: 512 };
/** The model properties aiTask and callAgent share. */
export const modelProperties: Record<string, Schema> = {
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
