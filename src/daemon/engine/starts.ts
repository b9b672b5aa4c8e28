/**
 * What a start is checked against before its step: the flow resolved and its data checked
 * (step/start-params.ts), and the organization's live-executions limit.
 */
import { WfxError } from '../../shared/errors.js';
import { LiveCounts } from '../state/live-counts.js';
import type { WfxState } from '../state/state.js';
import type { ExecutionLimits } from './limits.js';
import type { LaunchParams, StartRequest, StepContext } from './step/index.js';
import { resolveStart } from './step/start-params.js';

/**
 * Throws EXECUTION_LIMIT_EXCEEDED when `n` more executions would make `organization` run
 * more than the live-executions limit. Checked in the turn the step starts (a step runs
 * synchronously once started), so starts racing each other cannot pass the limit together.
 */
export function admit(state: WfxState, limits: ExecutionLimits, organization: string, n: number): void {
  const limit = limits.organizationExecutions;
  if (LiveCounts.of(state).organization(organization) + n <= limit) return;
  throw new WfxError(
    'EXECUTION_LIMIT_EXCEEDED',
    `organization ${organization} runs ${limit} executions already (the daemon's live-executions limit)`,
    { details: { organization, limit } },
  );
}

/** A start of a batch that cannot start, and why. */
export interface RefusedStart {
  readonly req: StartRequest;
  readonly error: WfxError;
}

/**
 * The starts of a batch resolved and admitted, in order; those that cannot start (no such flow
 * or version, data too deep, over the limit) are listed in `refused` with their error.
 */
export function batchParams(
  state: WfxState,
  ctx: Pick<StepContext, 'maxJsonDepth' | 'limits'>,
  reqs: readonly StartRequest[],
): { params: LaunchParams[]; refused: RefusedStart[] } {
  const refused: RefusedStart[] = [];
  const admitted = new Map<string, number>();
  const params = reqs.flatMap((req) => {
    try {
      const p = resolveStart(state, ctx, req);
      const n = (admitted.get(p.organization) ?? 0) + 1;
      admit(state, ctx.limits, p.organization, n);
      admitted.set(p.organization, n);
      return [p];
    } catch (err) {
      refused.push({
        req,
        error:
          err instanceof WfxError
            ? err
            : new WfxError('INTERNAL_ERROR', err instanceof Error ? err.message : String(err), { cause: err }),
      });
      return [];
    }
  });
  return { params, refused };
}
