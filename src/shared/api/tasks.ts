/* Waiting input nodes and user tasks: GET /process/tasks lists them, POST /process/task answers one. */
import { Type, type Static } from './schema.js';
import type { FormField, InputType } from '../flow/types.js';
import {
  Answer,
  ENVIRONMENTS,
  Nullable,
  NullableString,
  Page,
  PageFields,
  StringEnum,
  OrganizationFilter,
} from './common.js';

/** What POST /process/task does to a waiting node: answer it (complete, cancel), or claim it for the caller or give it back. */
export const TASK_ACTIONS = ['COMPLETE', 'CANCEL', 'CLAIM', 'UNCLAIM'] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

/**
 * Body of POST /process/task: complete (with the answer in `data`) or cancel a waiting node;
 * claim it (only who claimed it answers it then) or unclaim it. `takeOver`: act on a task
 * another person claimed (WORKFLOW_PUBLISH).
 */
export const TaskAnswerBody = Type.Object(
  {
    processInstanceId: Type.String({ minLength: 1, maxLength: 200 }),
    nodeId: Type.String({ minLength: 1, maxLength: 200 }),
    action: StringEnum(TASK_ACTIONS),
    data: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object' })),
    takeOver: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type TaskAnswerBody = Static<typeof TaskAnswerBody>;

/**
 * A task's claim: `by` the claimer as the daemon names callers (`key:<id>`, `oidc:<subject>`,
 * as `answeredBy`), `name` as a person reads it (the API key's name, the token's subject).
 */
export interface TaskClaim {
  readonly by: string;
  readonly name: string;
  readonly at: string;
}

/** What POST /process/task answers (a reply schema). */
export const TaskAnswered = Answer({ processInstanceId: Type.String(), status: Type.String() });
export type TaskAnswered = Static<typeof TaskAnswered>;

/** Querystring of GET /process/tasks. */
export const TaskListQuery = Type.Object(
  {
    processId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    organization: OrganizationFilter('tasks'),
    ...PageFields(1000, 100, 300),
  },
  { additionalProperties: false },
);
export type TaskListQuery = Static<typeof TaskListQuery>;

/** One input node or user task waiting for POST /process/task (an item of GET /process/tasks). */
export const WaitingTask = Answer({
  processInstanceId: Type.String(),
  processId: Type.String(),
  processName: Type.String(),
  processVersion: Type.String(),
  organization: Type.String(),
  /** The environment its execution runs in. */
  environment: StringEnum(ENVIRONMENTS),
  correlationKey: NullableString(),
  nodeInstanceId: Type.String(),
  nodeId: Type.String(),
  nodeName: Type.String(),
  nodeType: Type.Unsafe<string>({ type: 'string', enum: ['inputNode', 'userTask', 'callAgent'] }),
  inputType: Type.Unsafe<InputType>({ type: 'string' }),
  /** Resolved when the node was reached (the wait holds it so). */
  formTitle: NullableString(),
  options: Nullable<readonly unknown[]>('array', { items: {} }),
  fields: Nullable<readonly FormField[]>('array', { items: { type: 'object', additionalProperties: true } }),
  assignee: NullableString(),
  /** Who claimed it (POST /process/task CLAIM) and when; null: nobody. Only they answer it, or a caller taking it over. */
  claim: Nullable<TaskClaim>('object', {
    properties: { by: { type: 'string' }, name: { type: 'string' }, at: { type: 'string' } },
    required: ['by', 'name', 'at'],
    additionalProperties: false,
  }),
  /** When it stops waiting by itself: the first of its timeout and its timer boundary events not yet fired; null: never. */
  dueAt: NullableString(),
  waitingSince: Type.String(),
  /** The callAgent waiting for this task: its execution runs a tool call of that agent (directly or below it). */
  agent: Type.Optional(
    Answer({
      processInstanceId: Type.String(),
      nodeId: Type.String(),
      nodeName: Type.String(),
      /** The tool's name, as the model called it. */
      tool: Type.String(),
    }),
  ),
  /** A callAgent's tool call waiting for approval (COMPLETE runs it, with `arguments` edited or not; CANCEL refuses it). */
  approval: Type.Optional(
    Answer({
      callId: Type.String(),
      tool: Type.String(),
      arguments: Type.Unknown(),
      reasoning: NullableString(),
      processId: Type.Optional(Type.String()),
      server: Type.Optional(Type.String()),
    }),
  ),
});
export type WaitingTask = Static<typeof WaitingTask>;

/** GET /process/tasks: oldest waiting first (a reply schema). */
export const TaskPage = Page(WaitingTask);
export type TaskPage = Static<typeof TaskPage>;
