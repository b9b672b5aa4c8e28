/**
 * The one seam before the executions (decision 068, step 3): what reads an execution by id goes
 * through here, so that a later step can keep most of them on disk. `execution` reads one that
 * is resident (steps and reducers, which run synchronously); `Executions.ensure` makes whole
 * trees resident before a step or an API read, reading them from the cold side (`ColdExecutions`:
 * none yet outside tests, so it never waits there).
 */
import { isWfxError, WfxError } from '../../shared/errors.js';
import { ownEntry } from '../../shared/json-object.js';
import type { WalkRow } from './execution-index/row.js';
import type { ExecutionSummary, WaitSummary } from './execution-summary.js';
import { FileRefs, type FileRefsHolder } from './file-refs.js';
import type { Execution } from './execution-document.js';
import { ExecutionTable } from './execution-table.js';

/** What holds the resident executions (WfxState's `instances`): typed here so that the derived indexes state.ts names can import this module. */
export interface ExecutionsHolder {
  readonly instances: Readonly<Record<string, Execution | undefined>>;
  /**
   * A step's draft only (state/draft/): execution `id` of its base, copied into the draft's
   * `instances` on first read. Absent on the live state.
   */
  readonly readThrough?: (id: string) => Execution | undefined;
}

/**
 * Execution `id` when it is resident (live, not archived), else undefined. Pure, but for a
 * step's draft, which copies an execution of its base on first read.
 */
export function execution(state: ExecutionsHolder, id: string): Execution | undefined {
  return ownEntry(state.instances, id) ?? state.readThrough?.(id);
}

/** The id of the tree `inst` belongs to: its root's (callProcess starts included, see Execution.root). */
export function treeOf(inst: Execution): string {
  return inst.root ?? inst.processInstanceId;
}

/**
 * Live executions kept off the resident state, whole trees at a time (decision 068, step 7):
 * read back when a step or a read names them.
 */
export interface ColdExecutions {
  /** How many executions are cold. */
  readonly size: number;
  /** The cold executions of the tree execution `id` belongs to (none: empty). Synchronous. */
  coldTree(id: string): readonly string[];
  /** Reads cold executions `ids` back (without `loaded`: they are no longer cold once it resolves). */
  load(ids: readonly string[]): Promise<Execution[]>;
  /** Reads the documents of cold executions `ids`, which stay cold (the file index's pass). */
  read?(ids: readonly string[]): Promise<Execution[]>;
  /** At most `limit` cold ids, newest first, older than `after` when given (a pass over them all, a page at a time). */
  page?(after: string | null, limit: number): string[];
  /**
   * Executions `load` read back, put in the resident state in this same turn (nothing runs
   * between): they leave the cold side, whose indexes answered for them until now. Returns
   * those to put: not one whose partition moved to another daemon while it was read (the
   * cold side forgot it, or holds it afresh).
   */
  loaded?(insts: readonly Execution[]): readonly Execution[];
  /**
   * What is kept of cold execution `id` (state/execution-summary.ts): what a listing filters
   * on and renders from before it reads a document. Undefined: `id` is not cold.
   */
  summary(id: string): ExecutionSummary | undefined;
  /** The ids of the cold executions, in no set order (listings and bulk selections over every live execution). */
  ids(): Iterable<string>;
  /** The ids of the cold executions that have every search attribute of `where` (name, value), from an index. */
  idsWithSearch?(where: ReadonlyArray<readonly [string, string]>): Iterable<string>;
  /** The cold executions as the recovery walk after a lazy open reads them. */
  live?(): ColdLive;
  /** Told the executions each step changed (recently used: a cache keeps them longer). */
  touched?(ids: Iterable<string>): void;
  /** Stops what the cold side does on its own (the engine closes). */
  close?(): void;
  /** Executions read back and trees evicted since the start (metrics). */
  readonly stats?: { readonly loaded: number; readonly evicted: number };
  /** Brings the resident executions back within bounds (after the engine's recovery, the state whole). */
  trim?(): void;
  /** The earliest timer (ms) of any cold execution (its summary's `dueMs`), or null. */
  nextDue?(): number | null;
  /** Takes the cold executions' timers due at `nowMs`, at most `max`: their ids, earliest first. */
  takeDue?(nowMs: number, max: number): string[];
  /** Sets again, due at `atMs`, the timers `takeDue` took of those of `ids` still cold (their read back failed). */
  untake?(ids: readonly string[], atMs: number): void;
  /** How many cold executions have a timer set. */
  readonly dueCount?: number;
  /** Tells `events` what the cold side does on its own (an execution leaving memory). Called once. */
  listen?(events: ColdEvents): void;
}

/**
 * The live executions that are not resident, as the recovery walk after a lazy open reads them
 * (engine/recovery.ts): a walk over their directory's rows, no object made per execution.
 */
