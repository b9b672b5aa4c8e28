/**
 * The engine's start after a restart: the live state as the store recovered it (snapshot and
 * journal) made whole again before any new step.
 */
import { errorMessage, isWfxError } from '../../shared/errors.js';
import { shareParsedStrings } from '../state/object-shapes.js';
import { ExecutionTable } from '../state/execution-table.js';
import { indexEventWait } from '../state/records/subscription-index.js';
import type { WalkRow } from '../state/execution-index/row.js';
import { FLAG_SLOT, FLAG_TRIGGERED, type WaitSummary } from '../state/execution-summary.js';
import { JobQueues } from '../state/job-queues.js';
import { LiveCounts } from '../state/live-counts.js';
import { noteTriggeredStart, noteTriggeredStartAt } from '../state/trigger-fires.js';
import { STATE, STATUS, type Execution, type WfxState } from '../state/state.js';
import { TaskIndex } from '../state/task-index.js';
import type { Effects } from './effects.js';
import type { RunStep } from './step/index.js';
import { execution, type ColdLive, type Executions } from '../state/executions.js';
import { FileRefs } from '../state/file-refs.js';
import { overLimits, type ExecutionLimits } from './limits.js';

/** What a recovery walk leaves to do. */
export interface Recovered {
  /** The resident running executions to continue, as recoverLiveState says. */
  readonly running: Execution[];
  /**
   * The cold running executions to continue (read them, then step them): those with an Active
   * node or nothing waiting. Whether one is over a limit needs its document: not decided here.
   */
  readonly coldRunning: string[];
  /** The cold finished executions, for the caller to queue for archiving (as a resident one is). */
  readonly coldFinished: string[];
  /**
   * The cold running executions that hold or wait for a concurrency slot: read back before
   * anything runs, since the slots' index reads only resident executions (concurrency-slots.ts).
   */
  readonly coldSlots: string[];
}

/**
 * In one walk over the live executions (with `only`: those, the derived indexes rebuilt for
 * all, as after a partition is taken while running): shares their parsed strings
 * (state/object-shapes.ts), rebuilds the derived indexes (subscriptions, waiting tasks, live
 * counts, job queues; the file index where the state holds one, which `only` adds to) and notes the triggered starts (state/trigger-fires.ts), so that no request pays for
 * a scan of its own; queues finished executions for archiving, and re-arms the timers and timer
 * boundary events of waiting and active nodes (overdue ones fire at once). Returns the running
 * executions to continue: those with active nodes (run again), those with nothing live
 * (settled: finished, or their join fired), and those `overLimit` names.
 *
 * `cold`: the live executions not resident, counted and their jobs queued from the directory's
 * rows (no document read; their event waits, tasks and timers stay the directory's); those to
 * continue and those finished are returned by id.
 */
