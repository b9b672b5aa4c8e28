import t from 'tap';
import { partitionOf, uuidv7In } from '../../../../src/daemon/state/ids.js';
import { PartitionLease } from '../../../../src/daemon/store/pg/lease.js';
import { PgStore, type PgStoreOptions } from '../../../../src/daemon/store/pg/pg-store.js';
import pg from 'pg';
import { eventually } from '../../../helpers/eventually.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../../../helpers/postgres.js';

// Partitions moving between running stores (PgStore.take and drop): the step decision 035 needs
// for daemons to share them. A store gives partitions up (flushed, checkpointed, released,
// removed from its state) and another takes them (leased, loaded into its live state).

interface MState {
  dir: Record<string, string>;
  items: Record<string, number | undefined>;
  mem: Record<string, string>;
  /** Derived: starts over after a load. */
  seen: number;
}
type MRecord =
  { op: 'dir'; k: string; v: string } | { op: 'item'; id: string; by: number } | { op: 'mem'; k: string; v: string };

const reducer: Omit<PgStoreOptions<MState, MRecord>, 'connectionString' | 'owner'> = {
  initialState: () => ({ dir: {}, items: {}, mem: {}, seen: 0 }),
  derived: ['seen'],
  apply: (s, r) => {
    s.seen++;
    if (r.op === 'dir') s.dir[r.k] = r.v;
    else if (r.op === 'item') s.items[r.id] = (s.items[r.id] ?? 0) + r.by;
    else s.mem[r.k] = r.v;
  },
  snapshotCollection: { key: 'items', touched: (r, visit) => r.op === 'item' && visit(r.id) },
  shared: { keys: ['mem'], touched: (r) => (r.op === 'mem' ? [r.k] : null) },
};

const AT = new Date('2026-11-25T10:00:00.000Z');
const item = (id: string, by: number): MRecord => ({ op: 'item', id, by });

t.test('partitions moving between running stores', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('moves');
  const query = (sql: string, values?: unknown[]) => queryAt(url, sql, values);
  const open = (owner: string, held?: number[]) =>
    PgStore.open<MState, MRecord>({
      connectionString: url,
      owner,
      partitions: 4,
      ...reducer,
      ...(held && { held: () => held }),
    });

  const a = await open('a');
  const ids = [1, 2, 3, 2].map((p) => uuidv7In(p, 4, AT));
  await a.commit({ op: 'dir', k: 'flow', v: 'v1' }, item(ids[0]!, 1), item(ids[1]!, 2), item(ids[2]!, 3));
  await a.commit(item(ids[3]!, 4), { op: 'mem', k: 'm', v: 'a' });
  // A commit made before the drop is asked for is durable and goes with the partition.
  const before = a.commit(item(ids[1]!, 10));
  let atRemoval: string[] = [];
  let atLeaving: string[] = [];
  let drawn: number[] = [];
  await a.drop([2, 3], {
    leaving: () => (atLeaving = Object.keys(a.state.items)),
    left: () => {
      atRemoval = Object.keys(a.state.items);
      drawn = Array.from({ length: 50 }, () => partitionOf(a.newExecutionId!(AT, null), 4));
    },
  });
  await before;

  t.same(atLeaving.sort(), [...new Set(ids)].sort(), 'told before they leave');
  t.same([...new Set(drawn)], [1], 'no execution is started in them while they go');
  t.same(atRemoval, [ids[0]], 'their executions leave the state at once, in the same turn as the callback');
  t.same(Object.keys(a.state.items), [ids[0]], 'the store keeps the executions of the partitions it holds');
  t.equal(a.state.seen, 0, 'its derived keys start over');
  t.same(
    await query('SELECT partition, owner FROM wfx_partitions ORDER BY partition'),
    [
      { partition: 0, owner: 'a' },
      { partition: 1, owner: 'a' },
      { partition: 2, owner: null },
      { partition: 3, owner: null },
    ],
    'their leases are released',
  );
  const snapshots = await query('SELECT partition FROM wfx_snapshots WHERE partition IN (2, 3) ORDER BY partition');
  t.same(
    snapshots.map((r) => r.partition),
    [2, 3],
    'and checkpointed first',
  );
  const b = await open('b', [3]);
  t.same(Object.keys(b.state.items), [ids[2]]);
  let loaded: string[] = [];
  let seenAtLoad: string[] = [];
  t.equal(await b.take([2], (ids) => ((loaded = ids), (seenAtLoad = Object.keys(b.state.items)))), true);
  t.same(loaded.sort(), [ids[1], ids[3]].sort(), 'the callback is given the executions loaded');
  t.same(seenAtLoad.sort(), [ids[1], ids[2], ids[3]].sort(), 'in the state when it is called');
  t.same(b.state.items, { [ids[1]!]: 12, [ids[2]!]: 3, [ids[3]!]: 4 }, 'with every commit made before the drop');
  t.equal(b.state.dir.flow, 'v1');
  t.equal(b.state.mem.m, 'a');
  await b.commit(item(ids[1]!, 100), { op: 'mem', k: 'm', v: 'b' });
  t.ok(partitionOf(b.newExecutionId!(AT, null), 4) >= 2, 'new executions go to its partitions');
  await eventually(
    'the first store follows what the second writes to the shared partition',
    () => a.state.mem.m === 'b',
  );
  await t.rejects(a.commit(item(ids[1]!, 1)), { code: 'STORE_FAILED' }, 'a commit to a partition given up fails');

  const c = await open('c', [1]).catch((err: unknown) => err);
  t.match(c, { code: 'DATABASE_IN_USE' }, 'a partition held is not opened by another');
  t.equal(await b.take([1], () => t.fail('nothing loaded')), false, 'nor taken');
  t.equal(Object.keys(b.state.items).length, 3, 'and nothing of it is loaded');
  await b.commit(item(ids[2]!, 1));

  await b.close();
  await a.close();
  const d = await open('d', [2, 3]);
  t.same(d.state.items, { [ids[1]!]: 112, [ids[2]!]: 4, [ids[3]!]: 4 }, 'what the second store wrote, loaded again');
  t.equal(d.state.mem.m, 'b');
  await d.close();
});

t.test('lease changes and renewals wait for each other, never on themselves', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('lease_changes');
  await queryAt(url, 'SELECT 1'); // migrated below by a store
  const store = await PgStore.open<MState, MRecord>({
    connectionString: url,
    owner: 'setup',
    partitions: 4,
    ...reducer,
  });
  await store.close();
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  t.teardown(() => pool.end());
  const lost: unknown[] = [];
  const lease = await PartitionLease.take(pool, { partitions: [1], owner: 'a', ttlMs: 60_000 }, (err) =>
    lost.push(err),
  );
  // Two changes queued, then a renewal asked for while the second waits behind the first.
  const first = lease.add([2]);
  const second = lease.drop([2]);
  const renewal = (lease as unknown as { renew(): Promise<void> }).renew();
  await Promise.all([first, second, renewal]);
  t.same(lease.partitions, [1]);
  t.same(lost, []);
  t.equal(await lease.add([3]), true, 'and the next change goes through');
  t.same(lease.partitions, [1, 3]);
  await lease.release();
});
