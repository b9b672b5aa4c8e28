import t from 'tap';
import pg from 'pg';
import { uuidv7In } from '../../../../src/daemon/state/ids.js';
import { WFX_STORE, type WfxRecord } from '../../../../src/daemon/state/records.js';
import { WFX_COMMONS } from '../../../../src/daemon/state/commons.js';
import type { WfxState } from '../../../../src/daemon/state/state.js';
import { JournalFollower } from '../../../../src/daemon/store/pg/journal-follower.js';
import { COMMONS_PARTITION } from '../../../../src/daemon/store/pg/partition-state.js';
import { PgStore, type PgStoreOptions } from '../../../../src/daemon/store/pg/pg-store.js';
import { SharedJournal } from '../../../../src/daemon/store/pg/shared-journal.js';
import { eventually } from '../../../helpers/eventually.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../../../helpers/postgres.js';
import { startRecord } from '../../../helpers/state.js';

// The shared partition (decision 039): what any execution's step may write (memory, here "mem"),
// journaled apart from partition 0 and numbered by the database, so that several daemons'
// stores write it and each ends with the journal's state.

interface SState {
  dir: Record<string, string>;
  items: Record<string, number | undefined>;
  mem: Record<string, string>;
}
type SRecord =
  | { op: 'dir'; k: string; v: string }
  | { op: 'item'; id: string; by: number }
  | { op: 'mem'; k: string; v: string | null };

const reducer: Omit<PgStoreOptions<SState, SRecord>, 'connectionString' | 'owner'> = {
  initialState: () => ({ dir: {}, items: {}, mem: {} }),
  apply: (s, r) => {
    if (r.op === 'dir') s.dir[r.k] = r.v;
    else if (r.op === 'item') s.items[r.id] = (s.items[r.id] ?? 0) + r.by;
    else if (r.v === null) delete s.mem[r.k];
    else s.mem[r.k] = r.v;
  },
  snapshotCollection: { key: 'items', touched: (r, visit) => r.op === 'item' && visit(r.id) },
  shared: { keys: ['mem'], touched: (r) => (r.op === 'mem' ? [r.k] : null) },
};
const layout = { ...reducer, collection: reducer.snapshotCollection, count: 4 };

const AT = new Date('2026-11-25T10:00:00.000Z');
const mem = (k: string, v: string | null): SRecord => ({ op: 'mem', k, v });

