/**
 * The step as a function: (state, context, input) → answer, records and effects. Every
 * decision of the engine is an input here. The step decides on a draft of the state
 * (state/draft/): each record it writes is applied to the draft (the reducer,
 * state/records.ts), so later decisions of the same step see it, and the state it was given is
 * left as it was. The runner (engine/runner.ts) journals the records in one store transaction,
 * commits the draft to the live state once, and carries out the effects once durable.
 */
import { applyRecord, coalesceNodeRuns, type WfxRecord } from '../../state/records.js';
import { StateDraft } from '../../state/draft/state-draft.js';
import type { WfxState } from '../../state/state.js';
import { answer, type AnswerInput } from './answers.js';
import {
  applyChunk,
  cancelBulk,
  completeBulk,
  createBulk,
  failBulk,
  selectLanes,
  type BulkAnswers,
  type BulkInput,
} from './bulk.js';
import type { StepContext, StepEffect } from './context.js';
import {
  consumeKept,
  deliverEvent,
  deliverThrown,
  forgetThrown,
  passedThrown,
  type EventAnswers,
  type EventInput,
} from './events.js';
import {
  activateJobs,
  completeJob,
  extendJobLock,
  failJob,
  releaseJob,
  type JobAnswers,
  type JobInput,
} from './jobs.js';
import { moveExecution, type MoveAnswers, type MoveInput } from './move.js';
import {
  cancel,
  continueExecutions,
  setAside,
  start,
  startBatch,
  type StartAnswers,
  type StartInput,
} from './start.js';
import { replay, retry, type RepairAnswers, type RepairInput } from './repair.js';
import { Step } from './step.js';
import { sweepExpired, type SweepInput } from './sweeps.js';
import { fireTimer, type TimerInput } from './timers.js';
import { workDone, workFailed, workLog, type WorkInput } from './work.js';

/** What the step takes: each kind is documented where it is decided (start.ts, answers.ts, ...). */
export type StepInput =
  | StartInput
  | RepairInput
  | AnswerInput
  | EventInput
  | WorkInput
  | TimerInput
  | SweepInput
  | JobInput
  | MoveInput
  | BulkInput;

/** What each kind of input answers (the caller's result, once the step is durable). */
interface Answers extends StartAnswers, RepairAnswers, EventAnswers, JobAnswers, MoveAnswers, BulkAnswers {
  answer: void;
  'work.done': void;
  'work.failed': void;
  'work.log': void;
  timer: void;
  sweep: number;
}

/** What input `I` answers. */
export type StepAnswer<I extends StepInput> = Answers[I['kind']];

/** Runs `input` as one step and resolves with its answer once durable (engine/runner.ts, StepRunner.step). */
export type RunStep = <I extends StepInput>(input: I, now?: Date) => Promise<StepAnswer<I>>;

/** A step begun (engine/runner.ts, StepRunner.begin): its answer, known at once, and its durability with its effects carried out. */
export interface BegunStep<T> {
  readonly answer: T;
  readonly done: Promise<T>;
}

/** What one step did: its answer, the records it wrote (in order, applied to its draft), the effects it asks for. */
export interface StepResult<T> {
  readonly answer: T;
  readonly records: readonly WfxRecord[];
  readonly effects: readonly StepEffect[];
  /** The executions it changed (their log lines are streamed once it is durable). */
  readonly touched: ReadonlySet<string>;
  /**
   * Each record's JSON as it was written, before it was applied (a later record of the step may
   * change an object the reducer kept of it); null for a node run, which the store may merge
   * with the next (records.ts, coalesceNodeRuns: the reducer keeps none of its objects).
   */
  readonly json: readonly (string | null)[];
  /** Hands the step's draft to the state it was given: once, when its records are journaled (the store's transaction). */
  readonly commit: () => void;
}

/**
 * A check of each record a step writes, before it is applied to the draft (engine/touch-check.ts):
 * `apply` checks then applies, `reach` is told each execution a thrown event wakes (Step.reach).
 */
