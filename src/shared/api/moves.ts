/*
 * Moving a running execution to another published version of its flow (Camunda's process
 * instance migration): POST /process/instance/{id}/move. What may move, and why not, is in
 * docs/flows.md, "Moving executions to another version".
 */
import { Type, type Static } from './schema.js';
import { Answer, StringEnum } from './common.js';

/** Body of POST /process/instance/{id}/move. */
export const MoveBody = Type.Object(
  {
    /** The published version of the execution's flow to move it to. */
    version: Type.String({ pattern: '^[0-9]+$', maxLength: 20 }),
    /** true: check only; the answer says whether it can move (`movable`), nothing changes. */
    dryRun: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type MoveBody = Static<typeof MoveBody>;

/**
 * What a move answers: `moved`; with dryRun `movable`; `unchanged` when the execution runs
 * that version already (nothing written, dry run or not).
 */
export const MOVE_STATUSES = ['moved', 'movable', 'unchanged'] as const;
/** A move's `status` (one of MOVE_STATUSES). */
export type MoveStatus = (typeof MOVE_STATUSES)[number];

/** What POST /process/instance/{id}/move answers (a reply schema). */
export const Moved = Answer({
  processInstanceId: Type.String(),
  fromVersion: Type.String(),
  toVersion: Type.String(),
  status: StringEnum(MOVE_STATUSES),
  /** The child executions running a body of the flow (a loop's iterations, an embedded subProcess) that move with it. */
  children: Type.Array(Type.String()),
});
export type Moved = Static<typeof Moved>;

/**
 * Why a node keeps an execution from moving: the codes of `details.problems` of
 * INSTANCE_NOT_MOVABLE, each documented in docs/flows.md (a test checks it).
 */
export const MOVE_PROBLEM_CODES = [
  /** A live node, or a join holding arrivals, has no node of that id in the target version (at its place). */
  'NODE_MISSING',
  /** It has one of another type. */
  'NODE_TYPE_CHANGED',
  /** A waiting catch event waits for another kind of event, or another message or signal, there. */
  'EVENT_CHANGED',
  /** A waiting domainTask's job is of another domain or action there. */
  'JOB_CHANGED',
  /** A waiting loopNode iterates a collection in one version and on a condition in the other. */
  'LOOP_CHANGED',
  /** A subProcess or loopNode whose body runs as a child execution has no body there. */
  'BODY_MISSING',
  /** A join holds an arrival by a connection that does not lead to it there. */
  'JOIN_CHANGED',
] as const;
/** A move problem's `code` (one of MOVE_PROBLEM_CODES). */
export type MoveProblemCode = (typeof MOVE_PROBLEM_CODES)[number];

/** One reason an execution cannot move: an item of INSTANCE_NOT_MOVABLE's `details.problems`. */
export interface MoveProblem {
  /** The execution holding the node: the one asked about, or a child that moves with it. */
  readonly processInstanceId: string;
  /** The node's id (in its body, for a child's node). */
  readonly nodeId: string;
  /** For a child's node: the container node ids down to the body it is in (Execution `scope`). */
  readonly scope?: readonly string[];
  readonly code: MoveProblemCode;
  readonly reason: string;
}