t.test('a store written by several daemons: the shared partition', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  const fresh = async () => {
    const url = await server.createDatabase(`shared_${++databases}`);
    return { url, query: (sql: string, values?: unknown[]) => queryAt(url, sql, values) };
  };
  const open = (url: string, owner: string, extra: Partial<PgStoreOptions<SState, SRecord>> = {}) =>
    PgStore.open<SState, SRecord>({ connectionString: url, owner, partitions: 4, ...reducer, ...extra });
  /** The state as a daemon opening the database now would load it. */
  const loaded = async (url: string) => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const copy = await JournalFollower.load(pool, { ...layout, partitions: [0, COMMONS_PARTITION, 1, 2, 3] });
      return copy.state;
    } finally {
      await pool.end();
    }
  };

  t.test('shared records are journaled in the shared partition, numbered by the database', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const x = uuidv7In(1, 4, AT);
    await a.commit({ op: 'dir', k: 'flow', v: 'v1' }, { op: 'item', id: x, by: 1 }, mem('k', 'one'));
    await a.commit(mem('k', 'two'), mem('j', 'three'));
    const rows = await db.query('SELECT partition, seq, entry FROM wfx_journal ORDER BY partition, seq');
    t.same(
      rows.map((r) => [r.partition, Number(r.seq), JSON.parse(r.entry as string)]),
      [
        [COMMONS_PARTITION, 1, [mem('k', 'one')]],
        [COMMONS_PARTITION, 2, [mem('k', 'two'), mem('j', 'three')]],
        [0, 1, [{ op: 'dir', k: 'flow', v: 'v1' }]],
        [1, 1, [{ op: 'item', id: x, by: 1 }]],
      ],
    );
    t.same(await db.query('SELECT seq::int FROM wfx_shared_head'), [{ seq: 2 }], 'the head numbers them');
    t.equal(a.lastSeqOf(COMMONS_PARTITION), 2);

    await a.checkpoint();
    const snapshot = async (p: number) =>
      JSON.parse(
        ((await db.query('SELECT state FROM wfx_snapshots WHERE partition = $1', [p]))[0]!.state as string) ?? 'null',
      ) as unknown;
    t.same(await snapshot(0), { dir: { flow: 'v1' } }, "partition 0's snapshot holds no shared key");
    t.same(await snapshot(COMMONS_PARTITION), { mem: { k: 'two', j: 'three' } });
    const kept = await db.query('SELECT seq::int FROM wfx_journal WHERE partition = $1 ORDER BY seq', [
      COMMONS_PARTITION,
    ]);
    t.same(kept, [{ seq: 1 }, { seq: 2 }], 'the shared journal is deleted a checkpoint late');
    await a.commit(mem('j', null));
    await a.checkpoint();
    t.same(
      await db.query('SELECT seq::int FROM wfx_journal WHERE partition = $1 ORDER BY seq', [COMMONS_PARTITION]),
      [{ seq: 3 }],
      'up to the previous snapshot',
    );
    // A live daemon sharing the database that has read the shared journal up to 3 only: the
    // journal after it is kept, however many checkpoints come.
    await db.query(
      `INSERT INTO wfx_daemons (id, url, pid, host, version, shares, shared_seq)
       VALUES ('slow', 'http://127.0.0.1:9', 1, 'h', 'v', true, 3)`,
    );
    await a.commit(mem('m', '4'));
    await a.checkpoint();
    await a.commit(mem('m', '5'));
    await a.checkpoint();
    const sharedKept = () =>
      db.query('SELECT seq::int FROM wfx_journal WHERE partition = $1 ORDER BY seq', [COMMONS_PARTITION]);
    t.same(await sharedKept(), [{ seq: 4 }, { seq: 5 }], 'deleted up to what the slowest sharing daemon read');
    await db.query(`UPDATE wfx_daemons SET seen_at = now() - interval '1 hour' WHERE id = 'slow'`);
    await a.commit(mem('m', '6'));
    await a.checkpoint();
    t.same(await sharedKept(), [{ seq: 6 }], 'one not seen within a lease holds nothing back');
    await db.query(`DELETE FROM wfx_daemons WHERE id = 'slow'`);
    // One that shares and has not said yet (it is loading) holds all of it.
    await db.query(
      `INSERT INTO wfx_daemons (id, url, pid, host, version, shares) VALUES ('new', 'http://127.0.0.1:9', 1, 'h', 'v', true)`,
    );
    await a.commit(mem('m', '7'));
    await a.checkpoint();
    t.same(await sharedKept(), [{ seq: 6 }, { seq: 7 }], 'a daemon yet to say how far it read holds it all');
    await db.query(`DELETE FROM wfx_daemons WHERE id = 'new'`);
    await a.commit(mem('m', null));
    await a.commit(mem('late', 'x'));
    await a.close({ checkpoint: false });
    const again = await open(db.url, 'a');
    t.same(again.state.mem, { k: 'two', late: 'x' }, 'the snapshot, then the entries after it');
    t.same(again.state, await loaded(db.url));
    await again.commit(mem('next', 'y'));
    t.equal(again.lastSeqOf(COMMONS_PARTITION), 10, 'numbering goes on');
    await again.close();
  });

  t.test('two stores on disjoint partitions write it at once and end with the same state', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { held: () => [0, 1] });
    const b = await open(db.url, 'b', { held: () => [2, 3] });
    t.teardown(() => Promise.all([a.close(), b.close()]));
    await a.commit({ op: 'dir', k: 'flow', v: 'v1' });
    await eventually('b reads partition 0 as a writes it', () => b.state.dir.flow === 'v1');

    // Both write the same keys, and their own, without waiting for each other.
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      writes.push(a.commit(mem('hot', `a${i}`), mem(`a${i % 7}`, `${i}`)));
      writes.push(b.commit(mem('hot', `b${i}`), { op: 'item', id: uuidv7In(2 + (i % 2), 4, AT), by: 1 }));
      if (i % 3 === 0) writes.push(b.commit(mem(`a${i % 7}`, null)));
      // Now and then each follows the other's entries in between.
      if (i % 25 === 0) await Promise.all([a.flush(), b.flush()]);
    }
    await Promise.all(writes);
    const [x, y] = [uuidv7In(1, 4, AT), uuidv7In(2, 4, AT)];
    await a.commit({ op: 'item', id: x, by: 5 });
    await b.commit({ op: 'item', id: y, by: 7 });
    const truth = await loaded(db.url);
    // Compared whatever the order of the keys (each applied its entries in its own order).
    const sorted = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort());
    await eventually('both end with the journal replayed in order', async () => {
      const now = sorted((await loaded(db.url)).mem);
      return sorted(a.state.mem) === now && sorted(b.state.mem) === now;
    });
    t.same(a.state.mem, b.state.mem);
    t.match(truth.mem.hot, /^[ab]199$/, 'the last write of one of them');
    t.equal(a.state.items[x], 5, 'a holds its executions');
    t.equal(a.state.items[y], undefined, "and not b's");
    t.equal(b.state.items[y], 7);

    // The holder of partition 0 checkpoints the shared partition: a load then starts from it.
    await a.checkpoint();
    const snapshot = await db.query('SELECT seq::int FROM wfx_snapshots WHERE partition = $1', [COMMONS_PARTITION]);
    t.equal(snapshot.length, 1, 'written by the holder of partition 0');
    t.same((await loaded(db.url)).mem, a.state.mem);
    await b.checkpoint();
    t.same(
      (await db.query('SELECT partition FROM wfx_snapshots ORDER BY partition')).map((r) => r.partition),
      [COMMONS_PARTITION, 0, 1, 2, 3],
      'each store checkpoints the partitions it holds',
    );
  });

  t.test('a store writes no partition it does not hold, and a fenced one takes no shared number', async (t) => {
    const db = await fresh();
    const b = await open(db.url, 'b', { held: () => [2, 3] });
    await t.rejects(b.commit({ op: 'dir', k: 'flow', v: 'v1' }), { code: 'STORE_FAILED' });
    await b.close();
    const a = await open(db.url, 'a');
    await a.commit(mem('k', 'v'));
    await db.query("UPDATE wfx_partitions SET owner = 'c', epoch = epoch + 1 WHERE partition = 0");
    await t.rejects(a.commit(mem('k', 'stale')), { code: 'STORE_LEASE_LOST' });
    t.same(await db.query('SELECT seq::int FROM wfx_shared_head'), [{ seq: 1 }], 'no number taken, no gap left');
    t.same((await loaded(db.url)).mem, { k: 'v' });
    await a.close();
  });

  t.test("the daemon's memory, files, messages, thrown events, bulks go to the shared partition", async (t) => {
    const db = await fresh();
    const openWfx = () =>
      PgStore.open<WfxState, WfxRecord>({
        connectionString: db.url,
        owner: 'a',
        partitions: 4,
        ...WFX_STORE,
        shared: WFX_COMMONS,
      });
    const a = await openWfx();
    const at = AT.toISOString();
    const file = {
      fileId: `file_${'a'.repeat(32)}`,
      organization: 'default',
      name: 'a.txt',
      mimeType: 'text/plain',
      bytes: 1,
      sha256: 'b'.repeat(64),
      createdAt: at,
      expiresAt: at,
    };
    const message = {
      id: 'm1',
      organization: 'default',
      eventType: 'paid',
      correlationKey: null,
      data: {},
      messageId: 'x',
      receivedAt: at,
      expiresAt: at,
    };
    const entry = { value: 1, updatedAt: at, expiresAt: null };
    const executionId = uuidv7In(2, 4, AT);
    const bulk = {
      bulkId: uuidv7In(1, 4, AT),
      organization: 'default',
      operation: 'cancel' as const,
      params: null,
      query: {},
      startedBefore: at,
      by: 'key:k',
      createdAt: at,
      partitions: [1, 2, 3],
      state: 'RUNNING' as const,
      finishedAt: null,
      cancelledBy: null,
      error: null,
    };
    const thrown = {
      id: 't1',
      instanceId: executionId,
      organization: 'default',
      eventType: 'go',
      correlationKey: null,
    };
    const auditEntry = {
      id: '01a1fd8c-6900-7000-8000-0000000000aa',
      at,
      organization: 'default',
      actor: 'key:k1',
      keyId: 'k1',
      action: 'POST /admin/api-keys',
      status: 201,
      targets: { keyId: 'k2' },
    };
    await a.commit(
      startRecord(executionId, at),
      { type: 'memory.written', organization: 'default', namespace: 'n', key: 'k', entry },
      { type: 'file.stored', file },
      { type: 'message.buffered', message },
      { type: 'messageId.seen', key: 'default|x', until: at },
      { type: 'event.thrown', event: { ...thrown, data: {}, thrownAt: at } },
      { type: 'bulk.created', bulk: { ...bulk, lanes: {} } },
      { type: 'bulk.selected', bulkId: bulk.bulkId, lane: 2, ids: [executionId], at },
      { type: 'audit.recorded', entry: auditEntry },
    );
    const rows = await db.query('SELECT partition, entry FROM wfx_journal ORDER BY partition');
    t.same(
      rows.map((r) => [r.partition, (JSON.parse(r.entry as string) as WfxRecord[]).map((x) => x.type)]),
      [
        [
          COMMONS_PARTITION,
          [
            'memory.written',
            'file.stored',
            'message.buffered',
            'messageId.seen',
            'event.thrown',
            'bulk.created',
            'bulk.selected',
            'audit.recorded',
          ],
        ],
        [2, ['instance.started']],
      ],
    );
    await a.close();
    const again = await openWfx();
    t.same(again.state.memory, { default: { n: { k: entry } } });
    t.same(Object.keys(again.state.files), [file.fileId]);
    t.same(Object.keys(again.state.messages), ['m1']);
    t.same(again.state.messageIds, { 'default|x': at });
    t.same(Object.keys(again.state.thrown), ['t1']);
    t.same(again.state.bulks[bulk.bulkId]?.lanes, { '2': { ids: [executionId], next: 0, skipped: {}, at } });
    t.same(again.state.audit, { [auditEntry.id]: auditEntry }, 'the audit trail is in the shared partition too');
    const shared = await db.query('SELECT state FROM wfx_snapshots WHERE partition = $1', [COMMONS_PARTITION]);
    t.same(Object.keys(JSON.parse(shared[0]!.state as string) as object), [
      'memory',
      'files',
      'messages',
      'messageIds',
      'thrown',
      'bulks',
      'audit',
    ]);
    await again.close();
  });

  t.test('a database split before the shared partition keeps its shared state', async (t) => {
    // Written as partition 0's (its snapshot and journal), then read by a store that has one.
    const db = await fresh();
    const old = await open(db.url, 'a', { shared: undefined });
    await old.commit({ op: 'dir', k: 'flow', v: 'v1' }, mem('k', 'snap'));
    await old.checkpoint();
    await old.commit(mem('j', 'journal'));
    await old.close({ checkpoint: false });
    const a = await open(db.url, 'a');
    t.same(a.state.mem, { k: 'snap', j: 'journal' }, "from partition 0's snapshot and journal");
    await a.commit({ op: 'dir', k: 'flow', v: 'v2' });
    await a.close();
    const rows = await db.query('SELECT partition, state FROM wfx_snapshots WHERE partition <= 0 ORDER BY partition');
    t.same(
      rows.map((r) => [r.partition, JSON.parse(r.state as string)]),
      [
        [COMMONS_PARTITION, { mem: { k: 'snap', j: 'journal' } }],
        [0, { dir: { flow: 'v2' } }],
      ],
      'the next checkpoint moves it to the shared snapshot',
    );
    const again = await open(db.url, 'a');
    t.same(again.state.mem, { k: 'snap', j: 'journal' });
    await again.commit(mem('n', 'after'));
    await again.close({ checkpoint: false });
    const last = await open(db.url, 'a');
    t.same(last.state.mem, { k: 'snap', j: 'journal', n: 'after' }, 'the shared snapshot, then its journal');
    await last.close();
  });
});

