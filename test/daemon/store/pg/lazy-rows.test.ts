import pg from 'pg';
import t from 'tap';
import { partitionOf, uuidv7In } from '../../../../src/daemon/state/ids.js';
import type { ExecutionSummary } from '../../../../src/daemon/state/execution-summary.js';
import { JournalFollower } from '../../../../src/daemon/store/pg/journal-follower.js';
import { readDocs, readSummaries } from '../../../../src/daemon/at-rest/rows/pg-cold-rows.js';
import { ExecutionIndex } from '../../../../src/daemon/state/execution-index/execution-index.js';
import { RowReads } from '../../../../src/daemon/at-rest/rows/row-reads.js';
import { ROWS_AT_REST } from '../../../../src/daemon/at-rest/rows/pg-evictable.js';
import { PgStore, type PgStoreOptions } from '../../../../src/daemon/store/pg/pg-store.js';
import { eventually } from '../../../helpers/eventually.js';
import { appliedAtCommit } from '../../../helpers/store-suite.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../../../helpers/postgres.js';

// The lazy load of execution rows (at-rest/rows/pg-cold-rows.ts, decision 077): a start, a standby and a
// takeover read the rows' summary columns into a directory and no document, read back by the
// replay what a journal entry after the snapshot changes, and hand the rest to the engine's
// cache through `evictable` (pg-evictable.ts), which reads a document by its key.

interface Item {
  readonly id: string;
  readonly n: number;
}
interface XState {
  dir: Record<string, string>;
  items: Record<string, Item | undefined>;
  seen: number;
}
type XRecord =
  { op: 'dir'; k: string; v: string } | { op: 'item'; id: string; by: number } | { op: 'gone'; id: string };

const PARTITIONS = 4;
const AT = new Date('2026-11-27T10:00:00.000Z');

const reducer: Omit<PgStoreOptions<XState, XRecord>, 'connectionString' | 'owner'> = {
  initialState: () => ({ dir: {}, items: {}, seen: 0 }),
  derived: ['seen'],
  apply: (s, r) => {
    s.seen++;
    if (r.op === 'dir') s.dir[r.k] = r.v;
    else if (r.op === 'item') s.items[r.id] = { id: r.id, n: (s.items[r.id]?.n ?? 0) + r.by };
    else delete s.items[r.id];
  },
  snapshotCollection: {
    key: 'items',
    touched: (r, visit) => r.op !== 'dir' && visit(r.id),
    adopt: (state, entry) => void ((state as XState).items[(entry as Item).id] = entry as Item),
    evict: (state, id) => void delete (state as XState).items[id],
  },
  rows: ROWS_AT_REST,
  summarize: (execution, state) => {
    const item = execution as Item;
    return {
      id: item.id,
      organization: `org-${state.dir.org ?? 'none'}`,
      processId: 'flow',
      processVersion: '1',
      environment: 'default',
      stateCd: 1,
      root: null,
      parent: null,
      startMs: 0,
      triggered: item.n % 2 === 0,
      child: false,
      correlationKey: `key-${item.n}`,
      dueMs: item.n * 1000,
      active: 0,
      waits: [{ kind: 'timer', node: `n${item.n}` }],
    } satisfies ExecutionSummary;
  },
};

/** Every item a store holds: the resident ones, and those left unread read back from their rows. */
async function everything(store: PgStore<XState, XRecord>): Promise<Record<string, Item | undefined>> {
  const out: Record<string, Item | undefined> = { ...store.state.items };
  for (const id of store.evictable!.unread!.list({ limit: Infinity }))
    out[id] = (await store.evictable!.read(id)) as Item;
  return out;
}

const sorted = (o: object) => Object.keys(o).sort();

