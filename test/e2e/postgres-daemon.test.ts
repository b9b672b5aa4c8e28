import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { killIfAlive, startDaemon, wfxIn } from '../helpers/cli.js';
import { foreground, serving } from '../helpers/standby.js';
import { eventually } from '../helpers/eventually.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../helpers/postgres.js';
import type { ClusterDaemon } from '../../src/shared/api/index.js';

const FLOW_ID = '0d7a4f5e-3c2b-4a1d-9e8f-7a6b5c4d3e2f';
const FLOW = `processId: ${FLOW_ID}
name: Approve on PostgreSQL
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const QUICK_ID = '5b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e';
const QUICK = `processId: ${QUICK_ID}
name: Straight through
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

/** Calls a daemon's API with `key`. */
function api(url: string, key: string) {
  return async (method: string, path: string, body?: object) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body && { 'content-type': 'application/json' }) },
      body: body && JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
}

/**
 * A daemon serving `url` (2 s lease) with FLOW published and one execution of it waiting, and
 * what a standby beside it needs: the admin key, and a second data directory.
 */
async function servingWithOneWaiting(t: Test, url: string) {
  const root = t.testdir(); // once: each call empties it again
  const dirA = join(root, 'a');
  const a = await startDaemon(t, { dataDir: dirA, args: ['--store', url, '--lease', '2s'] });
  const key = (await readFile(join(dirA, 'bootstrap.key'), 'utf8')).trim();
  const callA = api(a.url, key);
  await callA('POST', '/admin/flows', { source: FLOW, organization: 'default' });
  const started = await callA('POST', '/process/start', { processId: FLOW_ID, data: {} });
  return { root, dirA, dirB: join(root, 'b'), a, key, callA, id: started.body.processInstanceId as string };
}