t.test("SharedJournal: another daemon's entry comes before this store's writes not yet passed", async (t) => {
  const journal = new SharedJournal<SRecord>((r) => (r.op === 'mem' ? [r.k] : null), 10);
  t.equal(journal.exactAt(true), 10);
  journal.appended([mem('k', 'mine')]);
  t.equal(journal.exactAt(true), 11, 'alone, its next entry is the next number');
  t.equal(journal.exactAt(false), null, 'not alone, others may be numbered first');
  // Read before this store's own entry is numbered: it came first, so its own write of 'k' is
  // applied again after it.
  t.same(journal.admit(11, [mem('k', 'theirs'), mem('j', 'theirs')]), [
    mem('k', 'theirs'),
    mem('j', 'theirs'),
    mem('k', 'mine'),
  ]);
  // Its own entry, numbered 12: read back, nothing to apply.
  journal.numberedAs([12]);
  t.same(journal.admit(12, [mem('k', 'mine')]), []);
  t.same(journal.admit(13, [mem('k', 'later')]), [mem('k', 'later')], 'a later one applies');
  t.equal(journal.exactAt(false), 13);
  // Numbered after entries read already: those were before it, as the follower read them.
  journal.appended([mem('k', 'mine2')]);
  t.same(journal.admit(14, [mem('k', 'own, not numbered')]), [mem('k', 'own, not numbered'), mem('k', 'mine2')]);
  journal.numberedAs([14]);
  t.equal(journal.exactAt(false), 14);
  t.same(journal.admit(14, [mem('k', 'again')]), [], 'an entry held already is not applied twice');
  t.throws(() => journal.admit(16, []), /entry 15 was not read/);
  journal.appended([mem('q', '1')]);
  journal.appended([mem('q', '2')]);
  journal.numberedAs([15, 16]);
  t.equal(journal.seq, 16, 'own entries numbered next need no reading');
  t.throws(() => journal.numberedAs([17]), /more entries than this store appended/);
});