export function recoverLiveState(
  state: WfxState,
  effects: Effects,
  only?: ReadonlySet<string>,
  /** A waiting execution over a limit (limits.ts) is continued too: the step fails it. */
  overLimit?: (inst: Execution) => unknown,
  cold?: ColdLive,
): Recovered {
  // The indexes are derived: rebuilt in the same walk (one pass over the executions, not several).
  state.subscriptions = {};
  state.concurrencySlots = undefined; // made on first use, once the cold slot holders are resident
  const tasks = TaskIndex.fresh(state);
  const counts = LiveCounts.building(state);
  const jobs = JobQueues.building(state);
  // Kept, not made again, for executions taken while running: the cold ones' entries stay.
  const held = FileRefs.held(state);
  const files = held === null || only !== undefined ? held : FileRefs.fresh(state);
  const running: Execution[] = [];
  let prev: Execution | null = null;
  for (const id of ExecutionTable.of(state).ids()) {
    const inst = execution(state, id);
    if (inst === undefined) continue;
    if (inst.triggeredBy !== undefined) noteTriggeredStart(state, inst);
    if (files !== null && (only === undefined || only.has(id))) files.add(inst);
    if (only && !only.has(id)) {
      indexWaits(state, inst, counts, jobs, tasks);
      continue;
    }
    shareParsedStrings(inst, id, prev);
    prev = inst;
    if (!effects.recovered(inst)) {
      indexWaits(state, inst, counts, jobs, tasks);
      continue;
    }
    // One pass over the nodes, no arrays: this runs for every waiting execution at a restart.
    let active = 0;
    let waiting = false;
    for (const id in inst.nodes) {
      const ni = inst.nodes[id]!;
      if (ni.statusCd === STATUS.ACTIVE) active++;
      else if (ni.statusCd !== STATUS.WAITING) continue;
      else {
        waiting = true;
        effects.recoveredWait(inst, ni);
        indexEventWait(state, inst, ni);
        // After shareParsedStrings: the index keeps the node's shared time.
        if (ni.wait?.kind === 'input') tasks.addNode(inst, ni);
        else if (ni.wait?.kind === 'job') jobs.put(inst, ni, ni.wait);
      }
      effects.armBoundaries(inst, ni.id);
    }
    counts.add(inst, active);
    if (active > 0 || !waiting || (overLimit !== undefined && overLimit(inst) !== null)) running.push(inst);
  }
  const coldRunning: string[] = [];
  const coldFinished: string[] = [];
  const coldSlots: string[] = [];
  indexCold(cold, counts, jobs, (r, rows) => {
    if ((r.flags & FLAG_TRIGGERED) !== 0) noteTriggeredStartAt(state, r.processId, r.environment, isoTime(r.startMs));
    const live = r.stateCd === STATE.RUNNING;
    if (live && (r.flags & FLAG_SLOT) !== 0) {
      const id = rows.idAt(r.slot);
      if (only === undefined || only.has(id)) coldSlots.push(id);
    }
    // Waiting with nothing Active: the directory answers for its waits; nothing to run.
    if (live && r.active === 0 && r.waits > 0) return;
    const id = rows.idAt(r.slot);
    if (only === undefined || only.has(id)) (live ? coldRunning : coldFinished).push(id);
  });
  tasks.built();
  counts.built(cold === undefined ? undefined : (id) => cold.stateOf(id));
  return { running, coldRunning, coldFinished, coldSlots };
}

/**
 * Counts the cold executions and queues their jobs, from the directory's rows (a walk over
 * them), `each` told every row too: what a recovery and a reindex do of the cold side.
 */
function indexCold(
  cold: ColdLive | undefined,
  counts: LiveCounts,
  jobs: JobQueues,
  each?: (r: Readonly<WalkRow>, rows: ColdLive) => void,
): void {
  if (cold === undefined) return;
  cold.flowTotals((org, processId, running, waitingOnly) => counts.addColdFlow(org, processId, running, waitingOnly));
  cold.walk((r) => {
    if (r.jobs > 0) queueColdJobs(r, cold.idAt(r.slot), cold.waitsAt(r.slot), jobs);
    counts.addCold(r, () => cold.idAt(r.slot));
    each?.(r, cold);
  });
}

/** The ISO time of `ms` (what a summary keeps of an ISO time a toISOString wrote); '' for none. */
function isoTime(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}

/**
 * Queues the job waits of cold live execution `id` (its directory row `r`, its `waits`), as the
 * walk does a resident one's (whatever its state). Its event waits and input tasks are the
 * directory's to answer for (WfxState.coldSubscriptions, coldTasks).
 */
function queueColdJobs(r: Readonly<WalkRow>, id: string, waits: readonly WaitSummary[], jobs: JobQueues): void {
  for (const w of waits)
    if (w.kind === 'job')
      // A summary keeps no job wait's start: the execution's orders the job list until it is read back.
      jobs.putAt(r.organization, w.domain, w.action, id, w.node, new Date(r.startMs).toISOString(), w.priority);
}

/** Indexes the waits of one live execution and counts it (the rest of a recovery left to its own). */
function indexWaits(state: WfxState, inst: Execution, counts: LiveCounts, jobs: JobQueues, tasks: TaskIndex): void {
  const live = inst.stateCd === STATE.RUNNING;
  for (const id in inst.nodes) {
    const ni = inst.nodes[id]!;
    if (ni.statusCd !== STATUS.WAITING) continue;
    if (live) indexEventWait(state, inst, ni);
    if (ni.wait?.kind === 'job') jobs.put(inst, ni, ni.wait);
  }
  counts.add(inst);
  tasks.addExecution(inst);
}