export interface ColdLive {
  /**
   * Calls `visit` with every cold execution but those running that only wait (no job, tree or
   * trigger), oldest first (the order their jobs queue in), one row refilled each time.
   */
  walk(visit: (row: Readonly<WalkRow>) => void): void;
  /** Calls `visit` with each flow's cold running executions, and those of them only waiting. */
  flowTotals(visit: (organization: string, processId: string, running: number, waitingOnly: number) => void): void;
  /** The id of the execution of a row. */
  idAt(slot: number): string;
  /** The waits of the execution of a row. */
  waitsAt(slot: number): readonly WaitSummary[];
  /** The STATE of cold execution `id`; undefined: it is not cold. */
  stateOf(id: string): number | undefined;
}

/** What the cold side tells the seam of what it does on its own. */
export interface ColdEvents {
  /**
   * Resident execution `inst` is about to leave memory (its document is on disk): what is kept
   * of it in memory beside its document (armed timers, index entries) can go.
   */
  evicted(inst: Execution): void;
  /** Executions left memory: the earliest cold timer may be earlier (nextDue). */
  dueChanged(): void;
}

/** Cold executions read per slice by `learnColdFiles`. */
const LEARN_SLICE = 256;

/** What an `Executions` holds: the resident executions and the table beside them. */
type Holder = FileRefsHolder & {
  instances: Record<string, Execution | undefined>;
  instanceTable?: ExecutionTable<Execution> | undefined;
};

/** The executions of a state, read through the seam (see the top of this file). */
export class Executions {
  /** Trees being read back, by the id of each execution in them: a second ensure waits for the first. */
  private readonly loading = new Map<string, Promise<void>>();
  /** Times `coldFilesUnread` found executions left unread: a pass of `learnColdFiles` over them all covers those before it began. */
  private unreadSince = 0;
  private readonly loadListeners: Array<(inst: Execution) => void> = [];
  private readonly evictListeners: Array<(inst: Execution) => void> = [];
  private readonly dueListeners: Array<() => void> = [];

  constructor(
    private readonly state: Holder,
    private readonly cold: ColdExecutions | null = null,
  ) {
    // What the file store's collection knows of a cold execution's files (file-refs.ts).
    if (cold !== null) FileRefs.fresh(state);
    cold?.listen?.({
      evicted: (inst) => {
        for (const fn of this.evictListeners) fn(inst);
      },
      dueChanged: () => {
        for (const fn of this.dueListeners) fn();
      },
    });
  }

  /** True while every execution is resident: a step need not name its executions. */
  get allResident(): boolean {
    return this.cold === null || (this.cold.size === 0 && this.loading.size === 0);
  }

  /** Execution `id` when it is resident, else undefined (see `execution`). */
  get(id: string): Execution | undefined {
    return execution(this.state, id);
  }

  /** What is kept of execution `id` while it is cold (ColdExecutions.summary); undefined: resident, or none. */
  coldSummary(id: string): ExecutionSummary | undefined {
    return this.cold?.summary(id);
  }

  /** The cold executions as the recovery walk reads them (ColdExecutions.live); null: none cold. */
  coldLive(): ColdLive | null {
    const cold = this.cold;
    return cold === null || cold.size === 0 || cold.live === undefined ? null : cold.live();
  }

  /** Calls `fn` with each execution read back from the cold side, once resident (before any step on it). */
  onLoad(fn: (inst: Execution) => void): void {
    this.loadListeners.push(fn);
  }

  /** Calls `fn` with each execution about to leave memory for the cold side (ColdEvents.evicted). */
  onEvict(fn: (inst: Execution) => void): void {
    this.evictListeners.push(fn);
  }

  /** Calls `fn` when the earliest cold timer may have moved earlier (ColdEvents.dueChanged). */
  onColdDue(fn: () => void): void {
    this.dueListeners.push(fn);
  }

  /** The earliest timer of any cold execution (ColdExecutions.nextDue), or null. */
  nextColdDue(): number | null {
    return this.cold?.nextDue?.() ?? null;
  }

  /** Takes the cold timers due at `nowMs`, at most `max` (ColdExecutions.takeDue): their executions' ids. */
  takeColdDue(nowMs: number, max: number): string[] {
    return this.cold?.takeDue?.(nowMs, max) ?? [];
  }

  /** Sets the cold timers of `ids` again at `atMs` (ColdExecutions.untake): their read back failed. */
  untakeColdDue(ids: readonly string[], atMs: number): void {
    this.cold?.untake?.(ids, atMs);
  }

  /** Tells the cold side the executions a step changed (ColdExecutions.touched). */
  touched(ids: Iterable<string>): void {
    this.cold?.touched?.(ids);
  }

  /** Brings the resident executions within the cold side's bounds (ColdExecutions.trim): after recovery. */
  trim(): void {
    this.cold?.trim?.();
  }

  /** Stops the cold side's own work (ColdExecutions.close): the engine closes. */
  close(): void {
    this.cold?.close?.();
  }