t.test('SharedJournal: its own entry read before the database numbered it', async (t) => {
  const journal = new SharedJournal<SRecord>((r) => (r.op === 'mem' ? [r.k] : null), 20);
  journal.appended([mem('k', 'mine')]);
  journal.appended([mem('k', 'mine again')]);
  // The follower reads entry 21, its own (committed; the INSERT's answer not back yet)...
  t.same(journal.admit(21, [mem('k', 'mine')], true), []);
  // ...so another daemon's entry 22, after it, applies: but not over 'mine again', still pending.
  t.same(journal.admit(22, [mem('k', 'theirs')]), [mem('k', 'theirs'), mem('k', 'mine again')]);
  journal.numberedAs([21, 23]);
  t.same(journal.admit(23, [mem('k', 'mine again')], true), []);
  t.same(journal.admit(24, [mem('k', 'theirs, later')]), [mem('k', 'theirs, later')], 'nothing of its own is pending');
  t.equal(journal.exactAt(false), 24);
  journal.appended([mem('j', 'x')]);
  t.same(journal.admit(25, [mem('j', 'x')], true), []);
  t.same(journal.admit(26, [mem('j', 'y')]), [mem('j', 'y')], 'an entry after its own one read early applies');
  t.equal(journal.exactAt(false), 26, 'its answer not back, but every entry up to 26 is in the state');
  journal.numberedAs([25]);
  t.equal(journal.exactAt(false), 26);
  t.same(journal.admit(26, [mem('j', 'again')]), [], 'read again: held already');
});