/**
 * The derived indexes (subscriptions, waiting tasks, live counts, job queues) made again from
 * the live executions, in one walk (after some left the state: a partition given up, whose
 * executions `left` names: the file index forgets them).
 */
export function reindexLiveState(state: WfxState, left: (instanceId: string) => boolean, cold?: ColdLive): void {
  FileRefs.held(state)?.drop(left);
  state.subscriptions = {};
  state.concurrencySlots = undefined; // made again on first use, without those that left
  const tasks = TaskIndex.fresh(state);
  const counts = LiveCounts.building(state);
  const jobs = JobQueues.building(state);
  for (const id of ExecutionTable.of(state).ids()) {
    const inst = execution(state, id);
    if (inst !== undefined) indexWaits(state, inst, counts, jobs, tasks);
  }
  indexCold(cold, counts, jobs); // the cold ones that stay, as at a start
  tasks.built();
  counts.built(cold === undefined ? undefined : (id) => cold.stateOf(id));
}

/** What continueRecovered needs from the engine. */
export interface Recovering {
  readonly step: RunStep;
  /** True once the store failed (its state cannot be trusted) or the engine stops. */
  readonly failed: () => boolean;
  readonly onError: (err: unknown, what: string) => void;
}

/**
 * The engine's start after a restart (Engine.recover): the walk over the resident executions
 * and the cold ones' directory rows (a lazy open left them unread: one timer armed at the
 * earliest of theirs), then what is left run: resident ones to continue, then the cold ones to
 * continue or archive, read back first.
 */
export async function recoverExecutions(
  state: WfxState,
  effects: Effects,
  executions: Executions,
  limits: ExecutionLimits,
  deps: Recovering,
): Promise<void> {
  const overLimit = (inst: Execution) => overLimits(inst, limits, null);
  const cold = executions.coldLive();
  const { running, coldRunning, coldFinished, coldSlots } = recoverLiveState(
    state,
    effects,
    undefined,
    overLimit,
    cold ?? undefined,
  );
  // A start with executions left unread: their fileIds are not known until read (file-refs.ts).
  executions.coldFilesUnread();
  effects.armColdDue();
  await readSlotHolders(state, executions, coldSlots);
  await continueRecovered(running, deps);
  const left = await resumeCold(state, effects, executions, { coldRunning, coldFinished }, deps);
  if (left !== null) throw left.error; // a start that cannot read them fails, as a store that cannot open
}

/**
 * Executions a store has just put into the state or its cache's directory (a partition taken
 * while running, Engine.adopt): resumed as after a restart, the indexes made again for all.
 * The cold ones it cannot read back yet are tried again later, until read or gone from here.
 */
export async function recoverTaken(
  state: WfxState,
  effects: Effects,
  executions: Executions,
  ids: readonly string[],
  limits: ExecutionLimits,
  deps: Recovering,
): Promise<void> {
  const over = (inst: Execution) => overLimits(inst, limits, null);
  const cold = executions.coldLive() ?? undefined;
  const { running, coldSlots, ...left } = recoverLiveState(state, effects, new Set(ids), over, cold);
  executions.coldFilesUnread();
  effects.armColdDue();
  await readSlotHolders(state, executions, coldSlots);
  await continueRecovered(running, deps);
  await resumeTaken(state, effects, executions, left, deps);
}

/**
 * Reads back the cold executions that hold or wait for a concurrency slot (Recovered.coldSlots),
 * then has the slots' index made again with them: they stay resident from then on.
 */
async function readSlotHolders(state: WfxState, executions: Executions, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await executions.ensure(ids);
  state.concurrencySlots = undefined;
}

/** What resumeCold could not read back, and the first error it met. */
type Unread = Pick<Recovered, 'coldRunning' | 'coldFinished'> & { readonly error: unknown };

/** Cold executions read back at once by resumeCold: a read that fails leaves only its slice behind. */
const RESUME_SLICE = 500;
/** Waits before resumeTaken tries again: longer each time, up to the last. */
const RESUME_RETRY_MS = [1_000, 2_000, 5_000, 10_000, 30_000] as const;

