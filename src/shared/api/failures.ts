/*
 * Failures at a glance: GET /process/failures, the failed executions grouped by flow, failure
 * code and the node they failed at, each group with its count and its newest execution.
 */
import { Type, type Static } from './schema.js';
import { Answer, ENVIRONMENTS, NullableString, StringEnum, OrganizationFilter } from './common.js';

/** How GET /process/failures orders its groups: newest execution first, or the largest first. */
export const FAILURE_SORTS = ['newest', 'count'] as const;
/** One of FAILURE_SORTS. */
export type FailureSort = (typeof FAILURE_SORTS)[number];

/** Querystring of GET /process/failures: which failed executions are grouped. */
export const FailuresQuery = Type.Object(
  {
    processId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    /** A flow version (`processVersion`). */
    version: Type.Optional(Type.String({ pattern: '^[0-9]+$', maxLength: 20 })),
    environment: Type.Optional(StringEnum(ENVIRONMENTS)),
    /** Started at or after this instant. */
    startedAfter: Type.Optional(Type.String({ format: 'date-time' })),
    /** Started before this instant. */
    startedBefore: Type.Optional(Type.String({ format: 'date-time' })),
    /** Include child executions (loop iterations, subprocesses, agents' tools); default: top-level only. */
    children: Type.Optional(Type.Boolean({ default: false })),
    sort: Type.Optional(
      StringEnum(FAILURE_SORTS, {
        default: 'newest',
        description: 'newest: the group whose newest execution started last first; count: the largest first',
      }),
    ),
    /** At most this many groups (`total` and `groupCount` count every one). */
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    organization: OrganizationFilter('failures'),
  },
  { additionalProperties: false },
);
export type FailuresQuery = Static<typeof FailuresQuery>;

/** The newest execution of a group of failures. */
export const FailureExample = Answer({
  processInstanceId: Type.String(),
  processVersion: Type.String(),
  /** Its error's message; null when its history document cannot be read. */
  message: NullableString(),
  /** When it failed (its endTime); null when its history document cannot be read. */
  at: NullableString(),
});
export type FailureExample = Static<typeof FailureExample>;

/** Failed executions of one flow with one failure code at one node. */
export const FailureGroup = Answer({
  processId: Type.String(),
  /** The flow's name, when the daemon knows the flow. */
  processName: Type.Optional(Type.String()),
  /** The failure code (`data.error.code`). */
  errorCode: Type.String(),
  /** The node they failed at (`data.error.nodeId`); null: at no node (an execution limit). */
  nodeId: NullableString(),
  /** The node's name in the newest execution's version, when it has one. */
  nodeName: Type.Optional(Type.String()),
  count: Type.Integer(),
  /** The execution of the group that started last (ids are time-ordered). */
  newest: FailureExample,
});
export type FailureGroup = Static<typeof FailureGroup>;

/** What GET /process/failures answers. */
export const FailureGroups = Answer({
  groups: Type.Array(FailureGroup),
  /** The failed executions counted, in every group (those past `limit` too). */
  total: Type.Integer(),
  /** The groups found, those past `limit` too. */
  groupCount: Type.Integer(),
});
export type FailureGroups = Static<typeof FailureGroups>;
