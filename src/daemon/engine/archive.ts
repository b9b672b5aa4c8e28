import { applyRecord, type WfxRecord } from '../state/records.js';
import { initialState, STATE, type Execution, type WfxState } from '../state/state.js';
import { fileIdsInText } from '../state/stored-file.js';
import type { HistoryStore } from '../store/history-store.js';
import type { DurableStore } from '../store/store.js';
import { executionTags } from './execution-tags.js';
import { bucketOf } from '../state/ids.js';
import { execution } from '../state/executions.js';

export interface ArchiveDeps {
  readonly state: WfxState;
  readonly store: DurableStore<WfxState, WfxRecord>;
  readonly history: HistoryStore;
  /** Tracks work so the engine's close() waits for it. */
  readonly track: <T>(work: Promise<T>) => Promise<T>;
  readonly onError: (err: unknown, what: string) => void;
  /** Called for each execution once it has left the live state for history. */
  readonly onArchived: (id: string) => void;
  readonly closed: () => boolean;
}

/**
 * Finished executions in history: moving them there (in batches, each with the tags lists
 * filter on: execution-tags.ts) and reading them back.
 */
export class ExecutionArchive {
  constructor(private readonly deps: ArchiveDeps) {}

  /** The history executions are archived to. */
  get history(): HistoryStore {
    return this.deps.history;
  }

  /** An execution from history (by its id's day bucket), or null. */
  async read(id: string): Promise<Execution | null> {
    const bucket = bucketOf(id);
    const doc = bucket ? await this.deps.history.get<ArchivedDoc>(bucket, id) : null;
    return doc === null ? null : this.fromDoc(id, doc);
  }

  /** An archived execution: its final state, or (started and finished in one step) the records of that step. */
  private fromDoc(id: string, doc: ArchivedDoc): Execution | null {
    if ('instance' in doc) return doc.instance;
    // Replay through the same reducer, over the (immutable) flow versions of the live state.
    const scratch: WfxState = { ...initialState(), flows: this.deps.state.flows };
    for (const r of doc.records) applyRecord(scratch, r);
    return scratch.instances[id] ?? null;
  }

  /**
   * For a step that starts an execution and finishes it (no waits, no children, no parent) and
   * changes nothing else: the step's records are the execution whole, so they go to history
   * alone, as its document, instead of to the journal first and history after (Divert, in the
   * store). Once they are durable there, `settle` removes the execution from the live state
   * unjournaled: recovery never needed it. This is the usual run of a flow without waits: one
   * durable write instead of three (journal, history, the journal's instance.archived), and the
   * execution leaves memory at once. Null for any other step.
   */
  readonly oneStep = (
    records: readonly WfxRecord[],
    serialized: readonly string[],
  ): { durable: Promise<void>; settle: readonly WfxRecord[] } | null => {
    const first = records[0]!;
    if (first.type !== 'instance.started' || first.instance.parentInstanceId !== null) return null;
    const id = first.instance.processInstanceId;
    let finished: Extract<WfxRecord, { type: 'instance.finished' }> | null = null;
    for (let i = 1; i < records.length; i++) {
      const r = records[i]!;
      if (!OWN_EFFECT_ONLY.has(r.type) || (r as { instanceId?: string }).instanceId !== id) return null;
      if (r.type === 'instance.finished') finished = r;
    }
    const bucket = bucketOf(id);
    if (finished === null || bucket === null || this.deps.closed()) return null;
    // Its hold on a file must be journaled (files.held): such an execution takes the usual way.
    if (this.filesNamed(serialized).length > 0) return null;
    return {
      durable: this.deps.history.putJson(
        bucket,
        id,
        { open: '{"records":[', parts: serialized, close: ']}' },
        executionTags(first.instance, { stateCd: finished.stateCd, error: finished.error ?? null }),
      ),
      settle: [{ type: 'instance.archived', instanceId: id }],
    };
  };

