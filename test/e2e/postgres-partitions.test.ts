import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { inTransaction, POSTGRES_SKIP, queryAt, startPostgres } from '../helpers/postgres.js';
import {
  askFlow,
  callDaemon,
  holdings,
  launchSharing,
  printLogs,
  serving,
  type SharingDaemon,
} from '../helpers/share.js';

/*
 * Daemons sharing one database, each reaching it through a proxy of its own (fault-proxy.ts),
 * so that one daemon's link fails alone, as a partition does (issue #83): blackholed or slowed,
 * healed by a flush or a reset. Whatever the link does, no daemon exits, its port answers, every
 * start and answer a daemon acknowledged is there once afterwards, and no write lands under a
 * stale epoch (triggers on the database watch for one).
 */

const ASK_ID = '3c4d5e6f-7081-4a92-8b03-c4d5e6f70819';

interface Linked {
  readonly daemon: SharingDaemon;
  readonly proxy: FaultProxy;
  readonly name: string;
}

/** Starts with the daemon's own answer, or what went wrong on the way: never throws. */
async function startVia(d: SharingDaemon, key: string): Promise<{ status: number; id?: string; error?: string }> {
  try {
    const res = await fetch(`${d.url}/process/start`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ processId: ASK_ID, data: {} }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json().catch(() => ({}))) as { processInstanceId?: string; error?: string };
    return {
      status: res.status,
      ...(body.processInstanceId && { id: body.processInstanceId }),
      ...(body.error && { error: body.error }),
    };
  } catch (err) {
    return { status: 0, error: (err as Error).message };
  }
}

/**
 * Asks `d`'s port for /health every 200 ms until stopped, each ask sent again at once while the
 * connection is refused (as a client does), for 2 s at most; what it gives back is each ask that
 * had no answer within them: a daemon's port must answer throughout, if only with 503.
 */
