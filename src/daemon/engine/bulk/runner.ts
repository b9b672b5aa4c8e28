/**
 * What carries running bulk operations forward on this daemon: one chunk at a time, in turn
 * over the operations (so one organization's cannot hold back another's), each chunk one step
 * (step/bulk.ts), chunks spaced so that all of them together apply at most the daemon's rate
 * (`--bulk-rate`). Only the partitions this daemon serves are worked: a lane's partition held
 * elsewhere is its holder's. Nothing here is durable: after a restart the lanes' progress in the
 * state says where each operation resumes.
 */
import { errorMessage, isWfxError } from '../../../shared/errors.js';
import { bulkApplied, type BulkOperation } from '../../state/bulk.js';
import type { WfxState } from '../../state/state.js';
import type { RunStep } from '../step/index.js';
import { BULK_OPERATIONS, type BulkReads } from './operations.js';

/** Executions per second all bulk operations of a daemon apply together, unless told (`--bulk-rate`). */
export const DEFAULT_BULK_RATE = 500;

/** How often an idle runner looks for work another daemon gave it (an operation created there). */
const IDLE_LOOK_MS = 1000;

/** How long a chunk that failed waits before it is tried again. */
const RETRY_MS = 1000;

/** Failures in a row after which an operation is ended as FAILED with the last one's error. */
export const BULK_FAILURES_ALLOWED = 5;

/** Executions per chunk at `rate` per second: about ten chunks a second, at most 100 each. Pure. */
export function chunkSize(rate: number): number {
  return Math.max(1, Math.min(100, Math.ceil(rate / 10)));
}

/** What a BulkRunner needs. */
export interface BulkRunnerDeps {
  readonly state: WfxState;
  readonly step: RunStep;
  /** Executions per second, over every operation. */
  readonly rate: number;
  /** Whether this daemon works partition `p`'s lanes. */
  readonly serves: (partition: number) => boolean;
  /** The executions `bulk` selects in each partition this daemon serves, newest first (lanes not selected at creation). */
  readonly select: (bulk: BulkOperation) => Promise<ReadonlyMap<number, readonly string[]>>;
  /** What an operation's prepare may read, for `bulk` (`hold`: kept live until the chunk's step ran). */
  readonly reads: (bulk: BulkOperation, hold: (ids: readonly string[]) => void) => BulkReads;
  /** Makes the trees of executions `ids` resident (Executions.ensure): null when they are. */
  readonly ensure: (ids: readonly string[]) => Promise<void> | null;
  /** Keeps executions in the live state until the returned release (ExecutionArchive.hold). */
  readonly hold: (ids: readonly string[]) => () => void;
  readonly onError: (err: unknown, what: string) => void;
  readonly closed: () => boolean;
  /** Tracks work until it settles (the engine's close waits for it). */
  readonly track: <T>(work: Promise<T>) => Promise<T>;
}

/** One thing to do for an operation on this daemon. */
type Work =
  | { readonly kind: 'chunk'; readonly bulk: BulkOperation; readonly lane: number; readonly from: number }
  | { readonly kind: 'select'; readonly bulk: BulkOperation }
  | { readonly kind: 'complete'; readonly bulk: BulkOperation };

/** Carries running bulk operations forward (see the top of this file). */
export class BulkRunner {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /** The operation the last turn worked on: the next turn starts after it. */
  private last = '';
  /** Failures in a row, by operation (cleared by a turn that works). */
  private readonly failures = new Map<string, number>();
  /** The look for work given by other daemons, once started. */
  private look: NodeJS.Timeout | null = null;
  private readonly chunk: number;

  constructor(private readonly deps: BulkRunnerDeps) {
    this.chunk = chunkSize(deps.rate);
  }

  /**
   * Takes a turn soon unless one is under way or planned (an operation created, cancelled, a
   * partition taken); the first call, once the engine has recovered, starts the look too.
   */
  kick(): void {
    if (this.deps.closed()) return;
    if (this.look === null) {
      this.look = setInterval(() => this.kick(), IDLE_LOOK_MS);
      this.look.unref();
    }
    if (this.busy || this.timer !== null) return;
    this.plan(0);
  }