/**
 * resumeCold for executions a partition taken brought: those it cannot read back yet (the
 * database away a moment) are tried again after a wait, longer each time, until read, given up
 * to another daemon, or the engine stops. A start has no such patience: it fails instead.
 */
export async function resumeTaken(
  state: WfxState,
  effects: Effects,
  executions: Executions,
  taken: Pick<Recovered, 'coldRunning' | 'coldFinished'>,
  deps: Recovering,
  tries = 0,
): Promise<void> {
  const unread = await resumeCold(state, effects, executions, taken, deps);
  if (unread === null) return;
  deps.onError(unread.error, 'reading back executions taken; tried again later');
  const again = (): void => {
    if (deps.failed()) return;
    // Those given up since are their next holder's; one read back meanwhile still runs on here.
    const here = (ids: readonly string[]) =>
      ids.filter((id) => executions.get(id) !== undefined || executions.coldSummary(id) !== undefined);
    const left = { coldRunning: here(unread.coldRunning), coldFinished: here(unread.coldFinished) };
    resumeTaken(state, effects, executions, left, deps, tries + 1).catch((err: unknown) =>
      deps.onError(err, 'resuming executions taken'),
    );
  };
  setTimeout(again, RESUME_RETRY_MS[Math.min(tries, RESUME_RETRY_MS.length - 1)]).unref();
}

/**
 * What a recovery walk left of cold executions: those finished, read back and queued for
 * archiving; those to continue, read back and stepped, a slice at a time (each resumed as soon
 * as it is read: a cache past its capacity evicts what waits). Each tree is read on its own, so
 * one that cannot be read holds back no other. Returns those it could not read (null: none);
 * one that moved to another daemon while read is not among them.
 */
export async function resumeCold(
  state: WfxState,
  effects: Effects,
  executions: Executions,
  { coldRunning, coldFinished }: Pick<Recovered, 'coldRunning' | 'coldFinished'>,
  deps: Recovering,
): Promise<Unread | null> {
  const finished = new Set(coldFinished);
  const all = [...coldFinished, ...coldRunning];
  const failed = new Set<string>();
  let error: unknown = null;
  for (let i = 0; i < all.length && !deps.failed(); i += RESUME_SLICE) {
    const slice = all.slice(i, i + RESUME_SLICE);
    // Reads of one turn go together (the store batches them); each settles on its own.
    const read = (id: string) =>
      executions.ensure([id])?.catch((err: unknown) => {
        if (isWfxError(err, 'PARTITION_MOVING')) return; // its next holder's now
        error ??= err;
        failed.add(id);
      });
    await Promise.all(slice.map(read));
    const more: Execution[] = [];
    for (const id of slice) {
      const inst = failed.has(id) ? undefined : execution(state, id);
      if (inst === undefined) continue;
      if (finished.has(id))
        effects.recovered(inst); // queued for archiving
      else more.push(inst);
    }
    await continueRecovered(more, deps);
  }
  if (failed.size === 0) return null;
  const left = (ids: readonly string[]) => ids.filter((id) => failed.has(id));
  return { coldRunning: left(coldRunning), coldFinished: left(coldFinished), error };
}

/**
 * Runs what is left of each execution after a restart, one step each. A step that cannot run
 * one (it throws before changing anything) sets it aside, failed with INTERNAL_ERROR, and
 * recovery goes on with the others: one execution never keeps a daemon from coming back. A
 * failed store (the step threw after it changed the state) stops recovery.
 */
export async function continueRecovered(running: readonly Execution[], deps: Recovering): Promise<void> {
  for (const inst of running) {
    const id = inst.processInstanceId;
    try {
      await deps.step({ kind: 'continue', ids: [id], from: 0 });
    } catch (err) {
      if (deps.failed()) throw err;
      deps.onError(err, `recovery: execution ${id} could not run on; it is failed`);
      const message = `the execution could not run on after a restart: ${errorMessage(err)}`;
      await deps.step({ kind: 'set.aside', instanceId: id, message });
    }
  }
}