  /**
   * Moves finished executions to history: each written and fsynced there first, then all of
   * them removed from the live state in one journal entry. One batch at a time, as the journal
   * commits: executions that finish while a batch is being written wait for it and go together
   * in the next, so under load each history write and journal entry carries more of them; with
   * nothing under way a batch starts on the next turn of the event loop. A crash in between
   * archives them again on recovery (the later copy wins). `recordsJson`, when an execution
   * started and finished in one step, is that step's records as journaled: written as they are
   * instead of serializing the final state again.
   */
  // Replaced, never cleared: Map.clear() on a long-lived Map allocates its next table in the old
  // generation, where the entries it then holds outlive the batch (see shared/work-count.ts).
  private pending = new Map<string, readonly string[] | null>();
  private scheduled = false;
  /** The last batch scheduled, until it is written and journaled: the next one starts after it. */
  private running: Promise<void> = Promise.resolve();

  /** Executions held in the live state (hold), by how many holds; archived once the last is released. */
  private readonly held = new Map<string, number>();
  /** Held executions that finished meanwhile, as they were enqueued. */
  private readonly waiting = new Map<string, readonly string[] | null>();

  /**
   * Keeps executions `ids` in the live state until the returned release is called: read from
   * history before a step, one that left meanwhile would be neither live nor read (a bulk retry
   * reads a chunk, then runs its step).
   */
  hold(ids: Iterable<string>): () => void {
    const mine = [...ids];
    for (const id of mine) this.held.set(id, (this.held.get(id) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const id of mine) {
        const n = (this.held.get(id) ?? 1) - 1;
        if (n > 0) {
          this.held.set(id, n);
          continue;
        }
        this.held.delete(id);
        const recordsJson = this.waiting.get(id);
        if (recordsJson === undefined) continue;
        this.waiting.delete(id);
        this.enqueue(id, recordsJson);
      }
    };
  }

  /** Resolves once the batches scheduled so far are written and journaled (whatever their outcome). */
  idle(): Promise<void> {
    return this.running;
  }

  /** Archives `id` with the next batch (what finishes until it starts). */
  enqueue(id: string, recordsJson: readonly string[] | null): void {
    if (this.deps.closed()) return;
    this.retries.delete(id);
    this.pending.set(id, recordsJson);
    this.schedule();
  }

  /** Starts a batch after the one under way, unless one is scheduled already. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // Tracked from now, not from when it runs: close() must wait for a batch already scheduled.
    const next = this.running
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => this.batch());
    this.running = next.catch(() => undefined);
    void this.deps.track(next);
  }

  /**
   * Executions whose history write failed, by the times they have failed: each is tried again
   * after 1 s, then 2, 4, ... up to a minute, rather than kept in memory until a restart
   * archives it (a failed history write breaks only its appender: the next put opens another).
   */
  private readonly retries = new Map<string, number>();

