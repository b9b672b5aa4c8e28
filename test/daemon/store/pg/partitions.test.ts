import t from 'tap';
import pg from 'pg';
import { partitionOf, uuidv7In } from '../../../../src/daemon/state/ids.js';
import { WFX_STORE, type WfxRecord } from '../../../../src/daemon/state/records.js';
import { ExecutionTable } from '../../../../src/daemon/state/execution-table.js';
import type { WfxState } from '../../../../src/daemon/state/state.js';
import { JournalFollower } from '../../../../src/daemon/store/pg/journal-follower.js';
import { MIGRATIONS } from '../../../../src/daemon/store/pg/migrations.js';
import { PgStore, type PgStoreOptions } from '../../../../src/daemon/store/pg/pg-store.js';
import { eventually } from '../../../helpers/eventually.js';
import { inTransaction, POSTGRES_SKIP, queryAt, standbyListens, startPostgres } from '../../../helpers/postgres.js';
import { startRecord } from '../../../helpers/state.js';

// The state cut into partitions (pg/partition-state.ts): a directory in partition 0, executions
// ("items" here) spread over the others by id. What goes where, snapshots per partition, all-or-
// none fencing of a commit that spans partitions, a standby following them all.

interface Item {
  n: number;
  children: string[];
}
interface PState {
  dir: Record<string, string>;
  items: Record<string, Item | undefined>;
  /** Derived: never in a snapshot. */
  seen: number;
}
type PRecord =
  | { op: 'dir'; k: string; v: string }
  | { op: 'item'; id: string; by: number }
  | { op: 'child'; id: string; parent: string };

const reducer: Omit<PgStoreOptions<PState, PRecord>, 'connectionString' | 'owner'> = {
  initialState: () => ({ dir: {}, items: {}, seen: 0 }),
  derived: ['seen'],
  apply: (s, r) => {
    s.seen++;
    if (r.op === 'dir') s.dir[r.k] = r.v;
    else if (r.op === 'item') (s.items[r.id] ??= { n: 0, children: [] }).n += r.by;
    else {
      s.items[r.id] = { n: 0, children: [] };
      s.items[r.parent]?.children.push(r.id);
    }
  },
  snapshotCollection: {
    key: 'items',
    touched: (r, visit) => {
      if (r.op === 'item') visit(r.id);
      else if (r.op === 'child') {
        visit(r.id);
        visit(r.parent);
      }
    },
  },
};

const AT = new Date('2026-11-25T10:00:00.000Z');
const view = (s: PState) => ({ dir: s.dir, items: s.items });