  /** How many executions are cold, and the cold side's counts (ColdExecutions.stats): metrics. */
  coldStats(): { cold: number; loaded: number; evicted: number; due: number } {
    const cold = this.cold;
    return {
      cold: cold?.size ?? 0,
      loaded: cold?.stats?.loaded ?? 0,
      evicted: cold?.stats?.evicted ?? 0,
      due: cold?.dueCount ?? 0,
    };
  }

  /** The cold executions now (a lazy open's, a takeover's) were never read: the file index does not know their fileIds. */
  coldFilesUnread(): void {
    const files = FileRefs.held(this.state);
    if (files === null || this.cold === null || this.cold.size === 0) return;
    files.coldUnread = true;
    this.unreadSince++;
  }

  /**
   * Makes the file index whole (file-refs.ts): reads the documents of the cold executions whose
   * fileIds it does not know (those a lazy open or a takeover left unread), a slice at a time,
   * without making them resident. True once it is whole (at once without a cold side); false
   * when a read failed or more were left unread during the pass (the file sweep then deletes
   * nothing: tried again at the next).
   */
  async learnColdFiles(): Promise<boolean> {
    const files = FileRefs.held(this.state);
    if (this.cold === null || files === null || !files.coldUnread) return true;
    if (this.cold.read === undefined || this.cold.page === undefined) return false;
    // Executions left unread during the pass (a partition taken) may sort before its cursor.
    const since = this.unreadSince;
    let failed = false;
    // A page at a time, newest first, after the last id of the one before: those that leave
    // memory meanwhile are known already, wherever they land.
    for (let after: string | null = null; ;) {
      const page: readonly string[] = this.cold.page(after, LEARN_SLICE);
      if (page.length === 0) break;
      after = page.at(-1)!;
      const docs = await this.cold.read!(page).catch(() => null);
      if (docs === null) failed = true;
      // One read back since is resident, or was noted when it was (ensure): either way known.
      else for (const doc of docs) if (this.cold.summary(doc.processInstanceId) !== undefined) files.add(doc);
    }
    if (failed || since !== this.unreadSince) return false;
    files.coldUnread = false;
    return true;
  }

  /** The ids of the cold executions (none while all are resident), in no set order. */
  coldIds(): Iterable<string> {
    return this.cold?.ids() ?? [];
  }

  /**
   * The ids of the cold executions that have every search attribute of `where`: from the cold
   * side's index, or (a cold side without one) every cold id, for the caller's filter to decide.
   */
  coldIdsWithSearch(where: ReadonlyArray<readonly [string, string]>): Iterable<string> {
    const cold = this.cold;
    if (cold === null) return [];
    return cold.idsWithSearch?.(where) ?? cold.ids();
  }

  /**
   * Makes the whole trees of executions `ids` resident (steps walk parents and children): null
   * when they are already, so a caller goes on synchronously, else a promise that resolves once
   * they are. An id of no execution is passed over: the step or read says what it finds.
   */
  ensure(ids: readonly string[]): Promise<void> | null {
    const cold = this.cold;
    if (cold === null) return null;
    const waits: Promise<void>[] = [];
    const wanted = new Set<string>();
    for (const id of ids) {
      const pending = this.loading.get(id);
      // Another's read: what failed of it (one of its executions moved away) fails this one only
      // if `id` did not come in.
      if (pending !== undefined)
        waits.push(
          pending.catch((err: unknown) => {
            if (this.get(id) !== undefined) return;
            // Read under a hold since given up and taken again: cold here again, read afresh.
            if (isWfxError(err, 'PARTITION_MOVING') && cold.summary(id) !== undefined)
              return this.ensure([id]) ?? undefined;
            throw err;
          }),
        );
      else for (const member of cold.coldTree(id)) wanted.add(member);
    }
    if (wanted.size > 0) {
      const members = [...wanted];
      const read = cold
        .load(members)
        .then((read) => {
          const insts = cold.loaded?.(read) ?? read;
          const table = ExecutionTable.of(this.state);
          // Its document names what its entry in the file index may not (one a lazy open left unread).
          const files = FileRefs.held(this.state);
          for (const inst of insts) {
            table.put(inst);
            files?.add(inst);
          }
          for (const inst of insts) for (const fn of this.loadListeners) fn(inst);
          // The others in the same read are resident (their timers armed): these are not.
          if (insts.length < read.length) {
            const kept = new Set(insts);
            const gone = read.filter((inst) => !kept.has(inst)).map((inst) => inst.processInstanceId);
            throw new WfxError('PARTITION_MOVING', `execution ${gone.join(', ')} moved to another daemon while read`, {
              details: { retryAfter: 1 },
            });
          }
        })
        .finally(() => {
          for (const id of members) this.loading.delete(id);
        });
      for (const id of members) this.loading.set(id, read);
      waits.push(read);
    }
    if (waits.length === 0) return null;
    return Promise.all(waits).then(() => undefined);
  }
}