export type StepCheck = (
  draft: WfxState,
  apply: (record: WfxRecord) => void,
) => { readonly apply: (record: WfxRecord) => void; readonly reach: (instanceId: string) => void };

/**
 * Runs one step: decides `input` on a draft of `state` at `now` (`state` is not changed, and
 * may be deeply frozen). A throw leaves nothing changed. `check`: see StepCheck.
 */
export function runStep<I extends StepInput>(
  state: WfxState,
  ctx: StepContext,
  now: Date,
  input: I,
  check?: StepCheck,
): StepResult<StepAnswer<I>> {
  const draft = new StateDraft(state);
  const json: Array<string | null> = [];
  const applied = applyingTo(draft.state, json);
  const checked = check?.(draft.state, applied);
  const s = new Step(draft.state, ctx, now, checked?.apply ?? applied);
  if (checked) s.reach = checked.reach;
  const answer = decide(s, input) as StepAnswer<I>;
  const records = s.records;
  const commit = committing(draft, records);
  return { answer, records, json, effects: s.effects, touched: s.touched, commit };
}

/**
 * Applies a record to `draft`, its JSON pushed to `json` first (StepResult.json). Made apart
 * from runStep, so that no closure of it keeps the draft.
 */
function applyingTo(draft: WfxState, json: Array<string | null>): (record: WfxRecord) => void {
  return (record) => {
    json.push(coalesceNodeRuns.candidate(record) ? null : JSON.stringify(record));
    applyRecord(draft, record);
  };
}

/**
 * The commit of `draft` with `records`, once; the draft let go after it. A step's result is
 * kept until it is durable, and a draft kept as long would outlive a scavenge for nothing.
 */
function committing(draft: StateDraft, records: readonly WfxRecord[]): () => void {
  let left: StateDraft | null = draft;
  return () => {
    left?.commit(records);
    left = null;
  };
}

/** The part of the step that decides `input`. */
function decide(s: Step, input: StepInput): unknown {
  switch (input.kind) {
    case 'start':
      return start(s, input.request);
    case 'start.batch':
      return startBatch(s, input);
    case 'continue':
      return continueExecutions(s, input);
    case 'set.aside':
      return setAside(s, input.instanceId, input.message);
    case 'cancel':
      return cancel(s, input.instanceId, input.reason);
    case 'retry':
      return retry(s, input);
    case 'replay':
      return replay(s, input);
    case 'answer':
      return answer(s, input);
    case 'event':
      return deliverEvent(s, input);
    case 'kept.consume':
      return consumeKept(s, input.messageId, input.sub);
    case 'thrown.deliver':
      return deliverThrown(s, input.event);
    case 'thrown.forget':
      return forgetThrown(s);
    case 'thrown.passed':
      return passedThrown(s, input.id);
    case 'work.done':
      return workDone(s, input);
    case 'work.failed':
      return workFailed(s, input);
    case 'work.log':
      return workLog(s, input);
    case 'timer':
      return fireTimer(s, input);
    case 'sweep':
      return sweepExpired(s, input);
    case 'job.activate':
      return activateJobs(s, input);
    case 'job.complete':
      return completeJob(s, input.req);
    case 'job.fail':
      return failJob(s, input.req);
    case 'job.heartbeat':
      return extendJobLock(s, input.req);
    case 'job.release':
      return releaseJob(s, input.req);
    case 'move':
      return moveExecution(s, input.instanceId, input.toVersion, input.by);
    case 'bulk.create':
      return createBulk(s, input);
    case 'bulk.select':
      return selectLanes(s, input);
    case 'bulk.chunk':
      return applyChunk(s, input);
    case 'bulk.complete':
      return completeBulk(s, input.bulkId);
    case 'bulk.fail':
      return failBulk(s, input);
    case 'bulk.cancel':
      return cancelBulk(s, input);
  }
}

export type { FlowScope, LaunchParams, StartRequest, StepContext, StepEffect, WorkOrder } from './context.js';
export type { EventOutcome } from './events.js';
export { ReadAgain } from './repair.js';
export type { RefusedStart } from './start.js';
export type { MoveResult } from './move.js';