t.test('a daemon on PostgreSQL', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);

  t.test('keeps every acknowledged step in the database across kill -9', async (t) => {
    const url = await server.createDatabase('restart');
    const dataDir = join(t.testdir(), 'a');
    // A new database cut into 4 partitions, asked through the background daemon's command line.
    const first = await startDaemon(t, { dataDir, args: ['--store', url, '--partitions', '4'] });
    const cmdline = await readFile(`/proc/${first.pid}/cmdline`, 'utf8').catch(() => '');
    t.notMatch(cmdline, /postgresql:/, "the connection string is not on the daemon's command line");
    const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
    let call = api(first.url, key);
    t.match((await call('POST', '/admin/flows', { source: FLOW, organization: 'default' })).body, { created: true });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const started = await call('POST', '/process/start', { processId: FLOW_ID, data: { n: i } });
      t.equal(started.status, 200);
      ids.push(started.body.processInstanceId as string);
    }
    t.equal((await queryAt(url, 'SELECT count(*)::int AS n FROM wfx_snapshots'))[0]!.n, 0, 'no snapshot yet');
    t.same(await queryAt(url, 'SELECT partitions FROM wfx_cluster'), [{ partitions: 4 }]);
    const written = await queryAt<{ partition: number }>(url, 'SELECT DISTINCT partition FROM wfx_journal');
    t.ok(
      written.every((r) => r.partition >= 0 && r.partition < 4) && written.some((r) => r.partition > 0),
      `the executions' entries in partitions 1 to 3, the flow's in 0 (${written.map((r) => r.partition).join(', ')})`,
    );
    t.same(
      await queryAt(url, 'SELECT action, count(*)::int AS n FROM wfx_audit GROUP BY action ORDER BY action'),
      [
        { action: 'POST /admin/flows', n: 1 },
        { action: 'POST /process/start', n: 5 },
      ],
      "the audit trail's records are rows of their own table, one a request",
    );
    process.kill(first.pid, 'SIGKILL');
    // The same daemon again (its id is in its data directory): it takes its own lease back at once.
    const second = await startDaemon(t, {
      dataDir,
      args: ['--store', url, '--advertise-url', 'http://wfx-1.internal:7878'],
    });
    call = api(second.url, key);
    for (const id of ids) {
      const inst = await call('GET', `/process/instance/${id}`);
      t.match(inst.body, { processInstanceId: id, state: 'RUNNING' }, 'every acknowledged start is there');
    }
    const answered = await call('POST', '/process/task', {
      processInstanceId: ids[0],
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'yes' },
    });
    t.equal(answered.status, 200);
    const trail = await call('GET', '/admin/audit?limit=10');
    t.same(
      (trail.body.items as Array<{ action: string }>).map((e) => e.action),
      ['POST /process/task', ...Array<string>(5).fill('POST /process/start'), 'POST /admin/flows'],
      'the records written before the SIGKILL are read back after it, newest first',
    );
    await eventually('the answered execution completes', async () => {
      const inst = await call('GET', `/process/instance/${ids[0]}`);
      return inst.body.state === 'COMPLETED';
    });
    const status = await wfxIn(['daemon', 'status', '--data-dir', dataDir]);
    t.match(
      status.stdout,
      /store {11}PostgreSQL, lease epoch 2 \(10s, renewed \d+\.\ds ago\)/,
      'status shows the lease',
    );
    t.notMatch(status.stdout, /postgresql:|localhost/, "and not the database's address");
    await eventually('it is listed where it said the others reach it', async () => {
      const rows = await queryAt(url, 'SELECT url FROM wfx_daemons');
      return rows.length === 1 && rows[0]!.url === 'http://wfx-1.internal:7878';
    });
    const stop = await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
    t.equal(stop.code, 0);
    t.same(await queryAt(url, 'SELECT url FROM wfx_daemons'), [], 'and a clean stop leaves the list');
    const leases = await queryAt(url, 'SELECT DISTINCT owner FROM wfx_partitions');
    t.same(leases, [{ owner: null }], "a clean stop gives every partition's lease up");
    // The shared partition's journal is deleted a checkpoint late (docs/clustering.md): what is
    // left of it must be covered by its snapshot.
    t.same(
      await queryAt(
        url,
        `SELECT count(*)::int AS n FROM wfx_journal
          WHERE partition <> -1 OR seq > COALESCE((SELECT seq FROM wfx_snapshots WHERE partition = -1), 0)`,
      ),
      [{ n: 0 }],
      "and checkpoints: each partition's snapshot covers its journal",
    );
  });

  t.test('a standby takes over when the daemon serving dies, with its executions', async (t) => {
    const url = await server.createDatabase('standby');
    const { root, dirB, a, key, callA, id } = await servingWithOneWaiting(t, url);
    // Started and finished in one step: acknowledged once it is in history, which is a table too.
    await callA('POST', '/admin/flows', { source: QUICK, organization: 'default' });
    const quick = await callA('POST', '/process/start', { processId: QUICK_ID, data: { fast: true } });
    t.equal(quick.status, 200);
    const upload = await fetch(`${a.url}/files?name=note.txt`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'text/plain' },
      body: 'kept in the database',
    });
    const { fileId } = (await upload.json()) as { fileId: string };

    const b = foreground(t, dirB, ['--store', url, '--standby', '--lease', '2s']);
    await eventually('the standby says it waits', () => /standing by until the lease is free/.test(b.output()));
    const refused = await wfxIn(['daemon', 'start', '--port', '0', '--data-dir', join(root, 'c'), '--store', url]);
    t.equal(refused.code, 1, 'a third daemon without --standby is refused');
    t.match(refused.stderr, /DATABASE_IN_USE: daemon [0-9a-f-]+ \(pid \d+ on /);

    // While it stands by, the standby answers every call with what the serving daemon answers.
    const standbyUrl = (JSON.parse(await readFile(join(dirB, 'daemon.json'), 'utf8')) as { url: string }).url;
    t.not(standbyUrl, a.url);
    const standbyHealth = await eventually('the standby forwards', async () => {
      const res = await fetch(`${standbyUrl}/health`);
      const body = (await res.json()) as { status: string; standby?: { forwardingTo?: string } };
      return res.status === 200 && body;
    });
    t.match(standbyHealth, { status: 'standby', standby: { forwardingTo: a.url } }, 'its health says where to');
    const viaB = api(standbyUrl, key);
    const forwarded = await viaB('POST', '/process/start', { processId: FLOW_ID, data: { via: 'b' } });
    t.equal(forwarded.status, 200, 'a start through the standby');
    const forwardedId = forwarded.body.processInstanceId as string;
    t.match(
      (await callA('GET', `/process/instance/${forwardedId}`)).body,
      { processInstanceId: forwardedId, state: 'RUNNING' },
      'started on the serving daemon',
    );
    t.match(
      await viaB('GET', '/process/instance/00000000-0000-7000-8000-000000000000'),
      { status: 404, body: { error: 'INSTANCE_NOT_FOUND' } },
      "the serving daemon's errors, as they are",
    );
    t.equal((await api(standbyUrl, 'wfx_not-a-key')('GET', '/process/list')).status, 401, 'and its refusals');
    const stream = await fetch(`${standbyUrl}/process/instance/${quick.body.processInstanceId as string}/logs`, {
      headers: { 'x-api-key': key, accept: 'text/event-stream' },
    });
    t.equal(stream.headers.get('content-type')?.split(';')[0], 'text/event-stream', 'a log stream, streamed through');
    t.match(await stream.text(), /event: end/, 'to its end');
    // A key's rate limit counts its calls once, whichever daemon they reach.
    const limited = await callA('POST', '/admin/api-keys', {
      name: 'limited',
      role: 'viewer',
      organization: 'default',
      rateLimitPerMinute: 3,
    });
    const limitedKey = limited.body.apiKey as string;
    const statuses = [];
    for (const via of [a.url, standbyUrl, a.url, standbyUrl])
      statuses.push((await api(via, limitedKey)('GET', '/process/list')).status);
    t.same(statuses, [200, 200, 200, 429], 'a rate limit holds across the daemons of a database');
    const twice = await fetch(`${standbyUrl}/process/list`, {
      headers: { 'x-api-key': key, 'x-wfx-forwarded-by': 'another-daemon' },
    });
    t.equal(twice.status, 503, 'a request forwarded already is not forwarded again');
    t.match(await twice.json(), { error: 'DAEMON_STANDBY' });
    // The standby's data directory holds no credential (it never served): the admin's key is given.
    const status = await wfxIn(['daemon', 'status', '--data-dir', dirB, '--json', '--api-key', key]);
    t.equal(status.code, 0, 'a standby that forwards is running as it should');
    const shown = JSON.parse(status.stdout) as {
      health: { status: string };
      cluster: { url: string; self: boolean; partitions: { partition: number; replayEntries: number }[] }[];
    };
    t.equal(shown.health.status, 'standby');
    t.match(
      shown.cluster
        .map((d) => ({ url: d.url, serving: d.partitions.length > 0 }))
        .sort((x, y) => (x.url < y.url ? -1 : 1)),
      [
        { url: a.url, serving: true },
        { url: standbyUrl, serving: false },
      ].sort((x, y) => (x.url < y.url ? -1 : 1)),
      'status lists both daemons of the database, and which one serves',
    );
    const replay = shown.cluster.flatMap((d) => d.partitions.map((p) => p.replayEntries));
    const entries = replay.reduce((a, b) => a + b, 0);
    t.equal(replay.length, 16, 'the serving daemon holds all 16 partitions of a new database');
    t.ok(entries > 0, `the serving daemon's replay lag is counted (${entries} entries)`);
    // The standby keeps a copy of the state current, and says how far behind it is.
    const copy = await eventually('the standby says its copy is current', async () => {
      const again = await wfxIn(['daemon', 'status', '--data-dir', dirB, '--json', '--api-key', key]);
      const daemons = (JSON.parse(again.stdout) as { cluster: ClusterDaemon[] }).cluster;
      const standby = daemons.find((d) => d.url === standbyUrl);
      return standby?.following?.behindEntries === 0 && standby.following;
    });
    t.ok(copy.appliedSeq > 0, `its copy applied the journal up to entry ${copy.appliedSeq}`);
    // The table shows the same figure: read again, as an entry may be appended between two reads.
    const text = await eventually('the table shows the standby current (BEHIND 0)', async () => {
      const shown = await wfxIn(['daemon', 'status', '--data-dir', dirB, '--api-key', key]);
      return /standby +- +- +- +0 +[\d.]+s ago/.test(shown.stdout) && shown;
    });
    t.pass('BEHIND 0 in its row');
    t.match(text.stdout, /forwarding requests to http:\/\/127\.0\.0\.1:\d+/);
    t.match(text.stdout, /cluster {9}2 daemons on the database/);
    t.match(text.stdout, /serving +0-15 \(epoch \d+\)/);

    process.kill(a.pid, 'SIGKILL');
    const info = await serving(dirB, 'the standby serves');
    t.equal(info.url, standbyUrl, 'on the port it forwarded from');
    t.match(b.output(), /took over from the copy kept while standing by/, 'from the copy it kept, not a load');
    const callB = api(info.url, key);
    t.match((await callB('GET', `/process/instance/${forwardedId}`)).body, { state: 'RUNNING' }, 'what it forwarded');
    t.match((await callB('GET', `/process/instance/${id}`)).body, { state: 'RUNNING' }, 'the execution is there');
    t.match(
      (await callB('GET', `/process/instance/${quick.body.processInstanceId as string}`)).body,
      { processInstanceId: quick.body.processInstanceId, state: 'COMPLETED' },
      'and the finished one, from history',
    );
    const download = await fetch(`${info.url}/files/${fileId}`, { headers: { 'x-api-key': key } });
    t.equal(await download.text(), 'kept in the database', 'and the files the first daemon stored');
    const answered = await callB('POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'from b' },
    });
    t.equal(answered.status, 200, 'and answers go to the standby now');
    b.child.kill('SIGTERM');
    const [code] = (await once(b.child, 'exit')) as [number | null];
    t.equal(code, 0, 'the standby stops cleanly');
  });

  t.test('fencing: a daemon paused past its lease writes nothing after the takeover, and rejoins', async (t) => {
    const url = await server.createDatabase('fencing');
    const { dirA, dirB, a, key, callA, id } = await servingWithOneWaiting(t, url);
    const epochA = (await queryAt<{ epoch: string }>(url, 'SELECT epoch FROM wfx_partitions'))[0]!.epoch;
    const countA = async () =>
      (await queryAt<{ n: number }>(url, 'SELECT count(*)::int AS n FROM wfx_journal WHERE epoch = $1', [epochA]))[0]!
        .n;
    const writtenByA = await countA();

    const b = foreground(t, dirB, ['--store', url, '--standby', '--lease', '2s']);
    await eventually('the standby waits', () => /standing by until the lease is free/.test(b.output()));
    process.kill(a.pid, 'SIGSTOP');
    t.teardown(() => killIfAlive(a.pid));
    const info = await serving(dirB, 'the standby took over');
    const callB = api(info.url, key);
    const answered = await callB('POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'b moved it on' },
    });
    t.equal(answered.status, 200, 'the new owner moves the execution on');

    // A request reaches the paused daemon; it runs when the daemon is let go.
    const late = callA('POST', '/process/start', { processId: FLOW_ID, data: { late: true } }).catch((err: Error) => ({
      status: 0,
      body: { error: err.message },
    }));
    process.kill(a.pid, 'SIGCONT');
    const outcome = await late;
    if (outcome.status === 200) {
      // Let go, the paused daemon may notice the takeover first and, a standby by then, pass the
      // start on to the new owner: the acknowledgement is then the new owner's, who has it.
      const started = (outcome.body as { processInstanceId: string }).processInstanceId;
      t.equal(
        (await callB('GET', `/process/instance/${started}`)).status,
        200,
        "a start acknowledged is the new owner's",
      );
    } else t.not(outcome.status, 200, `the paused daemon acknowledges nothing after the takeover (${outcome.status})`);
    const logA = () => readFile(join(dirA, 'logs', 'daemon.log'), 'utf8');
    await eventually('the paused daemon notices, and rejoins as a standby', async () =>
      /STORE_LEASE_LOST[\s\S]*standing by until the lease is free/.test(await logA()),
    );
    t.equal(await countA(), writtenByA, 'none of its writes landed');
    t.match((await callB('GET', `/process/instance/${id}`)).body, { state: 'COMPLETED' }, 'the new owner serves on');

    // The new owner stops: the first daemon, a standby now, takes over again, on its own port.
    b.child.kill('SIGTERM');
    await once(b.child, 'exit');
    const back = await serving(dirA, 'the first daemon serves again');
    t.equal(back.url, a.url, 'on the port it had');
    t.match((await callA('GET', `/process/instance/${id}`)).body, { state: 'COMPLETED' }, 'with what the other did');
  });

  t.test(
    'the database unreachable for a while: writes refused, nothing acknowledged lost, service resumes',
    async (t) => {
      const proxy = await startFaultProxy(t, server.socketDir);
      await server.createDatabase('outage');
      const url = proxy.urlOf('outage');
      const { dirA, a, callA, id } = await servingWithOneWaiting(t, url);
      const acknowledged = [id];
      for (let i = 0; i < 3; i++) {
        const started = await callA('POST', '/process/start', { processId: FLOW_ID, data: { i } });
        t.equal(started.status, 200);
        acknowledged.push(started.body.processInstanceId as string);
      }
      await proxy.cut();
      const refused = await callA('POST', '/process/start', { processId: FLOW_ID, data: { during: true } }).catch(
        (err: Error) => ({ status: 0, body: { error: err.message } }),
      );
      t.not(refused.status, 200, `a start while the database is away is not acknowledged (${refused.status})`);
      await eventually('the daemon keeps trying', async () =>
        /DATABASE_UNREACHABLE/.test(await readFile(join(dirA, 'logs', 'daemon.log'), 'utf8')),
      );
      await proxy.heal('flush');
      await serving(dirA, 'the daemon serves again by itself', 60_000);
      for (const acked of acknowledged)
        t.match((await callA('GET', `/process/instance/${acked}`)).body, { state: 'RUNNING' }, 'acknowledged: kept');
      t.equal(
        (await callA('POST', '/process/start', { processId: FLOW_ID, data: {} })).status,
        200,
        'and writes go on',
      );
      t.doesNotThrow(() => process.kill(a.pid, 0), 'in the same process');
    },
  );

  t.test('a malformed --store is a usage error; --standby needs --foreground', async (t) => {
    const dir = join(t.testdir(), 'x');
    const bad = await wfxIn(['daemon', 'start', '--data-dir', dir, '--store', 'mysql://secret@db/x']);
    t.equal(bad.code, 2);
    t.match(bad.stderr, /USAGE_ERROR: --store takes a PostgreSQL URL/);
    const notUrl = await wfxIn(['daemon', 'start', '--data-dir', dir, '--store', 'user:hunter2@db']);
    t.notMatch(notUrl.stderr, /hunter2/, 'a malformed string is not echoed: it may hold a password');
    const standby = await wfxIn(['daemon', 'start', '--data-dir', dir, '--store', server.url, '--standby']);
    t.equal(standby.code, 2);
    t.match(standby.stderr, /--standby runs with --foreground/);
    const noStore = await wfxIn(['daemon', 'start', '--data-dir', dir, '--lease', '5s']);
    t.match(noStore.stderr, /--lease is the lease on a database/);
    // Usage errors (exit 2) with what the user needs to know.
    const refused: Array<[string[], RegExp]> = [
      [['--partitions', '4'], /--partitions cuts a database into partitions: give --store too/],
      [['--store', server.url, '--partitions', '0'], /must be a whole number from 1 to 1024/],
      [['--share'], /--share shares a database's executions: give --store too/],
      [['--store', server.url, '--share', '--standby', '--foreground'], /--share and --standby exclude each other/],
      [
        ['--advertise-url', 'http://h:1'],
        /--advertise-url is where the database's other daemons reach this one: give --store too/,
      ],
      [
        ['--store', server.url, '--advertise-url', 'http://u:p@h:1/x'],
        /must be http\(s\):\/\/host:port, with no credentials, path or query/,
      ],
    ];
    for (const [args, message] of refused) {
      const out = await wfxIn(['daemon', 'start', '--data-dir', dir, ...args]);
      t.equal(out.code, 2, args.join(' '));
      t.match(out.stderr, message);
    }
  });
});
