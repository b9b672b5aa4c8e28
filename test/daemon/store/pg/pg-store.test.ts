import t from 'tap';
import pg from 'pg';
import { PgStore } from '../../../../src/daemon/store/pg/pg-store.js';
import { JournalFollower } from '../../../../src/daemon/store/pg/journal-follower.js';
import { SCHEMA_VERSION } from '../../../../src/daemon/store/pg/migrations.js';
import { eventually } from '../../../helpers/eventually.js';
import { inTransaction, POSTGRES_SKIP, queryAt, standbyListens, startPostgres } from '../../../helpers/postgres.js';
import { suiteReducer, type SuiteRecord, type SuiteState } from '../../../helpers/store-suite.js';

// What only the PostgreSQL store has: migrations, the lease, fencing, a standby taking over.
t.test('the PostgreSQL store', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  let databases = 0;
  const fresh = async (): Promise<{
    url: string;
    query: (sql: string, values?: unknown[]) => Promise<pg.QueryResultRow[]>;
  }> => {
    const url = await server.createDatabase(`pg_store_${++databases}`);
    return { url, query: (sql, values) => queryAt(url, sql, values) };
  };
  const open = (url: string, owner: string, extra: { leaseMs?: number; standby?: { signal?: AbortSignal } } = {}) =>
    PgStore.open<SuiteState, SuiteRecord>({ connectionString: url, owner, ...suiteReducer, ...extra });

  t.test('migrates a new database once, even with daemons starting together', async (t) => {
    const db = await fresh();
    const outcomes = await Promise.allSettled([open(db.url, 'a'), open(db.url, 'b'), open(db.url, 'c')]);
    const opened = outcomes.filter((o) => o.status === 'fulfilled');
    t.equal(opened.length, 1, 'one daemon takes the lease');
    for (const o of outcomes)
      if (o.status === 'rejected') t.match(o.reason, { code: 'DATABASE_IN_USE' }, 'the others are told who holds it');
    const versions = await db.query('SELECT version FROM wfx_schema_version ORDER BY version');
    t.same(
      versions.map((r) => r.version),
      Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      'each migration applied once',
    );
    for (const o of opened) await o.value.close();
  });

  t.test('a database migrated by a newer daemon is refused', async (t) => {
    const db = await fresh();
    const store = await open(db.url, 'a');
    await store.close();
    await db.query("INSERT INTO wfx_schema_version (version, name) VALUES ($1, 'from the future')", [
      SCHEMA_VERSION + 1,
    ]);
    await t.rejects(open(db.url, 'a'), {
      code: 'DATABASE_TOO_NEW',
      details: { schemaVersion: SCHEMA_VERSION + 1, daemonSchemaVersion: SCHEMA_VERSION },
    });
  });

  t.test('a database that cannot be reached is named as such', async (t) => {
    const url = `postgresql://wfx@localhost/wfx?host=${encodeURIComponent(server.socketDir)}-none`;
    await t.rejects(open(url, 'a'), { code: 'DATABASE_UNREACHABLE', message: /cannot connect to the database/ });
  });

  t.test('a held lease is refused, a released one taken, a restart takes its own back', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    await a.commit({ op: 'add', by: 1 });
    await t.rejects(open(db.url, 'b'), { code: 'DATABASE_IN_USE', message: /daemon a \(pid \d+ on / });
    const restarted = await open(db.url, 'a'); // as after a SIGKILL: its lease had not lapsed
    t.equal(restarted.epoch, a.epoch + 1, 'taking it back bumps the epoch');
    t.equal(restarted.state.n, 1);
    await t.rejects(a.commit({ op: 'add', by: 100 }), { code: 'STORE_LEASE_LOST' }, 'the old incarnation is fenced');
    await a.close();
    await restarted.close();
    const b = await open(db.url, 'b');
    t.equal(b.state.n, 1, 'another daemon takes a released lease at once, with the state');
    await b.close();
  });

  t.test('fencing: no write of a daemon whose partition was taken over lands', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    await a.commit({ op: 'add', by: 1 });
    // What a takeover does once the lease has lapsed: its UPDATE bumps the epoch.
    await db.query("UPDATE wfx_partitions SET owner = 'b', epoch = epoch + 1 WHERE partition = 0");
    let told: unknown = null;
    a.onFailure((err) => (told = err));
    const refused = await Promise.allSettled([a.commit({ op: 'add', by: 10 }), a.commit({ op: 'add', by: 20 })]);
    t.same(
      refused.map((r) => r.status),
      ['rejected', 'rejected'],
      'no commit of the old owner is acknowledged',
    );
    t.match(told, { code: 'STORE_LEASE_LOST' });
    await t.rejects(a.checkpoint(), { code: 'STORE_LEASE_LOST' }, 'nor a checkpoint');
    await t.rejects(
      a.history().putJson('2026-11-20', '2026-11-20-late', '{}'),
      { code: 'STORE_LEASE_LOST' },
      'nor a history write (a one-step execution is acknowledged once it is there)',
    );
    t.same(await db.query('SELECT id FROM wfx_history'), [], 'no history row landed');
    const rows = await db.query('SELECT count(*)::int AS n FROM wfx_journal WHERE epoch = $1', [a.epoch]);
    t.equal(rows[0]!.n, 1, 'only the write made before the takeover is in the journal');
    await a.close();
  });

  t.test('a lease that cannot be renewed in time is given up before anyone may take it', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { leaseMs: 300 });
    // Holds the lease row locked, so the renewal waits, as it would for a database that does not answer.
    const blocker = await inTransaction(t, db.url, 'SELECT 1 FROM wfx_partitions WHERE partition = 0 FOR UPDATE');
    await eventually('the lease counted lost', () => a.failed);
    t.match(a.failed, { code: 'STORE_LEASE_LOST', message: /lapsed before it was renewed/ });
    await t.rejects(a.commit({ op: 'add', by: 1 }), { code: 'STORE_LEASE_LOST' });
    await blocker.query('ROLLBACK');
    await a.close();
  });

  t.test('a standby waits for the lease and takes over with every acknowledged commit', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    const acknowledged = await Promise.all(Array.from({ length: 200 }, (_, i) => a.commit({ op: 'add', by: i })));
    t.equal(acknowledged.length, 200);
    const waiting = new AbortController();
    t.teardown(() => waiting.abort());
    let taken = false;
    const standby = open(db.url, 'b', { standby: { signal: waiting.signal } }).then((s) => ((taken = true), s));
    await a.commit({ op: 'note', text: 'last' });
    t.notOk(taken, 'the standby waits while the lease is held');
    await a.close({ checkpoint: false });
    const b = await standby;
    t.equal(b.state.n, (199 * 200) / 2, 'every acknowledged commit is there');
    t.same(b.state.log, [`last@${(199 * 200) / 2}`]);
    t.ok(b.epoch > a.epoch);
    await b.commit({ op: 'add', by: 1 });
    await b.close();
  });

  t.test('a standby follows the journal as it is written and replays only the tail at takeover', async (t) => {
    const db = await fresh();
    // A lease of ten minutes: the standby's periodic catch-up (a third of it) never runs here,
    // so what it applies reaches it through the NOTIFY of each group commit.
    const leaseMs = 600_000;
    const a = await open(db.url, 'a', { leaseMs });
    await Promise.all(Array.from({ length: 50 }, () => a.commit({ op: 'add', by: 1 })));
    const waiting = new AbortController();
    t.teardown(() => waiting.abort());
    let applied: (() => number) | null = null;
    const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
    const logger = { info: (obj: object, msg: string) => lines.push({ obj: obj as Record<string, unknown>, msg }) };
    const standby = PgStore.open<SuiteState, SuiteRecord>({
      connectionString: db.url,
      owner: 'b',
      leaseMs,
      ...suiteReducer,
      logger: { ...logger, warn: logger.info, error: logger.info },
      standby: { signal: waiting.signal, following: (seq) => (applied = seq) },
    });
    await eventually('the standby loaded the state', () => applied?.() === a.lastSeq);
    await eventually('the standby listens', () => standbyListens(db.url));
    for (let i = 0; i < 20; i++) await a.commit({ op: 'add', by: 1 });
    await eventually('the standby applied each entry as it was written', () => applied!() === a.lastSeq);
    t.equal(applied!(), 70);
    // Entries it has not applied when the lease is taken are read then: the takeover replays them.
    await a.commit({ op: 'note', text: 'last' });
    const lastSeq = a.lastSeq;
    await a.close({ checkpoint: false });
    const b = await standby;
    t.equal(b.state.n, 70, 'every acknowledged commit is there');
    t.same(b.state.log, ['last@70']);
    t.equal(b.lastSeq, lastSeq);
    const took = lines.find((l) => l.msg.startsWith('store: took over from the copy kept while standing by'));
    t.ok(took, 'the takeover says it started from its copy');
    t.ok((took!.obj.replayed as number) <= 1, `replayed ${String(took!.obj.replayed)} entries at takeover, not 71`);
    await b.commit({ op: 'add', by: 1 });
    await b.close();
  });

  t.test('appends NOTIFY the standbys only while some follow', async (t) => {
    const db = await fresh();
    let followed = false;
    const a = await PgStore.open<SuiteState, SuiteRecord>({
      connectionString: db.url,
      owner: 'a',
      ...suiteReducer,
      followed: () => followed,
    });
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    t.teardown(() => listener.end());
    const told: string[] = [];
    listener.on('notification', (n) => told.push(`${n.channel} ${n.payload}`));
    await listener.query('LISTEN wfx_journal');
    await a.commit({ op: 'add', by: 1 });
    followed = true;
    await a.commit({ op: 'add', by: 1 });
    // Notifications arrive in commit order: once a marker sent after both is here, so is
    // every NOTIFY the appends made.
    await listener.query("NOTIFY wfx_journal, 'marker'");
    await eventually('the marker arrived', () => told.includes('wfx_journal marker'));
    t.same(told, ['wfx_journal 0', 'wfx_journal marker'], 'one NOTIFY: for the append made while a standby follows');
    await a.close();
  });

  t.test("a copy whose next entries a checkpoint deleted loads the checkpoint's snapshot", async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    for (let i = 0; i < 5; i++) await a.commit({ op: 'add', by: 1 });
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    t.teardown(() => pool.end());
    const copy = await JournalFollower.load(pool, { ...suiteReducer, count: 1, partitions: [0] });
    t.equal(copy.lastSeq, 5);
    for (let i = 0; i < 3; i++) await a.commit({ op: 'add', by: 10 });
    await a.checkpoint();
    t.same(await db.query('SELECT seq FROM wfx_journal'), [], 'the checkpoint took entries 6 to 8');
    await a.commit({ op: 'note', text: 'after' });
    t.equal(await copy.catchUp(), 1, 'the entry after the snapshot applied');
    t.equal(copy.snapshotSeq, 8, 'the snapshot loaded in place of the entries it covers');
    t.same({ n: copy.state.n, log: copy.state.log, lastSeq: copy.lastSeq }, { n: 35, log: ['after@35'], lastSeq: 9 });
    t.equal(await copy.catchUp(), 0, 'nothing new: nothing applied');
    // A gap that no snapshot covers is corruption, not something to skip.
    await a.commit({ op: 'add', by: 1 });
    await a.commit({ op: 'add', by: 1 });
    await db.query('DELETE FROM wfx_journal WHERE seq = 10');
    await t.rejects(copy.catchUp(), { code: 'JOURNAL_CORRUPT', message: /entry 10 of partition 0 is missing/ });
    await a.close({ checkpoint: false });
  });

  t.test('a copy that applied part of an entry is not trusted again: the takeover loads afresh', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a', { leaseMs: 600_000 });
    await a.commit({ op: 'add', by: 1 });
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    t.teardown(() => pool.end());
    const copy = await JournalFollower.load(pool, { ...suiteReducer, count: 1, partitions: [0] });
    // An entry the standby's reducer refuses halfway (written by a newer daemon, say).
    const bad = JSON.stringify([{ op: 'add', by: 10 }, { op: 'boom' }]);
    await db.query('INSERT INTO wfx_journal (partition, seq, epoch, entry) VALUES (0, 2, $1, $2)', [a.epoch, bad]);
    await t.rejects(copy.catchUp(), /bad record/);
    t.match(copy.broken, /bad record/, 'the copy says it is broken');
    await db.query(`UPDATE wfx_journal SET entry = '[{"op":"add","by":10}]' WHERE seq = 2`);
    await t.rejects(copy.catchUp(), /bad record/, 'and stays so once the entry reads well');
    t.equal(copy.state.n, 11, 'it had applied the first record of the entry: a state no journal has');

    // The same in a standby: its takeover does not start from the copy but loads the journal.
    await db.query('DELETE FROM wfx_journal WHERE seq = 2');
    const lines: string[] = [];
    const log = (_: object, msg: string) => void lines.push(msg);
    const waiting = new AbortController();
    t.teardown(() => waiting.abort());
    let applied: (() => number) | null = null;
    const standby = PgStore.open<SuiteState, SuiteRecord>({
      connectionString: db.url,
      owner: 'b',
      leaseMs: 600_000,
      ...suiteReducer,
      logger: { info: log, warn: log, error: log },
      standby: { signal: waiting.signal, following: (seq) => (applied = seq) },
    });
    void standby.catch(() => undefined);
    await eventually('the standby loaded its copy', () => applied?.() === 1);
    await db.query('INSERT INTO wfx_journal (partition, seq, epoch, entry) VALUES (0, 2, $1, $2)', [a.epoch, bad]);
    await db.query("SELECT pg_notify('wfx_journal', '0')");
    await eventually('the standby stopped following', () =>
      lines.includes('store: the standby stops following the journal; a takeover loads it'),
    );
    await db.query(`UPDATE wfx_journal SET entry = '[{"op":"add","by":10}]' WHERE seq = 2`);
    await a.close({ checkpoint: false });
    const b = await standby;
    t.ok(lines.includes('store: recovered from the database'), 'loaded afresh, not from the broken copy');
    t.equal(b.state.n, 11);
    await b.close();
  });

  t.test('a standby stopped before it takes the lease does not take it', async (t) => {
    const db = await fresh();
    const stopped = new AbortController();
    stopped.abort();
    await t.rejects(open(db.url, 'b', { standby: { signal: stopped.signal } }), { name: 'AbortError' });
    t.same(await db.query('SELECT owner FROM wfx_partitions WHERE owner IS NOT NULL'), [], 'the free lease stays free');
  });

  t.test('a gap in the journal refuses to open', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    for (let i = 0; i < 3; i++) await a.commit({ op: 'add', by: 1 });
    await a.close({ checkpoint: false });
    await db.query('DELETE FROM wfx_journal WHERE seq = 2');
    await t.rejects(open(db.url, 'a'), { code: 'JOURNAL_CORRUPT', message: /entry 2 of partition 0 is missing/ });
  });

  t.test('counters: entries, group commits and bytes that reached the database', async (t) => {
    const db = await fresh();
    const a = await open(db.url, 'a');
    await Promise.all(Array.from({ length: 100 }, () => a.commit({ op: 'add', by: 1 })));
    t.equal(a.counters.entries, 100);
    t.ok(a.counters.appends >= 1 && a.counters.appends <= 100, `${a.counters.appends} group commits`);
    t.ok(a.counters.bytes >= 100 * '[{"op":"add","by":1}]'.length);
    await a.close();
  });
});
