import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
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
 * healed by a flush or a reset. Whatever the link does, no daemon exits, its port answers, and
 * every start a daemon acknowledged is there afterwards.
 */

const ASK_ID = '3c4d5e6f-7081-4a92-8b03-c4d5e6f70819';

interface Linked {
  readonly daemon: SharingDaemon;
  readonly proxy: FaultProxy;
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

t.test(
  "a daemon's link blackholed, then healed by resets or by a flush: it never exits, and serves again",
  { skip: POSTGRES_SKIP, timeout: 240_000 },
  async (t) => {
    const server = await startPostgres(t);
    await server.createDatabase('partitions');
    const root = t.testdir();
    const link = async (name: string): Promise<Linked> => {
      const proxy = await startFaultProxy(t, server.socketDir);
      const daemon = await launchSharing(t, join(root, name), proxy.urlOf('partitions'));
      const out: string[] = [];
      daemon.child.stdout!.on('data', (c: Buffer) => out.push(c.toString()));
      daemon.child.stderr!.on('data', (c: Buffer) => out.push(c.toString()));
      t.teardown(() => {
        if (!t.passing()) console.error('OUTPUT', name, out.join('').slice(-20000));
      });
      return { daemon, proxy };
    };
    const a = await link('a');
    await eventually('a serves', () => serving(a.daemon));
    const key = (await readFile(join(a.daemon.dir, 'bootstrap.key'), 'utf8')).trim();
    const published = await callDaemon(a.daemon, key, 'POST', '/admin/flows', {
      source: askFlow(ASK_ID),
      organization: 'default',
    });
    t.equal(published.status, 200);
    const b = await link('b');
    await eventually(
      'a and b share the partitions',
      async () => ((await holdings(a.daemon, key)).get(b.daemon.url)?.length ?? 0) >= 7 && (await serving(b.daemon)),
      { withinMs: 30_000 },
    );
    t.teardown(async () => {
      if (!t.passing()) await printLogs([a.daemon.dir, b.daemon.dir]);
    });
    const acknowledged: string[] = [];
    const LEASE_MS = 2_000;

    // Each round blackholes one daemon's link, partition 0's holder every other round: the other
    // takes every partition within three lease periods, the cut-off one's port answers
    // throughout, and the heal (by resets, then by a flush) brings it back in the same process.
    const rounds = [
      [b, a, 'reset'],
      [a, b, 'reset'],
      [b, a, 'flush'],
      [a, b, 'flush'],
    ] as const;
    for (const [victim, other, heal] of rounds) {
      const name = `${victim === a ? 'a' : 'b'}${(await holdings(other.daemon, key)).get(victim.daemon.url)?.includes(0) ? ' (partition 0 with it)' : ''}, healed by ${heal}`;
      // Starts in flight through it while its link is blackholed: their commits are held in the network.
      const load = Array.from({ length: 6 }, () => startVia(victim.daemon, key));
      const watched = watchPort(victim.daemon);
      const cutAt = Date.now();
      victim.proxy.blackhole();
      await eventually(
        `the other daemon takes every partition from ${name}`,
        async () => (await holdings(other.daemon, key)).get(other.daemon.url)?.length === 16 && serving(other.daemon),
        { withinMs: 30_000 },
      );
      const tookMs = Date.now() - cutAt;
      t.ok(tookMs <= 3 * LEASE_MS + 500, `taken over within three lease periods: ${tookMs} ms (${name})`);
      for (let i = 0; i < 3; i++) {
        const r = await startVia(other.daemon, key);
        t.equal(r.status, 200, 'the other daemon starts executions meanwhile');
        if (r.id) acknowledged.push(r.id);
      }
      for (const r of await Promise.all(load)) if (r.status === 200 && r.id) acknowledged.push(r.id);
      await victim.proxy.heal(heal);
      await eventually(`${name}: it serves again`, () => serving(victim.daemon), { withinMs: 60_000 });
      t.same(await watched(), [], `its port answered within 2 s throughout (${name})`);
      t.equal(victim.daemon.child.exitCode, null, `it is still running (${name})`);
      t.equal(victim.daemon.child.signalCode, null);
      await eventually(
        'the two share the partitions again',
        async () => ((await holdings(other.daemon, key)).get(victim.daemon.url)?.length ?? 0) >= 7,
        { withinMs: 30_000 },
      );
      for (let i = 0; i < 3; i++) {
        const r = await startVia(victim.daemon, key);
        t.equal(r.status, 200, 'it starts executions again');
        if (r.id) acknowledged.push(r.id);
      }
    }
    for (const id of acknowledged) {
      const read = await callDaemon(a.daemon, key, 'GET', `/process/instance/${id}`);
      t.equal(read.status, 200, `acknowledged start ${id} is there`);
    }
  },
);

t.test(
  'a slow link well inside the lease keeps it: 466 ms each way under a 3 s lease, under load',
  { skip: POSTGRES_SKIP, timeout: 240_000 },
  async (t) => {
    const server = await startPostgres(t);
    await server.createDatabase('slow');
    const proxy = await startFaultProxy(t, server.socketDir);
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
