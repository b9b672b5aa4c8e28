/** The organization's limits every start of a step is checked against: how many run, how fast they start. */
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

/**
 * Takes `n` new executions of `organization` from its org-starts-per-second limit (start-rate.ts),
 * or throws ORG_RATE_EXCEEDED with the seconds to wait (`retryAfter`) and takes nothing. Call it
 * last, once nothing else can refuse the start: what it takes is spent.
 */
export function admitStarts(
  s: { readonly ctx: Pick<StepContext, 'limits' | 'startRate'>; readonly now: Date },
  organization: string,
  n: number,
): void {
  const waitMs = s.ctx.startRate.take(organization, n, s.now.getTime());
  if (waitMs === 0) return;
  const limit = s.ctx.limits.organizationStartsPerSecond;
  throw new WfxError(
    'ORG_RATE_EXCEEDED',
    `organization ${organization} starts ${limit} executions a second already (the daemon's org-starts-per-second limit)`,
    { details: { retryAfter: Math.ceil(waitMs / 1000) } },
  );
}
