/**
 * The behaviour every durable store promises the engine (durable-store.ts), run against each
 * implementation: the JSON store (test/daemon/store/store-suite-file.test.ts) and the PostgreSQL
 * store (store-suite-pg.test.ts). What only one of them has (segments and manifests, leases and
 * fencing) is tested beside it.
 */
import type { Test } from 'tap';
import type { RecordStore, Reducer } from '../../src/daemon/store/record-store.js';

export interface SuiteState {
  n: number;
  log: string[];
  /** Derived: rebuilt by the owner after open, never in a snapshot. */
  seen: number;
}
export type SuiteRecord =
  { op: 'add'; by: number } | { op: 'adds'; by: number[] } | { op: 'note'; text: string } | { op: 'boom' };

export const suiteReducer: Reducer<SuiteState, SuiteRecord> & {
  initialState: () => SuiteState;
  derived: readonly string[];
} = {
  initialState: () => ({ n: 0, log: [], seen: 0 }),
  derived: ['seen'],
  apply: (s, r) => {
    s.seen++;
    if (r.op === 'boom') throw new Error('bad record');
    if (r.op === 'add') s.n += r.by;
    else if (r.op === 'adds') for (const by of r.by) s.n += by;
    else s.log.push(`${r.text}@${s.n}`);
  },
  coalesce: {
    candidate: (r) => r.op === 'add',
    merge: (last, next) => {
      if (next.op !== 'add') return null;
      if (last.op === 'adds') {
        last.by.push(next.by);
        return last;
      }
      return last.op === 'add' ? { op: 'adds', by: [last.by, next.by] } : null;
    },
  },
};

type SuiteStore = RecordStore<SuiteState, SuiteRecord> & { readonly lastSeq: number };

/** Opens a store of one test's own place (a directory, a database); every open of it sees the same data. */
export type OpenStore = (options?: { checkpointEvery?: number }) => Promise<SuiteStore>;

/** A store factory: a new, empty place per test. */
export type StorePlace = (t: Test) => Promise<OpenStore>;

const state = (s: SuiteState) => ({ n: s.n, log: s.log });

/**
 * A transaction's function whose records are applied to the live state only at its commit, by
 * `apply` (the store's reducer): what a caller with no draft of its own decides.
 */
export function appliedAtCommit<S, R, T>(
  store: { readonly state: S },
  apply: (state: S, record: R) => void,
  fn: (emit: (r: R) => void) => T,
): () => { result: T; records: R[]; commit: () => void } {
  return () => {
    const records: R[] = [];
    const result = fn((r) => records.push(r));
    return { result, records, commit: () => records.forEach((r) => apply(store.state, r)) };
  };
}

/**
 * A transaction's function for the suite's state, as the engine's step makes one: `fn` decides
 * on a draft (a copy of the state each emitted record is applied to), and the commit copies the
 * draft's values into the live state.
 */
export function onDraft<T>(
  store: { readonly state: SuiteState },
  fn: (emit: (r: SuiteRecord) => void, draft: SuiteState) => T,
): () => { result: T; records: SuiteRecord[]; commit: () => void } {
  return () => {
    const draft: SuiteState = { n: store.state.n, log: store.state.log.slice(), seen: store.state.seen };
    const records: SuiteRecord[] = [];
    const result = fn((r) => {
      records.push(r);
      suiteReducer.apply(draft, r);
    }, draft);
    return { result, records, commit: () => Object.assign(store.state, draft) };
  };
}