  /** Stops: no turn starts after this (the one under way is tracked by the engine). */
  close(): void {
    if (this.look !== null) clearInterval(this.look);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private plan(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.busy = true;
      void this.deps
        .track(this.turn())
        .then((next) => {
          this.busy = false;
          if (next !== null && !this.deps.closed()) this.plan(next);
        })
        .catch((err: unknown) => {
          this.busy = false;
          this.deps.onError(err, 'a bulk operation');
        });
    }, ms);
    this.timer.unref();
  }

  /** Does one thing; answers in how many ms the next turn comes, or null when there is nothing to do. */
  private async turn(): Promise<number | null> {
    const work = this.next();
    if (work === null) return null;
    this.last = work.bulk.bulkId;
    const started = performance.now();
    let applied = 0;
    const bulkId = work.bulk.bulkId;
    try {
      applied = await this.carryOut(work);
      this.failures.delete(bulkId);
    } catch (err) {
      if (this.deps.closed()) return null;
      // An execution it names moved to another daemon while read: not a failure of the operation.
      if (isWfxError(err, 'PARTITION_MOVING')) return RETRY_MS;
      this.deps.onError(err, `bulk operation ${bulkId}: ${work.kind} (${errorMessage(err)})`);
      const failed = (this.failures.get(bulkId) ?? 0) + 1;
      this.failures.set(bulkId, failed);
      if (failed >= BULK_FAILURES_ALLOWED) {
        this.failures.delete(bulkId);
        const error = isWfxError(err)
          ? { code: err.code, message: err.message }
          : { code: 'INTERNAL_ERROR' as const, message: errorMessage(err) };
        await this.deps.step({ kind: 'bulk.fail', bulkId, error }).catch(() => undefined);
      }
      return RETRY_MS;
    }
    // Spaced so that the chunks of every operation together keep to the rate.
    return Math.max(0, (applied * 1000) / this.deps.rate - (performance.now() - started));
  }

  private async carryOut(work: Work): Promise<number> {
    const { step } = this.deps;
    const bulkId = work.bulk.bulkId;
    switch (work.kind) {
      case 'select': {
        const lanes = await this.deps.select(work.bulk);
        await step({ kind: 'bulk.select', bulkId, lanes: this.served(lanes) });
        return 0;
      }
      case 'complete':
        await step({ kind: 'bulk.complete', bulkId });
        return 0;
      case 'chunk': {
        const op = BULK_OPERATIONS[work.bulk.operation];
        const lane = work.bulk.lanes[String(work.lane)]!;
        const ids = lane.ids.slice(work.from, work.from + this.chunk);
        if (!op.prepare) {
          if (!this.deps.serves(work.lane)) return 0;
          return step({ kind: 'bulk.chunk', bulkId, lane: work.lane, from: work.from, count: this.chunk, pre: null });
        }
        // What prepare reads stays as read until the step: held in the live state meanwhile.
        const releases = [this.deps.hold(ids)];
        try {
          // A cold execution is read back before prepare reads it (its failed children with it).
          const reading = this.deps.ensure(ids);
          if (reading !== null) await reading;
          const pre = await op.prepare(
            this.deps.reads(work.bulk, (more) => releases.push(this.deps.hold(more))),
            ids,
          );
          // Checked in the turn the step runs: a partition given up meanwhile has left the state,
          // and its executions would read as ended here. Its next holder applies the lane.
          if (!this.deps.serves(work.lane)) return 0;
          return await step({ kind: 'bulk.chunk', bulkId, lane: work.lane, from: work.from, count: this.chunk, pre });
        } finally {
          for (const release of releases) release();
        }
      }
    }
  }

  /** The lanes of `lanes` this daemon still serves (checked in the turn of the step that writes them). */
  private served(lanes: ReadonlyMap<number, readonly string[]>): Map<number, readonly string[]> {
    return new Map([...lanes].filter(([p]) => this.deps.serves(p)));
  }

  /** The next thing to do, taking the running operations in turn after the last one worked on. */
  private next(): Work | null {
    const running = Object.values(this.deps.state.bulks)
      .filter((b) => b.state === 'RUNNING')
      .sort((a, b) => (a.bulkId < b.bulkId ? -1 : 1));
    const after = running.findIndex((b) => b.bulkId > this.last);
    const order = after < 0 ? running : [...running.slice(after), ...running.slice(0, after)];
    for (const bulk of order) {
      const work = this.workOf(bulk);
      if (work) return work;
    }
    return null;
  }

  /** What this daemon has to do for `bulk`: a lane to select or advance, or (all lanes applied) its end. */
  private workOf(bulk: BulkOperation): Work | null {
    for (const lane of bulk.partitions) {
      if (!this.deps.serves(lane)) continue;
      const l = bulk.lanes[String(lane)];
      if (l === undefined) return { kind: 'select', bulk };
      if (l.next < l.ids.length) return { kind: 'chunk', bulk, lane, from: l.next };
    }
    // Its last lanes applied by other daemons, each before it saw the others'.
    return bulkApplied(bulk) ? { kind: 'complete', bulk } : null;
  }
}
