/**
 * What the flow validator reports: each problem with a stable code and the place it is at. The
 * checks of validate.ts and node-rules.ts report into one list through an `At`.
 */
import type { LimitProblemCode } from './limits.js';

/** Stable codes of flow problems (tests and tools match on them). */
export type FlowProblemCode =
  | 'SYNTAX'
  | 'SCHEMA'
  | 'UNKNOWN_NODE_TYPE'
  | 'NODE_TYPE_UNSUPPORTED'
  | 'START_EVENT_COUNT'
  | 'UNKNOWN_TARGET'
  | 'DEAD_END'
  | 'UNREACHABLE'
  | 'BAD_CONDITION'
  | 'BAD_SCRIPT'
  | 'BAD_DURATION'
  | 'MISSING_PROPERTY'
  | 'BAD_SCHEDULE'
  | 'UNKNOWN_CONNECTION'
  | 'BAD_PATTERN'
  | 'UNKNOWN_WEBHOOK'
  | 'UNKNOWN_TOOL'
  | 'TOOL_WITHOUT_INPUTS'
  | 'UNKNOWN_DOMAIN'
  | 'JOB_INPUT_MISMATCH'
  | 'SECRET_NOT_ALLOWED'
  | 'DUPLICATE_PROCESS_ID'
  | 'TRIGGER_INPUTS_UNMET'
  | LimitProblemCode;

/** One thing wrong with a flow, located as precisely as the file allows. */
export interface FlowProblem {
  readonly code: FlowProblemCode;
  readonly message: string;
  readonly nodeId?: string;
  /** Dotted property path inside the node (or the flow, when there is no node). */
  readonly property?: string;
  readonly line?: number;
  readonly column?: number;
}

/**
 * Reports a problem at `path` (node ids and property keys from the flow's root); `posPath`,
 * when given, is where its position is taken from instead.
 */
export type At = (
  code: FlowProblemCode,
  path: readonly (string | number)[],
  message: string,
  posPath?: readonly (string | number)[],
  /** A place inside the scalar at `posPath` (a script's line and column), for the position. */
  inner?: { readonly line: number; readonly column: number },
) => void;
