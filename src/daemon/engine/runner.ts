/**
 * The one runner of steps: runs a step (step/index.ts) inside one store transaction, so
 * concurrent operations never interleave inside an execution, waits until its records are
 * durable, then hands its effects to the executor (effects.ts). Nothing else writes the
 * engine's records.
 */
import { WfxError } from '../../shared/errors.js';
import type { Executions } from '../state/executions.js';
import type { WfxRecord } from '../state/records.js';
import type { WfxState } from '../state/state.js';
import type { DurableStore, Transaction } from '../store/store.js';
import type { ExecutionArchive } from './archive.js';
import type { Effects } from './effects.js';
import type { EngineObserver } from '../observe/engine-observer.js';
import { touchedBy } from './step/touched.js';
import { touchCheck } from './touch-check.js';
import {
  runStep,
  type BegunStep,
  type StepAnswer,
  type StepContext,
  type StepInput,
  type StepResult,
} from './step/index.js';

const NONE: readonly string[] = [];

/** Takes a begun step's durability, to wait for before its answer leaves (StepRunner.run). */
export type HandOff = (durable: Promise<unknown>) => void;

/** What a StepRunner needs. */
export interface StepRunnerOptions {
  readonly state: WfxState;
  /** The seam before the executions: the trees a step names are ensured before it begins. */
  readonly executions: Executions;
  /** Tests: a step that writes to an execution its input did not name throws (touch-check.ts). */
  readonly checkTouched?: boolean | undefined;
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly ctx: StepContext;
  readonly now: () => Date;
  readonly archive: Pick<ExecutionArchive, 'oneStep'>;
  readonly effects: Effects;
  /** True once the engine stops: no step starts. */
  readonly closed: () => boolean;
  /** Tracks a step until it settles, so close() can wait for it. */
  readonly track: <T>(work: Promise<T>) => Promise<T>;
  /** Told how long each step took to become durable (metrics). */
  readonly observe?: Pick<EngineObserver, 'committed'> | undefined;
}

/** The one runner of steps (see the top of this file). */
export class StepRunner {
  constructor(private readonly options: StepRunnerOptions) {}

  /**
   * Runs `input` as one step at `now` and resolves with its answer once its records are durable
   * and its effects carried out. Rejects with SERVICE_UNAVAILABLE once the engine stops, and
   * with what the step threw (a catalogue error, nothing changed).
   */
  step<I extends StepInput>(input: I, now: Date = this.options.now()): Promise<StepAnswer<I>> {
    if (this.options.closed()) return Promise.reject(new WfxError('SERVICE_UNAVAILABLE', 'the engine is stopping'));
    let begun: BegunStep<StepAnswer<I>>;
    try {
      const ids = this.named(input, now);
      const loading = this.options.executions.ensure(ids);
      // Resident (always, for now): begun at once, as a caller that reads the state after expects.
      if (loading !== null) return loading.then(() => this.step(input, now));
      begun = this.beginWith(input, now, ids);
    } catch (err) {
      return Promise.reject(err);
    }
    return begun.done;
  }

  /**
   * `step`; with `handOff`, resolves as soon as the step is begun (its executions read back
   * first) with its answer, and hands `handOff` its durability with its effects carried out: for
   * a caller with something of its own to make durable meanwhile (api/durable-reply.ts).
   */
  async run<I extends StepInput>(input: I, handOff?: HandOff): Promise<StepAnswer<I>> {
    if (!handOff) return this.step(input);
    const now = this.options.now();
    for (;;) {
      if (this.options.closed()) throw new WfxError('SERVICE_UNAVAILABLE', 'the engine is stopping');
      const ids = this.named(input, now);
      const loading = this.options.executions.ensure(ids);
      if (loading === null) {
        const begun = this.beginWith(input, now, ids);
        handOff(begun.done);
        return begun.answer;
      }
      await loading;
    }
  }

  /**
   * Runs `input` as one step now (synchronously: its answer is known on return) and carries out
   * its effects once durable. Throws what the step threw. The caller checks the engine runs, and
   * that the executions the step names are resident (an Error, a defect, when they are not).
   */
  begin<I extends StepInput>(input: I, now: Date = this.options.now()): BegunStep<StepAnswer<I>> {
    const ids = this.named(input, now);
    if (this.options.executions.ensure(ids) !== null)
      throw new Error(`a ${input.kind} step begun before its executions were resident`);
    return this.beginWith(input, now, ids);
  }

  /** What `input` names (touchedBy): nothing need be named while every execution is resident, unless checked. */
  private named(input: StepInput, now: Date): readonly string[] {
    const { executions, checkTouched, state } = this.options;
    return executions.allResident && !checkTouched ? NONE : touchedBy(state, input, now, executions);
  }

  /** `begin` once executions `ids` (named's) are resident. */
  private beginWith<I extends StepInput>(input: I, now: Date, ids: readonly string[]): BegunStep<StepAnswer<I>> {
    const { state, ctx } = this.options;
    const t0 = this.options.observe ? performance.now() : 0;
    const tx = this.options.store.transact(() => {
      const result = this.options.checkTouched
        ? runStep(state, ctx, now, input, (draft, apply) => touchCheck(draft, input.kind, ids, apply))
        : runStep(state, ctx, now, input);
      return { result, records: result.records, json: result.json, commit: result.commit };
    }, this.options.archive.oneStep);
    return { answer: tx.result.answer, done: this.options.track(this.afterDurable(tx, t0)) };
  }

  private async afterDurable<T>(tx: Transaction<StepResult<T>, WfxRecord>, t0: number): Promise<T> {
    const result = tx.result;
    // Before any other step: the log lines this one wrote end here (streamed once durable).
    const logsUpTo = this.options.effects.logMarks(result.touched);
    this.options.executions.touched(result.touched);
    await tx.durable;
    this.options.observe?.committed((performance.now() - t0) / 1000, tx.records.length);
    this.options.effects.afterDurable(tx, logsUpTo, result.effects);
    return result.answer;
  }
}