t.test('SharedJournal: two daemons in any interleaving end with the journal replayed in order', async (t) => {
  // Entries that set a field of an entry, add to its tags (as files.held adds a bucket) or
  // remove it: not all blind sets, so the order per key matters.
  type Op = { k: string; set?: string; tag?: string; del?: true };
  type Entry = { v?: string; tags: string[] };
  type State = Record<string, Entry>;
  const apply = (s: State, r: Op): void => {
    if (r.del) delete s[r.k];
    else if (r.set !== undefined) s[r.k] = { ...(s[r.k] ?? { tags: [] }), v: r.set };
    else {
      const e = s[r.k] ?? { tags: [] };
      s[r.k] = { ...e, tags: e.tags.includes(r.tag!) ? e.tags : [...e.tags, r.tag!].sort() };
    }
  };
  const seed = Number(process.env.WFX_CHAOS_SEED ?? Math.floor(Math.random() * 1_000_000));
  t.comment(`seed ${seed} (WFX_CHAOS_SEED repeats a run)`);
  let x = seed;
  const random = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  for (let run = 0; run < 200; run++) {
    const committed: Array<{ seq: number; writer: string; records: Op[] }> = [];
    const daemons = ['a', 'b'].map((id) => ({
      id,
      state: {} as State,
      journal: new SharedJournal<Op>((r) => [r.k], 0),
      outbox: [] as Op[][],
      answers: [] as number[],
      read: 0,
    }));
    const step = (d: (typeof daemons)[number], kind: number): void => {
      if (kind === 0) {
        const records = [
          {
            k: pick(['f', 'g']),
            ...pick<Partial<Op>>([{ set: `${d.id}${run}-${random()}` }, { tag: pick(['x', 'y', 'z']) }, { del: true }]),
          } as Op,
        ];
        for (const r of records) apply(d.state, r);
        d.journal.appended(records);
        d.outbox.push(records);
      } else if (kind === 1 && d.outbox.length > 0) {
        const seq = committed.length + 1;
        committed.push({ seq, writer: d.id, records: d.outbox.shift()! });
        d.answers.push(seq);
      } else if (kind === 2 && d.answers.length > 0) d.journal.numberedAs([d.answers.shift()!]);
      else if (kind === 3 && d.read < committed.length) {
        const e = committed[d.read++]!;
        for (const r of d.journal.admit(e.seq, e.records, e.writer === d.id)) apply(d.state, r);
      }
    };
    for (let i = 0; i < 60; i++) step(pick(daemons), Math.floor(random() * 4));
    for (const d of daemons) while (d.outbox.length > 0) step(d, 1);
    for (const d of daemons) while (d.answers.length > 0 || d.read < committed.length) step(d, pick([2, 3]));
    const replay: State = {};
    for (const e of committed) for (const r of e.records) apply(replay, r);
    for (const d of daemons) {
      if (JSON.stringify(sorted(d.state)) !== JSON.stringify(sorted(replay))) {
        t.fail(
          `run ${run}: daemon ${d.id} ended with ${JSON.stringify(d.state)}, the journal with ${JSON.stringify(replay)}`,
        );
        return;
      }
      t.equal(d.journal.exactAt(false), committed.length);
    }
  }
});

function sorted(state: object): Array<[string, unknown]> {
  return Object.entries(state).sort(([a], [b]) => a.localeCompare(b));
}
