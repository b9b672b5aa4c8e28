import type { NodeFailureCode } from '../../shared/flow/failure-codes.js';

/**
 * A failed work's code: a node failure code, or CANCELLED for work aborted because its node
 * left or the engine stops (the engine drops such a result: it never reaches a node).
 */
export type WorkFailureCode = NodeFailureCode | 'CANCELLED';

/**
 * What a unit of work (an HTTP call of a serviceTask, a script of a scriptTask) comes back
 * with. Work runs outside the engine's synchronous transitions; its result resumes the node.
 */
export type WorkResult =
  | { readonly ok: true; readonly value: unknown; readonly logs?: readonly string[] }
  | {
      readonly ok: false;
      readonly code: WorkFailureCode;
      readonly message: string;
      readonly logs?: readonly string[];
      /** The tries the work made before it failed (a serviceTask's or aiTask's retries); absent: one. */
      readonly attempts?: number;
    };
