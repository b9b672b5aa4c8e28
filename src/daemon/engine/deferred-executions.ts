/**
 * Executions whose step ran out of budget (StepEffect `defer`), continued in turn: as many as
 * one step's budget runs, one step per turn of the event loop, so requests are served between
 * and an execution that spreads (a flow calling itself) cannot fill a turn with steps.
 */
import type { BegunStep, StepInput } from './step/index.js';

/**
 * Nodes one step continuing deferred executions runs: a fraction of a step's own budget, so a
 * flow that spreads without waiting (one that calls itself) holds the event loop only briefly
 * in each turn, between which requests are answered.
 */
const DEFERRED_RUNS = 1000;

/** What DeferredExecutions needs from the engine. */
export interface DeferredOptions {
  /** Runs a step now, its answer known on return (runner.ts, StepRunner.begin). */
  readonly begin: (input: StepInput) => BegunStep<unknown>;
  /** True once the engine stops: deferred executions are not continued. */
  readonly closed: () => boolean;
  readonly onError: (err: unknown, what: string) => void;
}

/** The executions left for a later step, continued oldest first (see the top of this file). */
export class DeferredExecutions {
  /** Executions to continue from `head` on. */
  private ids: string[] = [];
  private head = 0;
  private scheduled = false;

  constructor(private readonly options: DeferredOptions) {}

  /** Leaves execution `id` to be continued (call `schedule` once a plan's are all added). */
  add(id: string): void {
    this.ids.push(id);
  }

  /** Continues the executions added, in a later turn of the event loop. */
  schedule(): void {
    if (this.scheduled || this.head >= this.ids.length) return;
    this.scheduled = true;
    setImmediate(() => this.continue());
  }

  /** One step that continues deferred executions, oldest first, until its budget is spent. */
  private continue(): void {
    this.scheduled = false;
    if (this.options.closed()) return;
    const ids = this.ids;
    let head = this.head;
    // The step runs synchronously: its answer, where it stopped, is known once begin() returns.
    try {
      const begun = this.options.begin({ kind: 'continue', ids, from: head, maxRuns: DEFERRED_RUNS });
      head = begun.answer as number;
      begun.done.catch((err: unknown) => this.options.onError(err, 'continuing deferred executions'));
    } catch (err) {
      this.options.onError(err, 'continuing deferred executions');
    }
    if (head >= ids.length) {
      // A fresh list rather than one kept and cleared (docs/decisions/005-no-long-lived-growing-collections.md).
      if (this.ids === ids) this.ids = [];
      this.head = 0;
    } else this.head = head;
    this.schedule();
  }
}
