import { RESERVED_NAMES } from '../names.js';
import { INPUT_TYPES, type NodeType } from './types.js';
import {
  ID_PATTERN,
  nodeRef,
  next,
  duration,
  condition,
  option,
  field,
  common,
  errorFlow,
  nodesRef,
  resultVariable,
  type Schema,
} from './schema-parts.js';
import { WORK_NODE_PROPERTIES } from './work-node-schemas.js';
import { searchSchema } from './search-attributes.js';
import { TRIGGERS } from './trigger-schemas.js';

/**
 * The JSON Schema of flow files (draft-07, which editors' YAML and JSON language servers
 * support). `wfx flow schema` prints it; the validator checks flows against this same schema,
 * so the two never disagree. One entry per node type the engine runs: a type the seed names
 * but the engine cannot run yet is not in it (the validator says so by name).
 */

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
  ...WORK_NODE_PROPERTIES,
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
      search: searchSchema('flow'),
      concurrency: {
        type: 'object',
        description:
          'at most `limit` executions run at once (per environment; with `key`, per value of that template over the start data); `policy` says what a start over it does',
        required: ['limit'],
        additionalProperties: false,
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100000 },
          key: { type: 'string', minLength: 1, description: 'a template over the start data, e.g. "{customerId}"' },
          policy: {
            enum: ['queue', 'cancel-new', 'cancel-oldest'],
            description:
              'queue (default): the start waits its turn; cancel-new: it is refused (CONCURRENCY_LIMIT_REACHED); cancel-oldest: the oldest running one is cancelled',
          },
        },
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
