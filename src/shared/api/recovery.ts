/*
 * Recovery of executions (SPEC.md section 10): retry a failed execution where it failed, and
 * replay one from a node as a new execution.
 */
import { Type, type Static } from './schema.js';
import { Answer, StringEnum } from './common.js';

const Data = Type.Unsafe<Record<string, unknown>>({ type: 'object' });

/** Body of POST /process/instance/{id}/retry: variables set before the failed nodes run again. */
export const RetryBody = Type.Object(
  {
    data: Type.Optional({
      ...Data,
      description: 'variables set first (in the execution and in each child retried with it)',
    }),
  },
  { additionalProperties: false },
);
export type RetryBody = Static<typeof RetryBody>;

/** What POST /process/instance/{id}/retry answers: the same execution, running again. */
export const Retried = Answer({ processInstanceId: Type.String(), status: StringEnum(['resumed'] as const) });
export type Retried = Static<typeof Retried>;

/** Body of POST /process/instance/{id}/replay: the node to start at, and variables over those of that moment. */
export const ReplayBody = Type.Object(
  {
    nodeId: Type.String({ minLength: 1, maxLength: 200 }),
    data: Type.Optional({ ...Data, description: 'variables set over those the original had at the node' }),
  },
  { additionalProperties: false },
);
export type ReplayBody = Static<typeof ReplayBody>;

/** What POST /process/instance/{id}/replay answers: the new execution. */
export const Replayed = Answer({
  processInstanceId: Type.String(),
  replayOf: Type.String(),
  status: StringEnum(['started'] as const),
});
export type Replayed = Static<typeof Replayed>;

/** One retry of an execution, as GET /process/instance/{id} lists them in `retries`. */
export interface RetryView {
  readonly at: string;
  /** Who asked: `key:<id>` or `oidc:<subject>`. */
  readonly by: string;
  /** The failure the retry undid. */
  readonly error: { readonly code: string; readonly message: string; readonly nodeId: string | null };
  /** The variables it set first. */
  readonly set?: readonly string[];
}

/** What a replay started from (GET /process/instance/{id}, `replayOf`). */
export interface ReplayOfView {
  readonly processInstanceId: string;
  readonly nodeId: string;
  readonly by: string;
}
