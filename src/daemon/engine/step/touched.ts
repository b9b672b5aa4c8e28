/**
 * The executions a step input names (decision 068, step 3): the runner ensures their trees are
 * resident before the step begins (engine/runner.ts). A step may read and change any execution
 * of those trees, since it walks parents and children: a child's end resumes its parent
 * (tokens.ts, settle), a cancel or failure ends the children (tokens.ts), a child's start reads
 * the chain of its parents (children.ts, childParams). Executions it starts are new, in those
 * trees or trees of their own. Inputs that find their executions through an index (an event:
 * the subscriptions; an activation: the job queues) name what that index answers now. A flow's
 * concurrency slots reach further (concurrency.ts: an end starts the next queued start, a start
 * cancels the oldest holder): those executions never leave memory, and the step names them (Step.reach).
 */
import { jobTarget, residentReads, type JobReads } from '../../state/job-queues.js';
import type { WfxState } from '../../state/state.js';
import { subscriptionsFor } from '../../state/subscriptions.js';
import type { StepInput } from './index.js';
import { jobsToTake } from './jobs.js';

/**
 * The ids of the executions `input`, decided at `now` on `state`, reads or changes (see the top
 * of this file). `reads` answers for cold executions (an activation names the cold jobs it
 * would take, by their summaries); by default every execution is resident.
 */
export function touchedBy(
  state: WfxState,
  input: StepInput,
  now: Date,
  reads: JobReads = residentReads(state),
): readonly string[] {
  switch (input.kind) {
    case 'start':
      return parentsOf([input.request]);
    case 'start.batch':
      return parentsOf(input.requests);
    case 'continue':
      return input.ids.slice(input.from);
    case 'set.aside':
    case 'cancel':
    case 'move':
    case 'answer':
    case 'timer':
    case 'work.done':
    case 'work.failed':
    case 'work.log':
      return [input.instanceId];
    case 'retry':
      return [input.instanceId, ...input.archived.keys()];
    case 'replay':
      return [input.original.processInstanceId];
    case 'event':
      return subscriptionsFor(state, input.organization, input.eventType, input.correlationKey).map(
        (s) => s.instanceId,
      );
    case 'thrown.deliver': {
      const { organization, eventType, correlationKey } = input.event;
      return subscriptionsFor(state, organization, eventType, correlationKey).map((s) => s.instanceId);
    }
    case 'kept.consume':
      return [input.sub.instanceId];
    case 'job.activate': {
      const { req, actions } = input;
      return jobsToTake(state, reads, req.organization, req.domain, actions, req.maxJobs, now);
    }
    case 'job.complete':
    case 'job.fail':
    case 'job.heartbeat':
    case 'job.release': {
      const ref = jobTarget(input.req.key);
      return ref ? [ref.instanceId] : [];
    }
    case 'bulk.chunk': {
      const lane = state.bulks[input.bulkId]?.lanes[String(input.lane)];
      return lane ? lane.ids.slice(input.from, input.from + input.count) : [];
    }
    case 'sweep':
    case 'thrown.forget':
    case 'thrown.passed':
    case 'bulk.create':
    case 'bulk.select':
    case 'bulk.complete':
    case 'bulk.fail':
    case 'bulk.cancel':
      return [];
  }
}

/** The parents that starts with one name (a child's start changes its parent). */
function parentsOf(requests: readonly { readonly parentInstanceId?: string | null }[]): string[] {
  const ids: string[] = [];
  for (const r of requests) if (r.parentInstanceId) ids.push(r.parentInstanceId);
  return ids;
}
