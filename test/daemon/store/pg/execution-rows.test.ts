import t from 'tap';
import { partitionOf, uuidv7In } from '../../../../src/daemon/state/ids.js';
import type { ExecutionSummary } from '../../../../src/daemon/state/execution-summary.js';
import { PgStore, type PgStoreOptions } from '../../../../src/daemon/store/pg/pg-store.js';
import { eventually } from '../../../helpers/eventually.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../../../helpers/postgres.js';

// Executions as rows of wfx_executions (pg-execution-rows.ts, decision 068 step 9): a checkpoint
// writes only those changed since the last, deletes those gone, beside a snapshot that no longer
// holds them; a load, a standby and a takeover read them back; a database whose snapshots still
// hold their executions opens, and its next checkpoint moves them into rows.

interface XState {
  dir: Record<string, string>;
  items: Record<string, number | undefined>;
  /** Derived: never in a snapshot. */
  seen: number;
}
type XRecord =
  { op: 'dir'; k: string; v: string } | { op: 'item'; id: string; by: number } | { op: 'gone'; id: string };

const reducer: Omit<PgStoreOptions<XState, XRecord>, 'connectionString' | 'owner'> = {
  initialState: () => ({ dir: {}, items: {}, seen: 0 }),
  derived: ['seen'],
  apply: (s, r) => {
    s.seen++;
    if (r.op === 'dir') s.dir[r.k] = r.v;
    else if (r.op === 'item') s.items[r.id] = (s.items[r.id] ?? 0) + r.by;
    else delete s.items[r.id];
  },
  snapshotCollection: { key: 'items', touched: (r, visit) => r.op !== 'dir' && visit(r.id) },
};

/** A summary that says which execution and what it holds, to find in the row's columns. */
const summarize = (execution: unknown, state: XState): ExecutionSummary => ({
  id: 'x',
  organization: `org-${state.dir.org ?? 'none'}`,
  processId: 'flow',
  processVersion: '1',
  environment: 'default',
  stateCd: 1,
  root: null,
  parent: null,
  startMs: 0,
  triggered: false,
  child: false,
  correlationKey: null,
  dueMs: (execution as number) * 1000,
  active: 0,
  waits: [{ kind: 'timer', node: `n${execution as number}` }],
});

const AT = new Date('2026-11-25T10:00:00.000Z');
const view = (s: XState) => ({ dir: s.dir, items: s.items });

