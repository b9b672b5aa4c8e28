/**
 * What every durable store of records shares, whatever it writes to: records applied to the
 * live state at once, journaled as one entry per commit or transaction, and the crash-only
 * failure. The JSON store (store.ts) and the PostgreSQL store (pg/pg-store.ts) differ only in
 * where an entry goes (`append`) and how they wait for it (`flush`).
 */
import type { StoreHealth } from '../../shared/api/index.js';
import { errorMessage, WfxError, type ErrorCode } from '../../shared/errors.js';
import { WorkCount } from '../../shared/work-count.js';
import type { Decided, Divert, DurableStore, StoreLogger, Transaction } from './durable-store.js';

/** How records change the state (StoreOptions' part every store takes). */
export interface Reducer<S, R> {
  /** Applies one record to the state, in place; deterministic (see StoreOptions.apply). */
  readonly apply: (state: S, record: R) => void;
  /** Journals a run of small records as one (see StoreOptions.coalesce). */
  readonly coalesce?: { readonly candidate: (record: R) => boolean; readonly merge: (last: R, next: R) => R | null };
}

export const silentLogger: StoreLogger = { info() {}, warn() {}, error() {} };

export abstract class RecordStore<S, R> implements DurableStore<S, R> {
  protected failure: WfxError | null = null;
  protected closed = false;
  /** Writes of diverted transactions under way: `flush` waits for them too. */
  protected readonly diverted = new WorkCount();
  private readonly failureListeners: Array<(err: WfxError) => void> = [];
  private readonly commitListeners: Array<(records: readonly R[]) => void> = [];

  protected constructor(
    /** The live state. Read it; change it only through `commit`. */
    readonly state: S,
    private readonly reducer: Reducer<S, R>,
    protected readonly logger: StoreLogger,
  ) {}

  /**
   * Journals records already applied to the state, as one entry; resolves once it is durable.
   * Each record was serialized before it was applied, so the journal holds exactly what was
   * emitted even if applying it, or a later record, changes objects the record shares with the
   * state: reducers may keep the record's objects instead of copying them.
   */
  protected abstract append(serialized: readonly string[], records: readonly R[]): Promise<void>;

  /** Resolves once everything committed so far is durable (diverted transactions too). */
  abstract flush(): Promise<void>;

  /** Makes what is durable quick to load again (a snapshot), so a start replays little. */
  abstract checkpoint(): Promise<void>;

  /** What GET /health says of this store (wfx daemon status). */
  abstract health(): StoreHealth;

  /** Flushes, checkpoints unless told not to (or failed), and closes; writes are refused after. */
  abstract close(options?: { checkpoint?: boolean }): Promise<void>;

  /** Applies one record, the store's hooks around it. */
  protected applyOne(record: R): void {
    this.beforeApply(record);
    this.reducer.apply(this.state, record);
    this.afterApply(record);
  }

  /** Called before a record changes the state (a store that copies its state in the background hooks in here). */
  protected beforeApply(_record: R): void {}

  /** Called once a record has changed the state. */
  protected afterApply(_record: R): void {}

  /**
   * Called before each synchronous run of applies (a commit's, a transaction's, a settle's):
   * nothing else (a checkpoint beginning, an eviction) happens inside one, which a store may
   * count on between its `applyOne` calls.
   */
  protected beginApplies(): void {}

  /**
   * Applies `records` to the state now, and resolves once they are durable as one journal
   * entry. Throws (synchronously in the returned promise) STORE_FAILED / STORE_CLOSED.
   */
  commit(...records: R[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new WfxError('STORE_CLOSED', 'the store is closed'));
    const parts: string[] = [];
    this.beginApplies();
    try {
      for (const record of records) {
        parts.push(JSON.stringify(record));
        this.applyOne(record);
      }
    } catch (err) {
      return Promise.reject(this.fail('a record could not be applied', err));
    }
    const durable = this.append(parts, records);
    if (this.commitListeners.length > 0) this.committed(records);
    return durable;
  }

  /**
   * Calls `listener` with the records of each commit or transaction, once they are applied
   * (durability follows in journal order). For services that follow changes (the scheduler
   * re-arms when a flow version is activated); it must not throw or commit synchronously.
   */
  onCommit(listener: (records: readonly R[]) => void): void {
    this.commitListeners.push(listener);
  }

  private committed(records: readonly R[]): void {
    for (const listener of this.commitListeners) listener(records);
  }

