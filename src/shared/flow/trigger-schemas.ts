/** The schemas of a flow's triggers (schema.ts puts them under `triggers:`). */
import { duration, type Schema } from './schema-parts.js';

/** A webhook's or email trigger's pacing of its starts (StartPacing). */
const PACING = {
  debounce: { ...duration, description: 'one start for a burst: this long after its last event, with its data' },
  debounceKey: { type: 'string', description: 'a template over the start variables: each value debounces apart' },
  throttle: { type: 'string', pattern: '^[1-9][0-9]{0,6}/(s|m|h)$', description: 'at most N starts a s, m or h' },
} as const;

/** The trigger types a flow's `triggers:` takes, each its own schema. */
export const TRIGGERS: Schema[] = [
  {
    type: 'object',
    required: ['type', 'webhook'],
    additionalProperties: false,
    properties: { type: { const: 'webhook' }, webhook: { type: 'string' }, eventType: { type: 'string' }, ...PACING },
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
      overlap: {
        enum: ['skip', 'buffer-one', 'allow', 'cancel-other'],
        description:
          'while an execution an earlier fire started runs: skip the fire, keep one to start after it, start anyway (default), or cancel the running one',
      },
    },
  },
  {
    type: 'object',
    required: ['type', 'connection'],
    additionalProperties: false,
    properties: {
      type: { const: 'email' },
      connection: { type: 'string' },
      ...PACING,
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
    required: ['type', 'states'],
    additionalProperties: false,
    description:
      'starts the flow when a top-level execution of processId (default: any other flow of the organization) ends in one of states',
    properties: {
      type: { const: 'execution' },
      processId: {
        type: 'string',
        description: 'the flow whose executions are watched (default: every flow of the organization but this one)',
        pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      },
      states: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { enum: ['COMPLETED', 'FAILED', 'CANCELLED'] },
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