t.test('execution rows loaded lazily', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  const fresh = async () => {
    const url = await server.createDatabase(`lazy_${++databases}`);
    return { url, query: (sql: string, values?: unknown[]) => queryAt(url, sql, values) };
  };
  const open = (url: string, owner: string, extra: Partial<PgStoreOptions<XState, XRecord>> = {}) =>
    PgStore.open<XState, XRecord>({ connectionString: url, owner, partitions: PARTITIONS, ...reducer, ...extra });
  /** A database whose rows hold 30 items over the 3 execution partitions, checkpointed; its store still open. */
  const checkpointed = async () => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const ids = Array.from({ length: 30 }, (_, i) => uuidv7In((i % 3) + 1, PARTITIONS, AT));
    await a.commit({ op: 'dir', k: 'org', v: 'acme' });
    for (const [i, id] of ids.entries()) await a.commit({ op: 'item', id, by: i + 1 });
    await a.checkpoint();
    return { db, a, ids };
  };
  /** `checkpointed`, with entries after the checkpoint, closed. */
  const filled = async () => {
    const { db, a, ids } = await checkpointed();
    const added = uuidv7In(2, PARTITIONS, AT);
    await a.commit({ op: 'item', id: ids[0]!, by: 10 }, { op: 'gone', id: ids[1]! });
    await a.commit({ op: 'item', id: added, by: 1 });
    const expected = structuredClone(a.state.items);
    await a.close({ checkpoint: false });
    return { db, ids, added, expected };
  };

  t.test('a start reads summaries, and the replay reads back what it changes', async (t) => {
    const { db, ids, added, expected } = await filled();
    const b = await open(db.url, 'b', { lazy: true });
    t.teardown(() => b.close({ checkpoint: false }));
    const unread = b.evictable?.unread;
    if (!unread) throw new Error('a lazy store has an evictable port');
    t.same(
      sorted(b.state.items),
      [ids[0]!, added].sort(),
      'resident: only what the journal after the snapshot changed',
    );
    t.equal(unread.size, 28, 'the others, but the one the journal removed, are summaries');
    t.notOk(unread.has(ids[1]!), 'the one removed is in neither');
    const summary = unread.get(ids[5]!)!.summary;
    t.match(
      summary,
      {
        id: ids[5]!,
        organization: 'org-acme',
        processId: 'flow',
        stateCd: 1,
        triggered: true,
        child: false,
        correlationKey: 'key-6',
        dueMs: 6000,
        waits: [{ kind: 'timer', node: 'n6' }],
      },
      'a summary is its row’s columns, flags included',
    );
    t.equal(unread.nextDue(), 3000, 'the directory’s earliest timer is the earliest cold one');
    t.same(await b.evictable!.read(ids[5]!), { id: ids[5]!, n: 6 }, 'a document is read by its key');
    t.ok(b.evictable!.clean(ids[5]!), 'an execution unchanged since its row was written is clean');
    t.notOk(b.evictable!.clean(ids[0]!), 'one the replay changed is not, until a checkpoint writes it');
    t.same(await everything(b), expected, 'what it holds and what it can read back is the state it loaded');
    const guarded: string[] = [];
    b.evictable!.guard((key) => guarded.push(key));
    await b.commit({ op: 'item', id: ids[0]!, by: 1 });
    t.same(guarded, [ids[0]!], 'the cache’s guard sees each execution a record changes before it applies');
    let told = 0;
    b.evictable!.onCheckpoint(() => told++);
    await b.checkpoint();
    await eventually('told of the checkpoint', () => told === 1);
    t.ok(b.evictable!.clean(ids[0]!), 'written by the checkpoint, it is clean');
    const [row] = await db.query('SELECT doc FROM wfx_executions WHERE id = $1', [ids[0]!]);
    t.same(JSON.parse(row!.doc as string), { id: ids[0]!, n: 12 }, 'the checkpoint wrote what changed');
    await t.rejects(b.evictable!.read(ids[1]!), { code: 'SNAPSHOT_CORRUPT' }, 'an id without a row is refused');
  });

  t.test('a row without its whole summary is loaded whole, and written again with it', async (t) => {
    const { db, ids, expected } = await filled();
    await db.query('UPDATE wfx_executions SET flags = NULL WHERE id = $1', [ids[7]!]);
    await db.query('UPDATE wfx_executions SET organization = NULL WHERE id = $1', [ids[8]!]);
    const b = await open(db.url, 'b', { lazy: true });
    t.teardown(() => b.close({ checkpoint: false }));
    t.ok(b.state.items[ids[7]!] && b.state.items[ids[8]!], 'both are resident');
    t.notOk(b.evictable!.unread!.has(ids[7]!) || b.evictable!.unread!.has(ids[8]!), 'and not summaries');
    t.notOk(b.evictable!.clean(ids[7]!), 'marked changed');
    t.same(await everything(b), expected);
    await b.checkpoint();
    const rows = await db.query('SELECT flags, organization FROM wfx_executions WHERE id = ANY($1) ORDER BY id', [
      [ids[7]!, ids[8]!],
    ]);
    t.same(
      rows.map((r) => r.organization),
      ['org-acme', 'org-acme'],
    );
    t.notOk(
      rows.some((r) => r.flags === null),
      'the checkpoint wrote their summaries whole',
    );
  });

  t.test('a follower that finds a checkpoint past it loads the rows again, as summaries', async (t) => {
    const { db, ids, added } = await filled();
    const a = await open(db.url, 'a');
    t.teardown(() => a.close({ checkpoint: false }));
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    t.teardown(() => pool.end());
    const layout = { count: PARTITIONS, collection: reducer.snapshotCollection, initialState: reducer.initialState };
    const follower = await JournalFollower.load(pool, {
      ...layout,
      derived: reducer.derived,
      partitions: [0, 1, 2, 3],
      apply: reducer.apply,
      lazy: true,
      rows: ROWS_AT_REST,
      summarize: reducer.summarize,
    });
    t.same(sorted(follower.state.items), [ids[0]!, added].sort());
    await a.commit({ op: 'item', id: ids[9]!, by: 1 });
    await follower.catchUp();
    t.ok(follower.state.items[ids[9]!], 'an entry read after the load reads back what it changes');
    t.notOk(follower.unread!.has(ids[9]!));
    // The owner writes to partition 2, checkpoints and writes on: the entries of partition 2
    // the follower would read next are gone, so it loads that partition again. Partition 1 has
    // no entry it missed: the checkpoint wrote its rows as the copy has them, so what the copy
    // read back of it leaves for summaries.
    await a.commit({ op: 'item', id: ids[10]!, by: 1 });
    await a.checkpoint();
    await a.commit({ op: 'item', id: ids[13]!, by: 1 });
    await follower.catchUp();
    t.same(sorted(follower.state.items), [ids[13]!], 'resident: only what came after the checkpoint');
    t.ok(follower.unread!.has(added) && follower.unread!.has(ids[10]!), 'the partition loaded again: summaries');
    t.ok(follower.unread!.has(ids[0]!) && follower.unread!.has(ids[9]!), 'the partition settled: summaries');
    t.equal(follower.unread!.size, 29, 'the rest are summaries, none twice');
    t.equal(follower.dirty.size, 1, 'changed since the rows: only the one after the checkpoint');
    t.match(follower.unread!.get(ids[9]!)?.summary, { dueMs: 11_000, correlationKey: 'key-11' }, 'as it is now');
    const all: Record<string, unknown> = { ...follower.state.items };
    const cold = follower.unread!.list({ limit: Infinity });
    for (const p of [1, 2, 3]) {
      const mine = cold.filter((id) => partitionOf(id, PARTITIONS) === p);
      for (const [id, doc] of await readDocs(pool, p, mine)) all[id] = doc;
    }
    t.same(all, a.state.items, 'what it holds and its rows are the owner’s state');
    // A row that does not parse, read back for an entry: the copy is broken, not merely behind.
    await db.query(`UPDATE wfx_executions SET doc = '{' WHERE id = $1`, [ids[20]!]);
    await a.commit({ op: 'item', id: ids[20]!, by: 1 });
    await t.rejects(follower.catchUp(), { code: 'SNAPSHOT_CORRUPT' });
    t.match(follower.broken, { code: 'SNAPSHOT_CORRUPT' }, 'and it stops following');
  });

  t.test('a standby holds summaries, and its takeover serves the rest from rows', async (t) => {
    const { db, ids, added, expected } = await filled();
    const a = await open(db.url, 'a', { leaseMs: 600_000 });
    const waiting = new AbortController();
    t.teardown(() => waiting.abort());
    let applied: (() => number) | null = null;
    let loaded: XState | null = null;
    const standby = open(db.url, 'b', {
      leaseMs: 600_000,
      lazy: true,
      standby: {
        signal: waiting.signal,
        following: (seq) => (applied = seq),
        loaded: (state) => (loaded = structuredClone(state)),
      },
    });
    void standby.catch(() => undefined);
    await eventually('the standby loaded its copy', () => loaded !== null);
    t.same(sorted(loaded!.items), [ids[0]!, added].sort(), 'its copy holds what the journal changed, no more');
    await a.commit({ op: 'item', id: ids[3]!, by: 7 }, { op: 'gone', id: ids[4]! });
    await eventually('the standby caught up', () => applied?.() === a.lastSeq);
    await a.checkpoint();
    const now = structuredClone(a.state.items);
    await a.close({ checkpoint: false });
    const b = await standby;
    t.teardown(() => b.close({ checkpoint: false }));
    t.ok(b.evictable, 'the takeover hands its engine the executions left unread');
    t.same(Object.keys(b.state.items), [], 'the owner’s checkpoint wrote what its copy had read back: all let go');
    t.equal(b.evictable!.unread!.size, 29);
    t.same(await everything(b), now, 'the takeover holds the state it took over');
    t.notSame(now, expected);
    await b.checkpoint();
    t.same(
      Object.fromEntries(
        (await db.query('SELECT id, doc FROM wfx_executions')).map((r) => [r.id, JSON.parse(r.doc as string)]),
      ),
      now,
      'its first checkpoint leaves the rows as the state',
    );
  });

  t.test('an execution of a transaction kept out of the journal gets no row until it settles', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    t.teardown(() => a.close({ checkpoint: false }));
    const id = uuidv7In(1, PARTITIONS, AT);
    let written!: () => void;
    const durable = new Promise<void>((resolve) => (written = resolve));
    // As a one-step execution is: its records applied, written elsewhere (history), then removed.
    const tx = a.transact(
      appliedAtCommit(a, reducer.apply, (emit) => emit({ op: 'item', id, by: 1 })),
      () => ({ durable, settle: [{ op: 'gone', id }] }),
    );
    const checkpoint = a.checkpoint(); // serializes now, writes once the diverted write is durable
    written();
    await tx.durable;
    await checkpoint;
    const rows = async () => (await db.query('SELECT id FROM wfx_executions WHERE id = $1', [id])).length;
    t.equal(await rows(), 0, 'no row while no journal entry backs it: a standby would keep it forever');
    tx.settle!();
    t.notOk(a.state.items[id], 'settled: it left the state');
    await a.checkpoint();
    t.equal(await rows(), 0, 'and no row after');
    await a.close({ checkpoint: false });
    const c = await open(db.url, 'c', { lazy: true });
    t.teardown(() => c.close({ checkpoint: false }));
    t.notOk(c.evictable!.unread!.has(id), 'a load lists no such execution');
  });

  t.test('a settled execution kept out of the journal leaves no mark for the next checkpoint', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    t.teardown(() => a.close({ checkpoint: false }));
    const ids = Array.from({ length: 20 }, () => uuidv7In(1, PARTITIONS, AT));
    for (const id of ids) {
      const tx = a.transact(
        appliedAtCommit(a, reducer.apply, (emit) => emit({ op: 'item', id, by: 1 })),
        () => ({ durable: Promise.resolve(), settle: [{ op: 'gone', id }] }),
      );
      await tx.durable;
      tx.settle!();
    }
    // Checkpoints follow the journal's growth, which these leave alone: marks would stay.
    t.equal(a.counters.changed, 0, 'twenty settled: none marked');
    await a.commit({ op: 'item', id: uuidv7In(2, PARTITIONS, AT), by: 1 });
    t.equal(a.counters.changed, 1, 'a journaled change is marked');
    await a.checkpoint();
    t.equal(a.counters.changed, 0, 'and its row written');
  });

  t.test('reads of the cache go as few queries, a few at a time', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const ids = Array.from({ length: 1200 }, (_, i) => uuidv7In((i % 3) + 1, PARTITIONS, AT));
    await a.commit(...ids.map((id, i): XRecord => ({ op: 'item', id, by: i + 1 })));
    await a.checkpoint();
    await a.close({ checkpoint: false });
    const pool = new pg.Pool({ connectionString: db.url, max: 4 });
    t.teardown(() => pool.end());
    let queries = 0;
    let inFlight = 0;
    let most = 0;
    const counting = {
      query: async (...args: Parameters<pg.Pool['query']>) => {
        queries++;
        most = Math.max(most, ++inFlight);
        try {
          return await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
        } finally {
          inFlight--;
        }
      },
    } as unknown as pg.Pool;
    const reads = new RowReads(counting, (id) => partitionOf(id, PARTITIONS));
    const missing = uuidv7In(1, PARTITIONS, AT);
    const [docs, refused] = await Promise.all([
      Promise.all(ids.map((id) => reads.read(id))),
      reads.read(missing).catch((err: unknown) => err),
    ]);
    t.same(
      docs,
      ids.map((id, i) => ({ id, n: i + 1 })),
      'each read gets its own document',
    );
    t.match(refused, { code: 'SNAPSHOT_CORRUPT' }, 'an id without a row is refused, the others not');
    t.equal(queries, 3, '1,201 reads asked in one turn: one query per partition (400 ids each)');
    t.ok(most <= 2, `at most 2 queries in flight (${most})`);
    t.same(await reads.read(ids[7]!), { id: ids[7]!, n: 8 }, 'a later read is a query of its own');
    t.equal(queries, 4);
  });

  t.test('summaries read a page at a time grow the directory by half at least, not by a page', async (t) => {
    const { db, a, ids } = await checkpointed();
    await a.close({ checkpoint: false });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    t.teardown(() => client.end());
    const directory = new ExecutionIndex(16);
    const growths: number[] = [];
    const reserve = directory.reserve.bind(directory);
    directory.reserve = (count: number) => {
      if (count > directory.slotCapacity) growths.push(count);
      reserve(count);
    };
    let rows = 0;
    for (const partition of [1, 2, 3]) rows += (await readSummaries(client, partition, directory, {}, 2)).rows;
    t.equal(rows, ids.length, 'every row read, two per query');
    t.equal(directory.size, ids.length, 'each as a summary in the directory');
    // Room for one more page at each would grow the columns 7 times between 16 and 30 rows,
    // copying all of them each time: a load of a million rows went quadratic.
    t.same(growths, [24, 36], 'grown twice, by half');
  });

  t.test('one partition: partition 0 holds the flows and the executions, loaded lazily all the same', async (t) => {
    const db = await fresh();
    const one = { partitions: 1 };
    const a = await open(db.url, 'a', one);
    t.teardown(() => a.close({ checkpoint: false }));
    const ids = Array.from({ length: 10 }, () => uuidv7In(0, 1, AT));
    await a.commit({ op: 'dir', k: 'org', v: 'acme' });
    for (const [i, id] of ids.entries()) await a.commit({ op: 'item', id, by: i + 1 });
    await a.checkpoint();
    await a.commit({ op: 'item', id: ids[0]!, by: 10 });
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    t.teardown(() => pool.end());
    const follower = await JournalFollower.load(pool, {
      count: 1,
      collection: reducer.snapshotCollection,
      initialState: reducer.initialState,
      derived: reducer.derived,
      partitions: [0],
      apply: reducer.apply,
      lazy: true,
      rows: ROWS_AT_REST,
      summarize: reducer.summarize,
    });
    t.same(sorted(follower.state.items), [ids[0]!], 'resident: what the journal after the snapshot changed');
    t.equal(follower.unread!.size, 9);
    t.same(follower.state.dir, { org: 'acme' }, 'the rest of partition 0 is loaded as it was');
    // The owner writes, checkpoints and writes on: the follower finds its next entry gone.
    await a.commit({ op: 'item', id: ids[1]!, by: 1 });
    await a.checkpoint();
    await a.commit({ op: 'item', id: ids[2]!, by: 1 }, { op: 'dir', k: 'more', v: 'yes' });
    await follower.catchUp();
    t.same(sorted(follower.state.items), [ids[2]!], 'loaded again: only what came after');
    t.equal(follower.unread!.size, 9, 'none twice');
    t.same(follower.state.dir, { org: 'acme', more: 'yes' });
    const all: Record<string, unknown> = { ...follower.state.items };
    for (const [id, doc] of await readDocs(pool, 0, follower.unread!.list({ limit: Infinity }))) all[id] = doc;
    t.same(all, a.state.items, 'what it holds and its rows are the owner’s state');
  });

  t.test('a partition taken while running loads summaries; one given up leaves the directory', async (t) => {
    const { db, a, ids } = await checkpointed();
    const all = structuredClone(a.state.items);
    await a.close({ checkpoint: false });
    const of = (partitions: number[]) =>
      Object.fromEntries(Object.entries(all).filter(([id]) => partitions.includes(partitionOf(id, PARTITIONS))));
    // A sharing daemon's store: partitions 0 and 1 at the start, 2 and 3 taken while it runs.
    const b = await open(db.url, 'b', { lazy: true, held: () => [0, 1] });
    t.teardown(() => b.close({ checkpoint: false }));
    t.equal(b.evictable!.unread!.size, 10, 'the partition held: summaries');
    const given: string[] = [];
    t.ok(await b.take([2, 3], (got) => given.push(...got)), 'taken');
    t.same(given.sort(), Object.keys(of([2, 3])).sort(), 'the owner is given every id taken, summaries included');
    t.same(b.state.items, {}, 'none of them read');
    t.equal(b.evictable!.unread!.size, 30, 'their summaries are in the directory');
    t.type(b.evictable!.epoch!(ids[1]!), 'number', 'held here now');
    t.same(await everything(b), all);
    await b.drop([3]);
    t.equal(b.evictable!.epoch!(ids[2]!), null, 'given up: not held');
    t.equal(b.evictable!.unread!.size, 20, 'its summaries left the directory');
    t.same(await everything(b), of([1, 2]), 'what it holds is the partitions it kept');
  });
});