export function storeSuite(t: Test, place: StorePlace): void {
  t.test('commits apply at once, are durable once resolved and survive reopen', async (t) => {
    const open = await place(t);
    const store = await open();
    const p = store.commit({ op: 'add', by: 2 }, { op: 'note', text: 'x' });
    t.equal(store.state.n, 2, 'visible to the next decision before it is durable');
    await p;
    await store.commit({ op: 'add', by: 3 });
    t.equal(store.lastSeq, 2, 'one journal entry per commit');
    await store.close({ checkpoint: false });
    const again = await open();
    t.same(state(again.state), { n: 5, log: ['x@2'] });
    t.equal(again.lastSeq, 2);
    await again.close();
  });

  t.test('many commits at once are all durable, in their order', async (t) => {
    const open = await place(t);
    const store = await open();
    const commits = Array.from({ length: 500 }, (_, i) => store.commit({ op: 'note', text: String(i) }));
    await Promise.all(commits);
    await store.close({ checkpoint: false });
    const again = await open();
    t.equal(again.state.log.length, 500);
    t.same(
      again.state.log.slice(0, 3).concat(again.state.log.slice(-1)),
      ['0@0', '1@0', '2@0', '499@0'],
      'replayed in commit order',
    );
    await again.close();
  });

  t.test('flush resolves once everything committed before it is durable', async (t) => {
    const open = await place(t);
    const store = await open();
    for (let i = 0; i < 50; i++) void store.commit({ op: 'add', by: 1 });
    await store.flush();
    await store.close({ checkpoint: false });
    const again = await open();
    t.equal(again.state.n, 50);
    await again.close();
  });

  t.test('transact: decided on a draft, committed once, one journal entry', async (t) => {
    const open = await place(t);
    const store = await open();
    const tx = store.transact(
      onDraft(store, (emit, draft) => {
        emit({ op: 'note', text: 'a' });
        const seen = draft.log.length; // the draft sees its own change
        emit({ op: 'note', text: `saw ${seen}` });
        t.equal(store.state.log.length, 0, 'the live state is unchanged while it decides');
        return seen;
      }),
    );
    t.equal(tx.result, 1);
    t.equal(tx.records.length, 2);
    t.same(state(store.state), { n: 0, log: ['a@0', 'saw 1@0'] }, 'committed before transact returns');
    await tx.durable;
    t.equal(store.lastSeq, 1, 'one journal entry');
    const empty = store.transact(() => ({ result: 'nothing', records: [], commit: () => assertNever('no commit') }));
    await empty.durable;
    t.equal(store.lastSeq, 1, 'an empty transaction writes nothing and commits nothing');
    t.throws(
      () =>
        store.transact(
          onDraft(store, (emit) => {
            emit({ op: 'add', by: 1 });
            throw new Error('decided half');
          }),
        ),
      /decided half/,
    );
    t.equal(store.failed, null, 'a throw while deciding leaves the store healthy');
    t.same(state(store.state), { n: 0, log: ['a@0', 'saw 1@0'] }, 'and the state as it was: the draft is dropped');
    const broken = (): never => {
      throw new Error('a commit that broke');
    };
    t.throws(() => store.transact(() => ({ result: 0, records: [{ op: 'add', by: 1 }], commit: broken })), /broke/);
    t.match(store.failed, { code: 'STORE_FAILED' }, 'a throw while committing fails the store');
    await t.rejects(store.commit({ op: 'add', by: 1 }), { code: 'STORE_FAILED' }, 'no write after a failure');
    await store.close();
    const again = await open();
    t.same(state(again.state), { n: 0, log: ['a@0', 'saw 1@0'] }, 'the failed transaction never reached the journal');
    await again.close();
  });

  t.test('coalesce: a run of candidate records is journaled as one record', async (t) => {
    const open = await place(t);
    const store = await open();
    const seen: number[] = [];
    const tx = store.transact(
      onDraft(store, (emit, draft) => {
        emit({ op: 'add', by: 1 });
        seen.push(draft.n);
        emit({ op: 'add', by: 2 });
        seen.push(draft.n);
        emit({ op: 'add', by: 3 });
        emit({ op: 'note', text: 'between' });
        emit({ op: 'add', by: 10 });
      }),
    );
    t.same(seen, [1, 3], 'each record is applied to the draft when it is emitted');
    t.same(
      tx.records,
      [
        { op: 'adds', by: [1, 2, 3] },
        { op: 'note', text: 'between' },
        { op: 'add', by: 10 },
      ],
      'the run before the note is one record; a run of one stays as it was',
    );
    await tx.durable;
    t.same(state(store.state), { n: 16, log: ['between@6'] });
    await store.close({ checkpoint: false });
    const again = await open();
    t.same(state(again.state), { n: 16, log: ['between@6'] }, 'replaying the coalesced journal reaches the same state');
    await again.close();
  });

  t.test('a record that cannot be applied fails the store for good', async (t) => {
    const open = await place(t);
    const store = await open();
    let told: unknown = null;
    store.onFailure((err) => (told = err));
    await store.commit({ op: 'add', by: 1 });
    await t.rejects(store.commit({ op: 'boom' }), { code: 'STORE_FAILED' });
    t.match(told, { code: 'STORE_FAILED' }, 'the owner is told');
    await t.rejects(store.commit({ op: 'add', by: 1 }), { code: 'STORE_FAILED' });
    await t.rejects(store.flush(), { code: 'STORE_FAILED' });
    await store.close();
    const again = await open();
    t.equal(again.state.n, 1);
    await again.close();
  });

  t.test('commits after close are refused', async (t) => {
    const open = await place(t);
    const store = await open();
    await store.close();
    await t.rejects(store.commit({ op: 'add', by: 1 }), { code: 'STORE_CLOSED' });
  });

  t.test('a checkpoint and the journal after it reach the same state; derived keys start over', async (t) => {
    const open = await place(t);
    const store = await open();
    await store.commit({ op: 'add', by: 1 }, { op: 'note', text: 'before' });
    await store.checkpoint();
    await store.commit({ op: 'add', by: 2 }, { op: 'note', text: 'after' });
    t.equal(store.state.seen, 4);
    await store.close({ checkpoint: false });
    const again = await open();
    t.same(state(again.state), { n: 3, log: ['before@1', 'after@3'] });
    t.equal(again.state.seen, 2, 'the derived key as the initial state has it, plus what the journal replayed');
    t.equal(again.lastSeq, 2, 'sequence numbers go on after a checkpoint');
    await again.commit({ op: 'add', by: 4 });
    await again.close(); // a checkpoint at close
    const third = await open();
    t.same(state(third.state), { n: 7, log: ['before@1', 'after@3'] });
    t.equal(third.state.seen, 0, 'nothing replayed after the checkpoint of a clean close');
    await third.close();
  });

  t.test('automatic checkpoints keep the replay at open bounded', async (t) => {
    const open = await place(t);
    const store = await open({ checkpointEvery: 10 });
    for (let i = 0; i < 100; i++) await store.commit({ op: 'add', by: 1 });
    await store.close({ checkpoint: false });
    const again = await open({ checkpointEvery: 10 });
    t.equal(again.state.n, 100);
    t.ok(again.state.seen < 100, `replayed ${again.state.seen} of 100 entries`);
    await again.close();
  });

  t.test('divert: records kept out of the journal are durable elsewhere; settle undoes their effect', async (t) => {
    const open = await place(t);
    const store = await open();
    await store.commit({ op: 'add', by: 1 });
    let release!: () => void;
    const written = new Promise<void>((resolve) => (release = resolve));
    const divert = (records: readonly SuiteRecord[]) => {
      const by = records.reduce((sum, r) => sum + (r.op === 'add' ? r.by : Number.NaN), 0);
      return Number.isNaN(by) ? null : { durable: written, settle: [{ op: 'add', by: -by } as const] };
    };
    const tx = store.transact(
      onDraft(store, (emit) => emit({ op: 'add', by: 5 })),
      divert,
    );
    t.equal(store.state.n, 6, 'applied at once, as any transaction');
    t.equal(store.lastSeq, 1, 'not journaled');
    let flushed = false;
    const flush = store.flush().then(() => (flushed = true));
    await store.commit({ op: 'note', text: 'later' });
    t.notOk(flushed, 'flush waits for the write elsewhere');
    release();
    await tx.durable;
    await flush;
    tx.settle!();
    t.equal(store.state.n, 1, 'settled: its effect undone');
    await store.close();
    const again = await open();
    t.same(state(again.state), { n: 1, log: ['later@6'] });
    await again.close();
  });

  t.test('divert: a failed write elsewhere fails the store', async (t) => {
    const open = await place(t);
    const store = await open();
    const tx = store.transact(
      onDraft(store, (emit) => emit({ op: 'add', by: 1 })),
      () => ({ durable: Promise.reject(new Error('disk full')), settle: [] }),
    );
    await t.rejects(tx.durable, { code: 'STORE_FAILED', message: /kept out of the journal failed: disk full/ });
    await t.rejects(store.commit({ op: 'add', by: 1 }), { code: 'STORE_FAILED' });
    await store.close();
  });
}

function assertNever(message: string): never {
  throw new Error(message);
}
