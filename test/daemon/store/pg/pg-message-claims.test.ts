import t from 'tap';
import { uuidv7In } from '../../../../src/daemon/state/ids.js';
import { PgStore, type PgStoreOptions } from '../../../../src/daemon/store/pg/pg-store.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../../../helpers/postgres.js';

// Claims on kept messages (decision 043): one daemon at a time may consume a kept message, the
// claim holding while the claiming execution's partition keeps its epoch.

interface SState {
  items: Record<string, number | undefined>;
  mem: Record<string, string>;
}
type SRecord = { op: 'item'; id: string } | { op: 'mem'; k: string; v: string };

const reducer: Omit<PgStoreOptions<SState, SRecord>, 'connectionString' | 'owner'> = {
  initialState: () => ({ items: {}, mem: {} }),
  apply: (s, r) => {
    if (r.op === 'item') s.items[r.id] = 1;
    else s.mem[r.k] = r.v;
  },
  snapshotCollection: { key: 'items', touched: (r, visit) => r.op === 'item' && visit(r.id) },
  shared: { keys: ['mem'], touched: (r) => (r.op === 'mem' ? [r.k] : null) },
};

const AT = new Date('2026-11-25T10:00:00.000Z');
const LATER = '2099-01-01T00:00:00.000Z';

t.test('claims on kept messages in PostgreSQL', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('claims');
  const query = (sql: string, values?: unknown[]) => queryAt(url, sql, values);
  const open = (owner: string, held: number[]) =>
    PgStore.open<SState, SRecord>({ connectionString: url, owner, partitions: 4, held: () => held, ...reducer });
  const a = await open('a', [0, 1]);
  const b = await open('b', [2, 3]);
  t.teardown(() => Promise.all([a.close(), b.close().catch(() => undefined)]));
  const [onA, onB] = [uuidv7In(1, 4, AT), uuidv7In(2, 4, AT)];
  const [claimsA, claimsB] = [a.messageClaims(), b.messageClaims()];

  t.equal(await claimsA.claim('m1', onA, LATER), true, 'a claims a message');
  t.equal(await claimsB.claim('m1', onB, LATER), false, 'b cannot while a holds it');
  t.equal(await claimsA.claim('m1', onA, LATER), true, "a's own claim, made again, holds");
  await claimsA.release('m1', onA);
  t.equal(await claimsB.claim('m1', onB, LATER), true, 'given up, b takes it');
  await claimsB.release('m1', onB);
  t.same(await query('SELECT message_id FROM wfx_message_claims'), [], 'released claims leave no row');

  t.equal(await claimsB.claim('m2', onB, '2000-01-01T00:00:00.000Z'), true);
  t.equal(await claimsA.claim('m2', onA, LATER), true, 'the claim of an expired message is free');

  await t.rejects(claimsA.claim('m3', onB, LATER), RangeError, 'no claim for a partition not held');

  // Another daemon's shared write before the claim is in this daemon's copy once it is won.
  const told: SRecord[][] = [];
  a.onOthersShared((records) => told.push([...records]));
  await b.commit({ op: 'mem', k: 'k', v: 'written by b' });
  t.equal(await claimsA.claim('m4', onA, LATER), true);
  t.equal(a.state.mem.k, 'written by b', 'the claim read the shared journal up to it');
  await new Promise((resolve) => queueMicrotask(() => resolve(undefined)));
  t.same(told, [[{ op: 'mem', k: 'k', v: 'written by b' }]], "a is told of b's shared entry once applied");

  // A partition taken over: the claim made under its old epoch no longer holds.
  t.equal(await claimsB.claim('m5', onB, LATER), true);
  t.equal(await claimsA.claim('m5', onA, LATER), false);
  await query("UPDATE wfx_partitions SET owner = 'c', epoch = epoch + 1 WHERE partition = 2");
  t.equal(await claimsA.claim('m5', onA, LATER), true, "once b's partition moved on, a takes the claim");
  t.same(await query('SELECT message_id, partition FROM wfx_message_claims ORDER BY message_id'), [
    { message_id: 'm2', partition: 1 },
    { message_id: 'm4', partition: 1 },
    { message_id: 'm5', partition: 1 },
  ]);
});