  /**
   * Runs `fn` synchronously: it decides on a draft of the state and returns its result, the
   * records it wrote (applied to the draft only) and the draft's commit. The records are
   * journaled as one entry (all or none after a crash); the commit hands the draft's changes to
   * the live state at once, with the store's hooks around it as if each record were applied.
   *
   * If `fn` throws, nothing changed: the draft is dropped and the error rethrown. If the commit
   * throws, the state is half changed, so the store fails (STORE_FAILED).
   *
   * `divert`, when given, may take the records out of the journal (see Divert). A failure of
   * the write it makes instead fails the store, as a journal write's would.
   */
  transact<T>(fn: () => Decided<T, R>, divert?: Divert<R>): Transaction<T, R> {
    if (this.failure) throw this.failure;
    if (this.closed) throw new WfxError('STORE_CLOSED', 'the store is closed');
    const decided = fn();
    const { result } = decided;
    const { records, serialized } = this.coalesced(decided.records, decided.json);
    // Nothing new, but the result may rest on records still being made durable: wait for those.
    if (records.length === 0) return { result, records, serialized, durable: this.flush(), settle: null };
    this.beginApplies();
    try {
      for (const record of records) this.beforeApply(record);
      decided.commit();
      for (const record of records) this.afterApply(record);
    } catch (err) {
      throw this.fail('a transaction could not be committed', err);
    }
    let elsewhere: ReturnType<Divert<R>> = null;
    try {
      elsewhere = divert?.(records, serialized) ?? null;
    } catch (err) {
      // The records are applied already: journaled as usual, the state and the disk still agree.
      this.logger.error({ err }, 'store: a divert threw; the transaction is journaled instead');
    }
    if (this.commitListeners.length > 0) this.committed(records);
    if (elsewhere === null)
      return { result, records, serialized, durable: this.append(serialized, records), settle: null };
    const durable = this.diverted.track(
      elsewhere.durable.catch((err: unknown) => {
        throw this.fail('the write of a transaction kept out of the journal failed', err);
      }),
    );
    let settled = false;
    const settle = (): void => {
      if (settled || this.failure) return;
      settled = true;
      this.beginApplies();
      for (const record of elsewhere.settle) this.applyOne(record);
    };
    return { result, records, serialized, durable, settle };
  }

  /**
   * `written` as journaled, and its JSON (`json[i]`, made as record i was written, where given):
   * each run of records the reducer's `coalesce` merges as its one record, serialized here (the
   * reducer keeps none of a merged record's objects, so it may be serialized after it was applied).
   */
  private coalesced(written: readonly R[], json?: readonly (string | null)[]): { records: R[]; serialized: string[] } {
    const coalesce = this.reducer.coalesce;
    const records: R[] = [];
    const serialized: string[] = [];
    let run: R | null = null;
    const endRun = (): void => {
      if (run === null) return;
      serialized.push(JSON.stringify(run));
      records.push(run);
      run = null;
    };
    for (let i = 0; i < written.length; i++) {
      const record = written[i]!;
      if (coalesce) {
        const merged: R | null = run === null ? null : coalesce.merge(run, record);
        if (merged === null) endRun();
        if (merged !== null || coalesce.candidate(record)) {
          run = merged ?? record;
          continue;
        }
      }
      serialized.push(json?.[i] ?? JSON.stringify(record));
      records.push(record);
    }
    endRun();
    return { records, serialized };
  }

  /** Whether entry `id` of the state's collection `key` is gone: no key, or a tombstone (state/execution-table.ts). */
  protected entryGone(key: string, id: string): boolean {
    return (this.state as Record<string, Record<string, unknown> | undefined>)[key]?.[id] === undefined;
  }

  /** Calls `listener` once if the store fails. */
  onFailure(listener: (err: WfxError) => void): void {
    this.failureListeners.push(listener);
  }

  /** The failure, once the store has failed. */
  get failed(): WfxError | null {
    return this.failure;
  }

  /**
   * Fails the store for good (crash-only): the state in memory can no longer be trusted to match
   * what is durable. `code`: STORE_FAILED, or a store's own reason (a lost lease, say).
   */
  protected fail(what: string, cause: unknown, code: ErrorCode = 'STORE_FAILED'): WfxError {
    if (this.failure) return this.failure;
    const message = errorMessage(cause);
    this.failure = new WfxError(code, `store failed: ${what}: ${message}`, { cause });
    this.logger.error({ err: cause }, `store: ${what}; refusing further writes`);
    for (const listener of this.failureListeners) listener(this.failure);
    return this.failure;
  }
}
