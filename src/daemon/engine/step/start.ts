/**
 * The step's inputs that start, continue and end executions: a start (one, or a trigger's
 * batch with its own records), a continuation of executions left for a later step (a restart,
 * a spent budget), an execution set aside, a cancel.
 */
import { errorMessage, isWfxError, WfxError } from '../../../shared/errors.js';
import type { WfxRecord } from '../../state/records.js';
import { LiveCounts } from '../../state/live-counts.js';
import { STATE, STATUS, type Execution } from '../../state/state.js';
import { nodeKey } from '../keys.js';
import { overLimits } from '../limits.js';
import { runningNow } from '../queries.js';
import type { StartRequest } from './context.js';
import { admit, admitStarts } from './admit.js';
import { launchPlaced, placeStart } from './concurrency.js';
import { resolveStart } from './start-params.js';
import type { Step } from './step.js';
import { execution } from '../../state/executions.js';

/** The inputs of this file (index.ts, StepInput). */
export type StartInput =
  /**
   * Starts an execution at its startEvent and runs it as far as it goes. Throws, before
   * anything changes, what resolveStart throws, EXECUTION_LIMIT_EXCEEDED and ORG_RATE_EXCEEDED.
   */
  | { readonly kind: 'start'; readonly request: StartRequest }
  /**
   * Starts several executions, then writes `finalize`'s records (what a trigger records of
   * them) in the same step: a crash leaves all of it or none. Requests that cannot start are
   * skipped, and given to `finalize` with their error, in order.
   */
  | {
      readonly kind: 'start.batch';
      readonly requests: readonly StartRequest[];
      readonly finalize: (started: readonly Execution[], refused: readonly RefusedStart[]) => WfxRecord[];
    }
  /**
   * Runs the active nodes of executions `ids[from..]` (a restart, or a deferred step), as many
   * as the budget lets (at most `maxRuns` node runs): answers the index it stopped at.
   */
  | { readonly kind: 'continue'; readonly ids: readonly string[]; readonly from: number; readonly maxRuns?: number }
  /**
   * Fails execution `instanceId`, if it runs, with INTERNAL_ERROR and `message`: a restart's
   * step that could not run it threw before it changed anything.
   */
  | { readonly kind: 'set.aside'; readonly instanceId: string; readonly message: string }
  /** Cancels a running execution (throws INSTANCE_NOT_RUNNING when it no longer runs). */
  | { readonly kind: 'cancel'; readonly instanceId: string; readonly reason: string };

/** What each input of this file answers. */
export interface StartAnswers {
  start: Execution;
  'start.batch': Execution[];
  continue: number;
  'set.aside': void;
  cancel: void;
}

/** A start of a batch that cannot start, and why. */
export interface RefusedStart {
  readonly req: StartRequest;
  readonly error: WfxError;
}

/** Starts an execution (its flow resolved, its organization's limit checked) and runs it as far as it goes. */
export function start(s: Step, request: StartRequest): Execution {
  const params = resolveStart(s.state, s.ctx, request);
  admit(s, params.organization, 1);
  const placement = placeStart(s, params);
  admitStarts(s, params.organization, 1);
  return launchPlaced(s, params, placement);
}

/**
 * Starts each request that can start (resolved and admitted first, all of them, before any
 * record), then writes `finalize`'s records.
 */
export function startBatch(s: Step, input: Extract<StartInput, { kind: 'start.batch' }>): Execution[] {
  const refused: RefusedStart[] = [];
  const admitted = new Map<string, number>();
  const requests: StartRequest[] = [];
  const params = input.requests.flatMap((req) => {
    try {
      const p = resolveStart(s.state, s.ctx, req);
      const n = (admitted.get(p.organization) ?? 0) + 1;
      admit(s, p.organization, n);
      admitStarts(s, p.organization, 1);
      admitted.set(p.organization, n);
      requests.push(req);
      return [p];
    } catch (err) {
      refused.push({
        req,
        error: err instanceof WfxError ? err : new WfxError('INTERNAL_ERROR', errorMessage(err), { cause: err }),
      });
      return [];
    }
  });
  // Placed one by one as they launch: each sees the slots the ones before it took.
  const started = params.flatMap((p, i) => {
    try {
      return [launchPlaced(s, p, placeStart(s, p))];
    } catch (err) {
      if (!isWfxError(err, 'CONCURRENCY_LIMIT_REACHED')) throw err;
      refused.push({ req: requests[i]!, error: err });
      return [];
    }
  });
  for (const record of input.finalize(started, refused)) s.emit(record);
  return started;
}

/** Continues executions `ids[from..]` until the budget is spent; answers where it stopped. */
export function continueExecutions(s: Step, input: Extract<StartInput, { kind: 'continue' }>): number {
  if (input.maxRuns !== undefined) s.limitRuns(input.maxRuns);
  const { ids } = input;
  let head = input.from;
  while (head < ids.length && !s.spent) {
    const inst = execution(s.state, ids[head++]!);
    if (inst) continueExecution(s, inst);
  }
  return head;
}

/** Runs the nodes of `inst` that are active but not yet run (after a restart, or a deferred step). */
function continueExecution(s: Step, inst: Execution): void {
  if (inst.stateCd !== STATE.RUNNING) return;
  s.touched.add(inst.processInstanceId);
  // An execution that holds more than its limits allow (left so by an earlier version, or
  // by limits lowered since) fails here rather than run on.
  const over = overLimits(inst, s.ctx.limits, LiveCounts.of(s.state));
  if (over) {
    s.finish(inst, STATE.FAILED, over.message, { code: over.code, message: over.message, nodeId: null });
    s.drain();
    return;
  }
  for (const ni of Object.values(inst.nodes)) {
    if (ni.statusCd === STATUS.ACTIVE && !s.ctx.isWorking(nodeKey(inst.processInstanceId, ni.id)))
      s.queueActive(inst, ni);
  }
  s.drain();
}

/** Fails the execution with INTERNAL_ERROR (see StartInput). */
export function setAside(s: Step, id: string, message: string): void {
  const inst = execution(s.state, id);
  if (!inst || inst.stateCd !== STATE.RUNNING) return;
  s.touched.add(id);
  s.finish(inst, STATE.FAILED, message, { code: 'INTERNAL_ERROR', message, nodeId: null });
  s.drain();
}

/** Cancels a running execution: every active or waiting node is cancelled. */
export function cancel(s: Step, id: string, reason: string): void {
  const inst = runningNow(s.state, id);
  s.touched.add(inst.processInstanceId);
  s.finish(inst, STATE.CANCELLED, reason);
  s.drain(); // a queued start its slot went to runs on
}