t.test('executions as rows', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  const fresh = async () => {
    const url = await server.createDatabase(`rows_${++databases}`);
    return { url, query: (sql: string, values?: unknown[]) => queryAt(url, sql, values) };
  };
  const open = (url: string, owner: string, extra: Partial<PgStoreOptions<XState, XRecord>> = {}) =>
    PgStore.open<XState, XRecord>({ connectionString: url, owner, partitions: 4, ...reducer, ...extra });
  /** Each row's id and the transaction that last wrote it. */
  const versions = async (query: (sql: string) => Promise<Array<Record<string, unknown>>>) =>
    new Map(
      (await query('SELECT id, xmin::text AS x FROM wfx_executions')).map((r) => [r.id as string, r.x as string]),
    );
  /** The rows as id -> parsed document. */
  const docs = async (query: (sql: string) => Promise<Array<Record<string, unknown>>>) =>
    Object.fromEntries(
      (await query('SELECT id, doc FROM wfx_executions ORDER BY id')).map((r) => [r.id, JSON.parse(r.doc as string)]),
    ) as Record<string, number>;

  t.test('a checkpoint writes the k executions changed of n, and deletes those gone', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { summarize });
    const ids = Array.from({ length: 30 }, (_, i) => uuidv7In((i % 3) + 1, 4, AT));
    await a.commit({ op: 'dir', k: 'org', v: 'acme' });
    for (const [i, id] of ids.entries()) await a.commit({ op: 'item', id, by: i + 1 });
    await a.checkpoint();
    t.same(await docs(db.query), a.state.items, 'every execution is a row');
    t.same(
      (await db.query('SELECT DISTINCT state FROM wfx_snapshots WHERE partition > 0')).map((r) => r.state),
      ['{}'],
      'the execution partitions’ snapshots hold none of them',
    );
    const before = await versions(db.query);
    const changed = [ids[0]!, ids[4]!, ids[8]!];
    for (const id of changed) await a.commit({ op: 'item', id, by: 100 });
    await a.commit({ op: 'gone', id: ids[5]! });
    await a.checkpoint();
    const after = await versions(db.query);
    t.same(
      [...after]
        .filter(([id, x]) => before.get(id) !== x)
        .map(([id]) => id)
        .sort(),
      [...changed].sort(),
      'the checkpoint rewrote the 3 rows changed, no other',
    );
    t.notOk(after.has(ids[5]!), 'the execution gone has no row');
    t.equal(after.size, 29);
    t.same(await docs(db.query), a.state.items, 'the rows are the state');
    const [row] = await db.query(
      'SELECT partition, organization, process_id, state_cd, root, due_ms::int AS due, waits FROM wfx_executions WHERE id = $1',
      [ids[4]!],
    );
    t.same(
      row,
      {
        partition: partitionOf(ids[4]!, 4),
        organization: 'org-acme',
        process_id: 'flow',
        state_cd: 1,
        root: null,
        due: 105_000,
        waits: [{ kind: 'timer', node: 'n105' }],
      },
      'its summary beside it',
    );
    const quiet = await versions(db.query);
    await a.commit({ op: 'dir', k: 'k', v: 'v' });
    await a.checkpoint();
    t.same(await versions(db.query), quiet, 'a checkpoint of no execution writes no row');
    await a.close({ checkpoint: false });
    const again = await open(db.url, 'a');
    t.same(view(again.state), view(a.state), 'a start reads the rows back');
    t.equal(again.state.seen, 0, 'nothing replayed');
    await again.close({ checkpoint: false });
  });

  t.test('with one partition, the executions are rows of partition 0', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { partitions: 1 });
    const ids = [uuidv7In(1, 4, AT), uuidv7In(2, 4, AT)];
    await a.commit(
      { op: 'dir', k: 'k', v: 'v' },
      { op: 'item', id: ids[0]!, by: 1 },
      { op: 'item', id: ids[1]!, by: 2 },
    );
    await a.checkpoint();
    t.same(
      (await db.query('SELECT DISTINCT partition FROM wfx_executions')).map((r) => r.partition),
      [0],
    );
    t.same(
      JSON.parse((await db.query('SELECT state FROM wfx_snapshots'))[0]!.state as string),
      { dir: { k: 'v' }, items: null },
      'the snapshot holds none, and no empty collection a daemon of before the rows would read',
    );
    await a.close({ checkpoint: false });
    const again = await open(db.url, 'a', { partitions: 1 });
    t.same(view(again.state), view(a.state));
    await again.close({ checkpoint: false });
  });

  t.test('a database whose snapshots hold executions opens; its next checkpoint moves them into rows', async (t) => {
    for (const partitions of [4, 1]) {
      const db = await fresh();
      const a = await open(db.url, 'a', { partitions });
      const ids = Array.from({ length: 12 }, (_, i) => uuidv7In((i % 3) + 1, 4, AT));
      await a.commit({ op: 'dir', k: 'k', v: 'v' });
      for (const [i, id] of ids.entries()) await a.commit({ op: 'item', id, by: i + 1 });
      await a.checkpoint();
      await a.close({ checkpoint: false });
      // What a daemon of before the rows wrote: each partition's executions inside its snapshot.
      await db.query(`
        UPDATE wfx_snapshots s
           SET state = (s.state::jsonb || jsonb_build_object('items', coalesce(
             (SELECT jsonb_object_agg(e.id, e.doc::jsonb) FROM wfx_executions e WHERE e.partition = s.partition),
             '{}'::jsonb)))::text
         WHERE s.partition > 0 OR (SELECT partitions FROM wfx_cluster) = 1`);
      await db.query('DELETE FROM wfx_executions');
      const old = await open(db.url, 'a', { partitions });
      t.same(view(old.state), view(a.state), `${partitions}: it opens with every execution`);
      await old.commit({ op: 'item', id: ids[0]!, by: 1000 });
      // A crash before the checkpoint that would move them: nothing lost, still in the snapshots.
      await old.close({ checkpoint: false });
      const crashed = await open(db.url, 'a', { partitions });
      t.equal(crashed.state.items[ids[0]!], 1001);
      t.same(Object.keys(crashed.state.items).sort(), [...ids].sort());
      // A checkpoint that fails (a row refused) leaves snapshots and journal as they were...
      await db.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.id = '${ids[7]!}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
      await db.query('CREATE TRIGGER refuse BEFORE INSERT ON wfx_executions FOR EACH ROW EXECUTE FUNCTION refuse()');
      await t.rejects(crashed.checkpoint());
      t.same(await docs(db.query), {}, `${partitions}: no row of the failed checkpoint`);
      await db.query('DROP TRIGGER refuse ON wfx_executions');
      await db.query('DROP FUNCTION refuse');
      // ...and the next one moves every execution, changed or not.
      await crashed.checkpoint();
      t.same(await docs(db.query), crashed.state.items, `${partitions}: every execution moved into rows`);
      const snapshots = await db.query('SELECT partition, state FROM wfx_snapshots WHERE partition >= 0');
      t.notOk(
        snapshots.some((s) => (JSON.parse(s.state as string) as { items?: unknown }).items != null),
        'no snapshot holds executions any more',
      );
      t.same(await db.query('SELECT count(*)::int AS n FROM wfx_journal'), [{ n: 0 }]);
      await crashed.close({ checkpoint: false });
      const upgraded = await open(db.url, 'a', { partitions });
      t.same(view(upgraded.state), view(crashed.state), `${partitions}: read back from the rows`);
      await upgraded.close({ checkpoint: false });
    }
  });

  t.test('a standby reads the rows, follows checkpoints, and its takeover writes what it replayed', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { leaseMs: 600_000 });
    const ids = Array.from({ length: 9 }, (_, i) => uuidv7In((i % 3) + 1, 4, AT));
    for (const id of ids) await a.commit({ op: 'item', id, by: 1 });
    await a.checkpoint();
    await a.commit({ op: 'item', id: ids[0]!, by: 1 });
    const waiting = new AbortController();
    t.teardown(() => waiting.abort());
    let applied: (() => number) | null = null;
    let loaded: XState | null = null;
    const standby = open(db.url, 'b', {
      leaseMs: 600_000,
      standby: {
        signal: waiting.signal,
        following: (seq) => (applied = seq),
        loaded: (state) => (loaded = structuredClone(state)),
      },
    });
    void standby.catch(() => undefined);
    await eventually('the standby loaded its copy', () => loaded !== null);
    t.same(Object.keys(loaded!.items).sort(), [...ids].sort(), 'its copy read the rows');
    // A checkpoint deletes the journal the copy read: it loads the rows again.
    await a.commit({ op: 'item', id: ids[1]!, by: 5 }, { op: 'gone', id: ids[2]! });
    await a.checkpoint();
    const added = uuidv7In(2, 4, AT);
    await a.commit({ op: 'item', id: ids[3]!, by: 7 });
    await a.commit({ op: 'item', id: added, by: 1 }, { op: 'gone', id: ids[4]! });
    await eventually('the standby caught up past the checkpoint', () => applied?.() === a.lastSeq);
    await a.close({ checkpoint: false });
    const b = await standby;
    t.same(view(b.state), view(a.state), 'the takeover has the state it took over');
    const before = await versions(db.query);
    await b.checkpoint();
    const after = await versions(db.query);
    const rewritten = [...after].filter(([id, x]) => before.get(id) !== x).map(([id]) => id);
    // What the copy replayed since it last loaded each partition's rows: at least what came after the checkpoint.
    t.ok(rewritten.includes(ids[3]!) && rewritten.includes(added), 'its first checkpoint writes what it replayed');
    t.notOk(
      ids.slice(5).some((id) => rewritten.includes(id)),
      'and nothing untouched since the checkpoint it loaded',
    );
    t.notOk(after.has(ids[4]!), 'and deletes what left');
    t.same(await docs(db.query), b.state.items);
    await b.close({ checkpoint: false });
    const cold = await open(db.url, 'c');
    t.same(view(cold.state), view(a.state), 'a cold start reads the same');
    await cold.close({ checkpoint: false });
  });

  t.test('partitions given up and taken carry their rows', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const ids = Array.from({ length: 9 }, (_, i) => uuidv7In((i % 3) + 1, 4, AT));
    for (const id of ids) await a.commit({ op: 'item', id, by: 1 });
    await a.checkpoint();
    await a.commit({ op: 'item', id: ids[1]!, by: 10 }, { op: 'gone', id: ids[4]! });
    const inTwo = ids.filter((id) => partitionOf(id, 4) === 2 && id !== ids[4]);
    await a.drop([2]);
    t.same(
      (await db.query('SELECT id FROM wfx_executions WHERE partition = 2 ORDER BY id')).map((r) => r.id),
      inTwo.sort(),
      'the rows of the partition given up are written with its snapshot',
    );
    t.equal(
      JSON.parse((await db.query('SELECT doc FROM wfx_executions WHERE id = $1', [ids[1]!]))[0]!.doc as string),
      11,
    );
    const b = await open(db.url, 'b', { held: () => [2] });
    t.same(Object.keys(b.state.items).sort(), inTwo.sort(), 'another store loads them from the rows');
    await b.commit({ op: 'item', id: ids[1]!, by: 100 });
    await b.close(); // gives partition 2 up, checkpointed
    let taken: string[] = [];
    t.ok(await a.take([2], (loaded) => (taken = loaded)));
    t.same(taken.sort(), inTwo.sort(), 'taken back from the rows');
    t.equal(a.state.items[ids[1]!], 111);
    await a.close();
  });
});