  private retryLater(id: string, recordsJson: readonly string[] | null): void {
    const failures = (this.retries.get(id) ?? 0) + 1;
    this.retries.set(id, failures);
    const timer = setTimeout(
      () => {
        if (this.retries.get(id) !== failures || this.deps.closed()) return;
        this.pending.set(id, recordsJson);
        this.schedule();
      },
      Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1)),
    );
    timer.unref(); // a stop does not wait for it: the restart archives it
  }

  private async batch(): Promise<void> {
    this.scheduled = false;
    const batch = [...this.pending];
    this.pending = new Map();
    const written = await Promise.all(
      batch.map(async ([id, recordsJson]) => {
        if (this.held.has(id)) {
          this.waiting.set(id, recordsJson);
          return null;
        }
        const inst = execution(this.deps.state, id);
        const bucket = bucketOf(id);
        if (!inst || inst.stateCd === STATE.RUNNING || !bucket) return null;
        const doc =
          recordsJson === null
            ? JSON.stringify({ instance: inst })
            : { open: '{"records":[', parts: recordsJson, close: ']}' };
        try {
          await this.deps.history.putJson(bucket, id, doc, executionTags(inst, inst));
          this.retries.delete(id);
          return { id, bucket, texts: typeof doc === 'string' ? [doc] : doc.parts, lines: inst.logs.length };
        } catch (err) {
          this.deps.onError(err, `archiving ${id}`);
          this.retryLater(id, recordsJson);
          return null;
        }
      }),
    );
    // Only executions still as written: one retried meanwhile runs again (or ended again, with
    // more log lines, and is archived anew), and must not leave the live state for a stale copy.
    const done = written.filter((w): w is NonNullable<typeof w> => {
      if (w === null) return false;
      const now = execution(this.deps.state, w.id);
      if (this.held.has(w.id)) {
        // Written, but held since: it leaves once released (written again then: the later copy wins).
        this.waiting.set(w.id, null);
        return false;
      }
      return now !== undefined && now.stateCd !== STATE.RUNNING && now.logs.length === w.lines;
    });
    if (done.length === 0) return;
    // The files each names stay as long as its bucket does: recorded with its leaving, atomically.
    const held = new Map<string, Set<string>>();
    for (const { bucket, texts } of done) {
      const fileIds = this.filesNamed(texts);
      if (fileIds.length === 0) continue;
      let set = held.get(bucket);
      if (!set) held.set(bucket, (set = new Set()));
      for (const fileId of fileIds) set.add(fileId);
    }
    const records: WfxRecord[] = done.map(({ id }) => ({ type: 'instance.archived', instanceId: id }));
    for (const [bucket, fileIds] of held) records.push({ type: 'files.held', bucket, fileIds: [...fileIds].sort() });
    try {
      await this.deps.store.commit(...records);
    } catch (err) {
      this.deps.onError(err, `archiving ${done.length} executions`);
      return;
    }
    for (const { id } of done) this.deps.onArchived(id);
  }

  /** The files of the file store that `texts` (a history document) name; none without a look when the store is empty. */
  private filesNamed(texts: readonly string[]): string[] {
    const files = this.deps.state.files;
    let any = false;
    for (const _ in files) {
      any = true;
      break;
    }
    if (!any) return [];
    const found = new Set<string>();
    for (const text of texts) fileIdsInText(text, found);
    return [...found].filter((fileId) => Object.hasOwn(files, fileId));
  }
}

/** The first wait before a failed history write is tried again, and the longest. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/**
 * Record types whose apply changes the execution they name and nothing else (no subscription,
 * timer, message, parent or child): a step made of these alone, which starts and finishes its
 * execution, leaves the rest of the state as it found it (see oneStep).
 */
const OWN_EFFECT_ONLY: ReadonlySet<WfxRecord['type']> = new Set<WfxRecord['type']>([
  'node.entered',
  'node.ran',
  'nodes.ran',
  'node.completed',
  'node.left',
  'boundary.fired',
  'join.updated',
  'instance.logged',
  'instance.finished',
]);

/** What history holds for an execution (see Engine.archive). */
type ArchivedDoc = { readonly instance: Execution } | { readonly records: readonly WfxRecord[] };

/**
 * The positions of a step's records by the execution they describe: its own records, and a
 * child's start under its parent too (replaying it lists the child under the parent's node).
 * Made once per step, so a step that finishes many executions reads its records once.
 */
export function recordsByExecution(records: readonly WfxRecord[]): Map<string, number[]> {
  const index = new Map<string, number[]>();
  const add = (id: string, i: number): void => {
    const at = index.get(id);
    if (at) at.push(i);
    else index.set(id, [i]);
  };
  records.forEach((r, i) => {
    if (r.type === 'instance.started') {
      add(r.instance.processInstanceId, i);
      if (r.instance.parentNodeInstanceId !== undefined && r.instance.parentInstanceId !== null)
        add(r.instance.parentInstanceId, i);
    } else if ('instanceId' in r) add(r.instanceId, i);
  });
  return index;
}

/**
 * The journaled JSON of the records of execution `id` in one step (and the starts of its
 * children), if the step both started and finished it (so they describe it whole); else null.
 * `index`: the step's records by execution (recordsByExecution).
 */
export function ownRecordsJson(
  id: string,
  records: readonly WfxRecord[],
  serialized: readonly string[],
  index: ReadonlyMap<string, readonly number[]>,
): readonly string[] | null {
  const at = index.get(id);
  const started = at?.some((i) => {
    const r = records[i]!;
    return r.type === 'instance.started' && r.instance.processInstanceId === id;
  });
  if (!at || !started) return null;
  // The usual case, a whole step that is this execution alone: the journal's own array.
  return at.length === serialized.length ? serialized : at.map((i) => serialized[i]!);
}