function watchPort(d: SharingDaemon): () => Promise<string[]> {
  const unanswered: string[] = [];
  let watching = true;
  const ask = async (): Promise<void> => {
    const at = Date.now();
    let why = '';
    while (Date.now() - at < 2_000) {
      const left = 2_000 - (Date.now() - at);
      const answered = await fetch(`${d.url}/health`, { signal: AbortSignal.timeout(left) }).then(
        async (res) => (await res.arrayBuffer(), true),
        (err: Error) => ((why = err.message), false),
      );
      if (answered) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    unanswered.push(`${new Date(at).toISOString()}: ${why}`);
  };
  const done = (async () => {
    while (watching) {
      await ask();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return async () => {
    watching = false;
    await done;
    return unanswered;
  };
}

/**
 * Triggers on the database that record every journal entry or snapshot written under an epoch
 * the partition no longer carries (a stale owner's write getting past the fence), in
 * wfx_test_stale: what "no execution advanced by two daemons" means in rows.
 */
const STALE_WRITES = `
  CREATE TABLE wfx_test_stale (what text NOT NULL);
  CREATE FUNCTION wfx_test_check_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE current bigint;
  BEGIN
    IF NEW.partition >= 0 THEN
      SELECT epoch INTO current FROM wfx_partitions WHERE partition = NEW.partition;
      IF current IS DISTINCT FROM NEW.epoch THEN
        INSERT INTO wfx_test_stale VALUES (format('%s of partition %s under epoch %s, the partition at %s',
          TG_TABLE_NAME, NEW.partition, NEW.epoch, current));
      END IF;
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER wfx_test_journal BEFORE INSERT ON wfx_journal FOR EACH ROW EXECUTE FUNCTION wfx_test_check_epoch();
  CREATE TRIGGER wfx_test_snapshots BEFORE INSERT OR UPDATE ON wfx_snapshots FOR EACH ROW EXECUTE FUNCTION wfx_test_check_epoch();`;

/** Answers execution `id`'s input node through `d`: the status, or 0 when nothing came back. */
async function answerVia(d: SharingDaemon, key: string, id: string): Promise<number> {
  try {
    const res = await fetch(`${d.url}/process/task`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ processInstanceId: id, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'yes' } }),
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Every execution of the ask flow, listed through `d` page by page (ids, repeats kept). */
async function listed(d: SharingDaemon, key: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page++) {
    const q = `processId=${ASK_ID}&limit=200${cursor ? `&cursor=${cursor}` : ''}`;
    const r = await callDaemon(d, key, 'GET', `/process/instances?${q}`);
    const body = r.body as { items: { processInstanceId: string }[]; nextCursor: string | null };
    ids.push(...body.items.map((i) => i.processInstanceId));
    cursor = body.nextCursor;
    if (cursor === null) return ids;
  }
  throw new Error('more than 50 pages of executions');
}

/** One PostgreSQL server for the file (none where it cannot run): each test makes a database of its own on it. */
const server = POSTGRES_SKIP ? null : await startPostgres(t);

t.test(
  "three daemons, one's link blackholed, then healed by resets or by a flush: the others serve meanwhile, nobody exits, everything once",
  { skip: POSTGRES_SKIP, timeout: 300_000 },
  async (t) => {
    const store = await server!.createDatabase('partitions');
    const root = t.testdir();
    const link = async (name: string): Promise<Linked> => {
      const proxy = await startFaultProxy(t, server!.socketDir);
      const daemon = await launchSharing(t, join(root, name), proxy.urlOf('partitions'));
      const out: string[] = [];
      daemon.child.stdout!.on('data', (c: Buffer) => out.push(c.toString()));
      daemon.child.stderr!.on('data', (c: Buffer) => out.push(c.toString()));
      t.teardown(() => {
        if (!t.passing()) console.error('OUTPUT', name, out.join('').slice(-20000));
      });
      return { daemon, proxy, name };
    };
    const a = await link('a');
    await eventually('a serves', () => serving(a.daemon));
    await queryAt(store, STALE_WRITES);
    const key = (await readFile(join(a.daemon.dir, 'bootstrap.key'), 'utf8')).trim();
    const published = await callDaemon(a.daemon, key, 'POST', '/admin/flows', {
      source: askFlow(ASK_ID),
      organization: 'default',
    });
    t.equal(published.status, 200);
    const b = await link('b');
    const c = await link('c');
    const all = [a, b, c];
    const shareAgain = (what: string) =>
      eventually(
        what,
        async () => {
          const held = await holdings(a.daemon, key);
          for (const d of all)
            if ((held.get(d.daemon.url)?.length ?? 0) < 4 || !(await serving(d.daemon))) return false;
          return true;
        },
        { withinMs: 60_000 },
      );
    await shareAgain('the three share the partitions');
    t.teardown(async () => {
      if (!t.passing()) await printLogs(all.map((d) => d.daemon.dir));
    });
    let startsSent = 0;
    const acknowledged: string[] = [];
    const answered: string[] = [];
    const waiting: string[] = [];
    const start = async (d: Linked) => {
      startsSent++;
      const r = await startVia(d.daemon, key);
      if (r.status === 200 && r.id) {
        acknowledged.push(r.id);
        waiting.push(r.id);
      }
      return r;
    };
    const answer = async (d: Linked) => {
      const id = waiting.shift();
      if (id === undefined) return 0;
      const status = await answerVia(d.daemon, key, id);
      if (status === 200) answered.push(id);
      return status;
    };
    for (const d of all) for (let i = 0; i < 4; i++) t.equal((await start(d)).status, 200);
    const LEASE_MS = 2_000;

    // Each round blackholes one daemon's link, partition 0's holder in two of them: the others
    // hold every partition between them within three lease periods and serve, the cut-off
    // one's port answers throughout, and the heal (by resets, or by a flush) brings it back in
    // the same process. Starts and answers go through every daemon meanwhile, the cut-off one too.
    const rounds: [() => Promise<Linked>, 'reset' | 'flush'][] = [
      [async () => c, 'reset'],
      [() => holding0(all, key), 'reset'],
      [async () => b, 'flush'],
      [() => holding0(all, key), 'flush'],
    ];
    for (const [pick, heal] of rounds) {
      const victim = await pick();
      const others = all.filter((d) => d !== victim);
      const name = `${victim.name}${(await holdings(others[0]!.daemon, key)).get(victim.daemon.url)?.includes(0) ? ' (partition 0 with it)' : ''}, healed by ${heal}`;
      // Starts and answers in flight through it while its link is blackholed: their commits are held in the network.
      const load = [
        ...Array.from({ length: 4 }, () => start(victim)),
        ...Array.from({ length: 2 }, () => answer(victim)),
      ];
      const watched = watchPort(victim.daemon);
      const cutAt = Date.now();
      victim.proxy.blackhole();
      await eventually(
        `the others hold every partition of ${name}, and serve`,
        async () => {
          const held = await holdings(others[0]!.daemon, key);
          const count = others.reduce((n, d) => n + (held.get(d.daemon.url)?.length ?? 0), 0);
          return count === 16 && (await serving(others[0]!.daemon)) && serving(others[1]!.daemon);
        },
        { withinMs: 30_000 },
      );
      const tookMs = Date.now() - cutAt;
      t.ok(tookMs <= 3 * LEASE_MS + 500, `taken over within three lease periods: ${tookMs} ms (${name})`);
      for (const d of others) {
        t.equal((await start(d)).status, 200, `${d.name} starts executions meanwhile`);
        t.equal(await answer(d), 200, `${d.name} takes answers meanwhile`);
      }
      await Promise.all(load);
      await victim.proxy.heal(heal);
      await eventually(`${name}: it serves again`, () => serving(victim.daemon), { withinMs: 60_000 });
      t.same(await watched(), [], `its port answered within 2 s throughout (${name})`);
      for (const d of all) t.equal(d.daemon.child.exitCode, null, `${d.name} is still running (${name})`);
      await shareAgain(`the three share the partitions again (${name})`);
      t.equal((await start(victim)).status, 200, 'it starts executions again');
      t.equal(await answer(victim), 200, 'and takes answers again');
    }

    // Every acknowledged start there once, every acknowledged answer applied, no stale write.
    const ids = await listed(a.daemon, key);
    t.equal(new Set(ids).size, ids.length, `no execution listed twice (${ids.length})`);
    t.ok(ids.length <= startsSent, `no more executions than starts sent (${ids.length} of ${startsSent})`);
    const there = new Set(ids);
    t.same(
      acknowledged.filter((id) => !there.has(id)),
      [],
      `every acknowledged start is there (${acknowledged.length})`,
    );
    for (const id of answered) {
      const read = await callDaemon(b.daemon, key, 'GET', `/process/instance/${id}`);
      t.equal(read.body.state, 'COMPLETED', `acknowledged answer to ${id} applied`);
    }
    t.same(await queryAt(store, 'SELECT what FROM wfx_test_stale'), [], 'no write under a stale epoch');
    // The watch would have seen one: a stale entry written and rolled back is recorded.
    const probe = await inTransaction(t, store, "INSERT INTO wfx_journal VALUES (1, 1e12, -1, '[]')");
    t.equal((await probe.query('SELECT what FROM wfx_test_stale')).rowCount, 1, 'a stale write is seen');
    await probe.query('ROLLBACK');
  },
);

/** The daemon holding partition 0, as `all[0]` lists it. */
async function holding0(all: readonly Linked[], key: string): Promise<Linked> {
  const held = await holdings(all[0]!.daemon, key);
  const holder = all.find((d) => held.get(d.daemon.url)?.includes(0));
  if (!holder) throw new Error('no daemon holds partition 0');
  return holder;
}

t.test(
  'a slow link well inside the lease keeps it: 466 ms each way under a 3 s lease, under load',
  { skip: POSTGRES_SKIP, timeout: 240_000 },
  async (t) => {
    await server!.createDatabase('slow');
    const proxy = await startFaultProxy(t, server!.socketDir);
    const daemon = await launchSharing(t, join(t.testdir(), 'slow'), proxy.urlOf('slow'), {}, ['--lease', '3s']);
    const out: string[] = [];
    daemon.child.stdout!.on('data', (c: Buffer) => out.push(c.toString()));
    t.teardown(() => {
      if (!t.passing()) console.error(out.join('').slice(-20000));
    });
    await eventually('it serves', () => serving(daemon));
    const key = (await readFile(join(daemon.dir, 'bootstrap.key'), 'utf8')).trim();
    t.equal(
      (await callDaemon(daemon, key, 'POST', '/admin/flows', { source: askFlow(ASK_ID), organization: 'default' }))
        .status,
      200,
    );
    const epochOf = async () =>
      ((await (await fetch(`${daemon.url}/health`)).json()) as { store?: { epoch?: number } }).store?.epoch;
    const epoch = await epochOf();
    proxy.delay(466);
    // Four lease periods of starts, four at a time, each a round trip or more on this link.
    const until = Date.now() + 12_000;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (Date.now() < until) statuses.push((await startVia(daemon, key)).status);
      }),
    );
    await proxy.heal('flush');
    t.ok(statuses.length >= 8, `starts went on over the slow link (${statuses.length})`);
    t.same([...new Set(statuses)], [200], 'every one acknowledged');
    t.notMatch(out.join(''), /STORE_LEASE_LOST/, 'the lease was never lost');
    t.equal(await epochOf(), epoch, 'and never taken again');
  },
);