t.test('a store cut into partitions', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  const fresh = async () => {
    const url = await server.createDatabase(`partitions_${++databases}`);
    return { url, query: (sql: string, values?: unknown[]) => queryAt(url, sql, values) };
  };
  const open = (url: string, owner: string, extra: Partial<PgStoreOptions<PState, PRecord>> = {}) =>
    PgStore.open<PState, PRecord>({ connectionString: url, owner, partitions: 4, ...reducer, ...extra });
  /** Each partition's journal, its entries' records in order. */
  const journals = async (query: (sql: string) => Promise<pg.QueryResultRow[]>) => {
    const rows = await query('SELECT partition, seq, entry FROM wfx_journal ORDER BY partition, seq');
    const out: Record<number, PRecord[][]> = {};
    for (const r of rows) (out[r.partition as number] ??= []).push(JSON.parse(r.entry as string) as PRecord[]);
    return out;
  };

  t.test("each commit's records go to the journal of the partition they change", async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    t.equal(a.layout.count, 4);
    const [x, y] = [uuidv7In(1, 4, AT), uuidv7In(3, 4, AT)];
    await a.commit({ op: 'dir', k: 'flow', v: 'v1' }, { op: 'item', id: x, by: 1 }, { op: 'item', id: y, by: 2 });
    await a.commit({ op: 'item', id: x, by: 10 });
    t.same(await journals(db.query), {
      0: [[{ op: 'dir', k: 'flow', v: 'v1' }]],
      1: [[{ op: 'item', id: x, by: 1 }], [{ op: 'item', id: x, by: 10 }]],
      3: [[{ op: 'item', id: y, by: 2 }]],
    });
    t.equal(a.lastSeq, 4, 'entries summed over the partitions');
    t.same([a.lastSeqOf(0), a.lastSeqOf(1), a.lastSeqOf(2), a.lastSeqOf(3)], [1, 2, 0, 1], 'a seq per partition');
    await a.close({ checkpoint: false });
    const again = await open(db.url, 'a');
    t.same(view(again.state), view(a.state), 'the partitions replayed make the same state');
    t.same(again.state.items[x], { n: 11, children: [] });
    await again.close({ checkpoint: false });
  });

  t.test("new executions: a root in an execution partition, a child in its parent's", async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const roots = Array.from({ length: 100 }, () => a.newExecutionId!(AT, null));
    t.same([...new Set(roots.map((id) => partitionOf(id, 4)))].sort(), [1, 2, 3], 'roots spread over 1 to 3');
    const parent = roots[0]!;
    const child = a.newExecutionId!(AT, parent);
    t.equal(partitionOf(child, 4), partitionOf(parent, 4));
    await a.commit({ op: 'item', id: parent, by: 1 });
    await a.commit({ op: 'child', id: child, parent });
    t.same(a.state.items[parent]!.children, [child]);
    // An id drawn wrong (a child in another partition) would split a record: the store refuses it.
    const elsewhere = uuidv7In((partitionOf(parent, 4) % 3) + 1, 4, AT);
    await t.rejects(a.commit({ op: 'child', id: elsewhere, parent }), {
      code: 'STORE_FAILED',
      message: /changes executions of partitions/,
    });
    await a.close({ checkpoint: false });
    const again = await open(db.url, 'a');
    t.same(again.state.items[parent]!.children, [child], 'nothing of the refused record is durable');
    await again.close({ checkpoint: false });
  });

  t.test('a checkpoint writes a snapshot per partition; the journal after them replays', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const ids = [1, 2, 3, 1, 2].map((p) => uuidv7In(p, 4, AT));
    // A copy of the state as a standby keeps one, read before the checkpoint.
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    t.teardown(() => pool.end());
    const copy = await JournalFollower.load(pool, {
      ...reducer,
      collection: reducer.snapshotCollection,
      count: 4,
      partitions: [0, 1, 2, 3],
    });
    for (const [i, id] of ids.entries()) await a.commit({ op: 'dir', k: `k${i}`, v: id }, { op: 'item', id, by: i });
    await a.checkpoint();
    t.same(await db.query('SELECT count(*)::int AS n FROM wfx_journal'), [{ n: 0 }], 'the journal they cover is gone');
    const snapshots = await db.query('SELECT partition, seq, state FROM wfx_snapshots ORDER BY partition');
    t.same(
      snapshots.map((s) => [s.partition, Number(s.seq)]),
      [
        [0, 5],
        [1, 2],
        [2, 2],
        [3, 1],
      ],
    );
    const part = (p: number) => JSON.parse(snapshots[p]!.state as string) as Record<string, unknown>;
    t.same(Object.keys(part(0)), ['dir'], 'partition 0: the directory alone, no execution nor derived key');
    t.same(part(1), {}, 'partition 1: its executions are rows');
    const rows = await db.query('SELECT partition, id, doc FROM wfx_executions ORDER BY partition, id');
    t.same(
      rows.filter((r) => r.partition === 1).map((r) => r.id as string),
      [ids[0], ids[3]].sort(),
      "partition 1's rows: its executions' alone",
    );
    t.same(
      rows.map((r) => [r.id, JSON.parse(r.doc as string)]),
      rows.map((r) => [r.id, a.state.items[r.id as string]]),
      'each row holds its execution',
    );
    await a.commit({ op: 'item', id: ids[1]!, by: 100 }, { op: 'dir', k: 'after', v: 'x' });
    t.equal(await copy.catchUp(), 2, "the copy loads each partition's snapshot, then the 2 entries after");
    t.same(view(copy.state), view(a.state), 'and has the same state');
    t.same([...copy.snapshotSeqs.values()], [5, 2, 2, 1]);
    await a.close({ checkpoint: false });
    const again = await open(db.url, 'a');
    t.same(view(again.state), view(a.state));
    t.same([again.lastSeqOf(0), again.lastSeqOf(2)], [6, 3], 'seqs go on after the snapshots');
    await again.close();
  });

  t.test('a commit spanning partitions is fenced all or none', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const [x, y] = [uuidv7In(1, 4, AT), uuidv7In(2, 4, AT)];
    await a.commit({ op: 'item', id: x, by: 1 });
    // Another daemon took partition 2 alone (its lease lapsed, say): a commit that also writes
    // partitions 0 and 1, which this daemon still holds, must not land there either.
    await db.query("UPDATE wfx_partitions SET owner = 'b', epoch = epoch + 1 WHERE partition = 2");
    await t.rejects(
      a.commit({ op: 'dir', k: 'k', v: 'v' }, { op: 'item', id: x, by: 1 }, { op: 'item', id: y, by: 1 }),
      { code: 'STORE_LEASE_LOST' },
    );
    t.same(await journals(db.query), { 1: [[{ op: 'item', id: x, by: 1 }]] }, 'no entry of it in any partition');
    await t.rejects(a.history().putJson('2026-11-25', y, '{}'), { code: 'STORE_LEASE_LOST' });
    t.same(await db.query('SELECT id FROM wfx_history'), [], "nor a history row of partition 2's execution");
    await a.close();
  });

  t.test('the executions a load brings in are indexed, recovered and checkpointed', async (t) => {
    // The daemon's own state: its index of executions (ExecutionTable) is made on first use, as
    // partition 1's journal replays; partition 2's snapshot, loaded after, must be in it too.
    const db = await fresh();
    const openWfx = () =>
      PgStore.open<WfxState, WfxRecord>({ connectionString: db.url, owner: 'a', partitions: 4, ...WFX_STORE });
    const started = (id: string) => startRecord(id, AT.toISOString());
    const [x1, x2, y1] = [uuidv7In(1, 4, AT), uuidv7In(2, 4, AT), uuidv7In(1, 4, AT)];
    const a = await openWfx();
    await a.commit(started(x1), started(x2));
    await a.checkpoint();
    await a.commit(started(y1));
    await a.close({ checkpoint: false });
    const b = await openWfx();
    t.same([...ExecutionTable.of(b.state).ids()].sort(), [x1, x2, y1].sort(), 'every execution loaded is indexed');
    const z2 = uuidv7In(2, 4, AT);
    await b.commit(started(z2)); // partition 2 moves on: the close checkpoints it
    await b.close();
    const c = await openWfx();
    t.same(Object.keys(c.state.instances).sort(), [x1, x2, y1, z2].sort(), "the next checkpoint kept partition 2's");
    await c.close({ checkpoint: false });
  });

  t.test("appends in flight hold back a takeover, never the owner's renewals", async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { leaseMs: 600 });
    // An append in flight, as long as it likes: the lease rows locked as its fence locks them.
    const append = await inTransaction(
      t,
      db.url,
      "SELECT 1 FROM wfx_partitions WHERE owner = 'a' ORDER BY partition FOR KEY SHARE",
    );
    const leaseUntil = async () =>
      ((await append.query('SELECT min(lease_until) AS at FROM wfx_partitions')).rows[0] as { at: Date }).at;
    const before = await leaseUntil();
    await eventually('a renewal went through meanwhile', async () => (await leaseUntil()) > before);
    t.equal(a.failed, null, 'the lease holds');
    // A takeover of the partitions (their lease lapsed, say) waits for the append to end.
    const takeover = new pg.Client({ connectionString: db.url });
    await takeover.connect();
    t.teardown(() => takeover.end());
    let locked = false;
    const taking = takeover
      .query('SELECT 1 FROM wfx_partitions ORDER BY partition FOR UPDATE')
      .then(() => (locked = true));
    // Asked on a connection of its own: a transaction sees pg_stat_activity as of its first look.
    await eventually('the takeover waits on the lock', async () => {
      const r = await db.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE'",
      );
      return r[0]!.n === 1;
    });
    t.equal(locked, false, 'not before the append ends');
    await append.query('COMMIT');
    await taking;
    t.equal(locked, true, 'then it has the rows');
    await a.close({ checkpoint: false });
  });

  t.test('a database keeps the partition count it was first used with', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { partitions: 4 });
    await a.close();
    const b = await open(db.url, 'a', { partitions: 8 });
    t.equal(b.layout.count, 4, 'a later ask for another count is not taken');
    await b.close();

    // A database used before partitions existed (schema 5) keeps its one: its journal is partition 0's.
    const old = await fresh();
    const pool = new pg.Pool({ connectionString: old.url, max: 1 });
    t.teardown(() => pool.end());
    await pool.query(
      'CREATE TABLE wfx_schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    for (const m of MIGRATIONS.filter((m) => m.version <= 5)) {
      await pool.query(m.sql);
      await pool.query('INSERT INTO wfx_schema_version (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
    const id = uuidv7In(2, 4, AT);
    await pool.query(`INSERT INTO wfx_journal (partition, seq, epoch, entry) VALUES (0, 1, 1, $1)`, [
      JSON.stringify([{ op: 'item', id, by: 7 }]),
    ]);
    const upgraded = await open(old.url, 'a', { partitions: 16 });
    t.equal(upgraded.layout.count, 1);
    t.same(upgraded.state.items[id], { n: 7, children: [] }, 'what it held is there');
    await upgraded.commit({ op: 'item', id, by: 1 });
    t.same(await journals(old.query), {
      0: [[{ op: 'item', id, by: 7 }], [{ op: 'item', id, by: 1 }]],
    });
    await upgraded.close();
  });

  t.test('a standby follows every partition, checkpoints included, and takes over from its copy', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { leaseMs: 600_000 });
    const ids = [1, 2, 3].map((p) => uuidv7In(p, 4, AT));
    for (const id of ids) await a.commit({ op: 'item', id, by: 1 });
    const lines: string[] = [];
    const log = (_: object, msg: string) => void lines.push(msg);
    const waiting = new AbortController();
    t.teardown(() => waiting.abort());
    let applied: (() => number) | null = null;
    const standby = open(db.url, 'b', {
      leaseMs: 600_000,
      logger: { info: log, warn: log, error: log },
      standby: { signal: waiting.signal, following: (seq) => (applied = seq) },
    });
    void standby.catch(() => undefined);
    await eventually('the standby loaded its copy', () => applied?.() === 3);
    await eventually('the standby listens', () => standbyListens(db.url));
    // Followed through NOTIFY alone (the lease is ten minutes: the periodic look never comes).
    await a.commit({ op: 'dir', k: 'k', v: 'v' }, { op: 'item', id: ids[0]!, by: 5 });
    await eventually('the standby applied both entries', () => applied?.() === 5);
    // A checkpoint deletes what the copy read; more entries after it: the copy loads each
    // partition's snapshot where its next entry is gone, replacing that partition's executions.
    await a.commit({ op: 'item', id: ids[1]!, by: 5 });
    await a.checkpoint();
    await a.commit({ op: 'item', id: ids[2]!, by: 5 }, { op: 'dir', k: 'k', v: 'w' });
    await a.commit({ op: 'item', id: uuidv7In(2, 4, AT), by: 1 });
    await eventually('the standby caught up past the checkpoint', () => applied?.() === a.lastSeq);
    await a.close({ checkpoint: false });
    const b = await standby;
    t.ok(lines.includes('store: took over from the copy kept while standing by'), 'warm');
    t.same(view(b.state), view(a.state), 'the same state as the daemon it took over from');
    await b.commit({ op: 'item', id: ids[0]!, by: 1 });
    t.equal(b.state.items[ids[0]!]!.n, 7);
    await b.close();
  });
});
