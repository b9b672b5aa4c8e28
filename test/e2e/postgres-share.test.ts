import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { callDaemon, holdings, launchSharing, printLogs, serving, type SharingDaemon } from '../helpers/share.js';

/*
 * Daemons sharing one database (`--share`, decision 041): each holds a part of the execution
 * partitions, and any of them answers any call: a request for an execution the other holds is
 * forwarded to it, a change to the directory goes to partition 0's holder. A daemon that joins
 * is given partitions while the first runs; one SIGKILLed leaves its partitions to the other,
 * whose executions go on there, partition 0 included.
 */

const ASK_ID = '1a2b3c4d-5e6f-4a70-8b91-a2b3c4d5e6f7';
const ASK = `processId: ${ASK_ID}
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const LATER_ID = '2b3c4d5e-6f70-4a81-9ca2-b3c4d5e6f708';

type Daemon = SharingDaemon;

t.test('two daemons share a database: calls reach the holder, partitions move', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const store = await server.createDatabase('share');
  const root = t.testdir();
  t.teardown(async () => {
    if (!t.passing()) await printLogs([join(root, 'a'), join(root, 'b')]);
  });
  const a = await launchSharing(t, join(root, 'a'), store);
  await eventually('a serves', () => serving(a));
  const key = (await readFile(join(a.dir, 'bootstrap.key'), 'utf8')).trim();
  const call = (d: Daemon, method: string, path: string, body?: object) => callDaemon(d, key, method, path, body);

  t.equal((await call(a, 'POST', '/admin/flows', { source: ASK, organization: 'default' })).status, 200);

  // Executions started while `a` holds everything: some of them move when `b` joins.
  const before: string[] = [];
  for (let i = 0; i < 24; i++) {
    const r = await call(a, 'POST', '/process/start', { processId: ASK_ID, data: {} });
    t.equal(r.status, 200, 'started');
    before.push(r.body.processInstanceId as string);
  }

  const b = await launchSharing(t, join(root, 'b'), store);
  const shared = await eventually(
    'a and b share the partitions',
    async () => {
      const held = await holdings(a, key);
      const ofA = held.get(a.url) ?? [];
      const ofB = held.get(b.url) ?? [];
      // 15 execution partitions: 7 and 8, partition 0 staying with a.
      return ofA.includes(0) && ofA.length + ofB.length === 16 && Math.min(ofA.length - 1, ofB.length) === 7 && held;
    },
    { withinMs: 20_000 },
  ).catch(async (err) => {
    await printLogs([a.dir, b.dir]);
    console.error(JSON.stringify([...(await holdings(a, key))]));
    throw err;
  });
  t.notOk(shared.get(b.url)!.includes(0), 'partition 0 stays with the daemon that held it');
  await eventually('b serves', () => serving(b));

  // Any daemon answers for any execution: started on either, read and answered through either.
  const started: string[] = [];
  for (let i = 0; i < 24; i++) {
    const r = await call(i % 2 ? a : b, 'POST', '/process/start', { processId: ASK_ID, data: {} });
    t.equal(r.status, 200, 'started on either daemon');
    started.push(r.body.processInstanceId as string);
  }
  const all = [...before, ...started];
  for (const [i, id] of all.entries()) {
    const via = i % 2 ? b : a;
    const read = await call(via, 'GET', `/process/instance/${id}`);
    t.equal(read.status, 200, `read ${id} through ${via === a ? 'a' : 'b'}`);
    if (i % 3 === 0) continue; // left waiting for the moves below
    const answer = await call(i % 2 ? a : b, 'POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: `answer ${i}` },
    });
    t.equal(answer.status, 200, `answered ${id}`);
  }
  // A directory change through the daemon without partition 0 is made by its holder, and read back through either.
  const later = ASK.replace(ASK_ID, LATER_ID).replace('name: Ask', 'name: Later');
  t.equal((await call(b, 'POST', '/admin/flows', { source: later, organization: 'default' })).status, 200);
  // Read your writes: b answers once its copy of the directory has the write, each time.
  t.equal((await call(b, 'GET', `/admin/flows/${LATER_ID}`)).status, 200, 'b reads the flow published through it');
  for (let i = 2; i <= 6; i++) {
    const source = later.replace('name: Later', `name: Later ${i}`);
    const published = await call(b, 'POST', '/admin/flows', { source, organization: 'default' });
    const read = await call(b, 'GET', `/admin/flows/${LATER_ID}`);
    t.equal(read.body.version, published.body.version, `version ${i} is read at once through b`);
    const run = await call(b, 'POST', '/process/start', { processId: LATER_ID, data: {} });
    t.equal(run.status, 200, 'and started');
  }

  // b dies: a takes its partitions once its lease lapses, and its waiting executions go on there.
  b.child.kill('SIGKILL');
  await once(b.child, 'exit');
  await eventually('a holds every partition again', async () => (await holdings(a, key)).get(a.url)?.length === 16, {
    withinMs: 60_000,
  });
  const waiting = all.filter((_, i) => i % 3 === 0);
  for (const id of waiting) {
    const r = await call(a, 'POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'after b died' },
    });
    t.equal(r.status, 200, `answered ${id} on a after b died`);
  }

  // b again, then a dies: b takes partition 0 too (restarting for it) and serves everything.
  const b2 = await launchSharing(t, b.dir, store);
  await eventually('b shares again', async () => ((await holdings(a, key)).get(b2.url)?.length ?? 0) >= 7, {
    withinMs: 60_000,
  });
  await eventually('b serves again', () => serving(b2));
  const last = await call(b2, 'POST', '/process/start', { processId: ASK_ID, data: {} });
  t.equal(last.status, 200);
  a.child.kill('SIGKILL');
  await once(a.child, 'exit');
  const url = await eventually(
    'b holds every partition',
    async () => {
      const info = JSON.parse(await readFile(join(b.dir, 'daemon.json'), 'utf8')) as { url: string };
      const r = await fetch(`${info.url}/admin/cluster`, { headers: { 'x-api-key': key } }).catch(() => null);
      if (r?.status !== 200) return false;
      const body = (await r.json()) as { items: { url: string; partitions: unknown[] }[] };
      return body.items.some((d) => d.url === info.url && d.partitions.length === 16) && info.url;
    },
    { withinMs: 60_000 },
  );
  const b3: Daemon = { ...b2, url };
  const answer = await call(b3, 'POST', '/process/task', {
    processInstanceId: last.body.processInstanceId,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'after a died' },
  });
  t.equal(answer.status, 200, 'an execution goes on after partition 0 moved');
  for (const id of all) {
    const r = await call(b3, 'GET', `/process/instance/${id}`);
    t.equal(r.body.state, 'COMPLETED', `${id} completed`);
  }
  t.equal((await call(b3, 'GET', `/admin/flows/${LATER_ID}`)).status, 200, 'the directory moved with partition 0');
});
