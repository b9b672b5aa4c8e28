/** The organization's live-executions limit, checked by every start of a step. */
import { WfxError } from '../../../shared/errors.js';
import { LiveCounts } from '../../state/live-counts.js';
import type { WfxState } from '../../state/state.js';
import type { StepContext } from './context.js';

/**
 * Throws EXECUTION_LIMIT_EXCEEDED when `n` more executions would make `organization` run more
 * than the live-executions limit. Checked in the step, so starts cannot pass it together.
 */
export function admit(
  s: { readonly state: WfxState; readonly ctx: Pick<StepContext, 'limits'> },
  organization: string,
  n: number,
): void {
  const limit = s.ctx.limits.organizationExecutions;
  if (LiveCounts.of(s.state).organization(organization) + n <= limit) return;
  throw new WfxError(
    'EXECUTION_LIMIT_EXCEEDED',
    `organization ${organization} runs ${limit} executions already (the daemon's live-executions limit)`,
    { details: { organization, limit } },
  );
}
