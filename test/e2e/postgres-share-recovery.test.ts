import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { bothShare, callDaemon, launchSharing, printLogs, serving, type SharingDaemon } from '../helpers/share.js';

/*
 * Recovery on daemons sharing one PostgreSQL database: a retry or a replay named through either
 * daemon reaches the one holding the execution, which reads it back from the shared history.
 */

const CHECK_ID = '3c4d5e6f-7081-4a92-8db3-c4d5e6f70819';
const CHECK = `processId: ${CHECK_ID}
name: Check
nodes:
  start: { type: startEvent, next: prep }
  prep: { type: setVariable, variables: { prepared: "{n}" }, next: sub }
  sub:
    type: subProcess
    nodes:
      s: { type: startEvent, next: check }
      check: { type: scriptTask, script: "if (!vars.ok) throw new Error('not ok'); return { checked: vars.n }", next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

interface View {
  processInstanceId: string;
  processVersion: string;
  stateCd: number;
  data: Record<string, unknown>;
  retries?: unknown[];
  replayOf?: { processInstanceId: string };
  nodes: { nodeId: string; statusCd: number; childInstanceIds?: string[] }[];
}

t.test('retry and replay through either of two sharing daemons', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const store = await server.createDatabase('share_recovery');
  const root = t.testdir();
  t.teardown(async () => {
    if (!t.passing()) await printLogs([join(root, 'a'), join(root, 'b')]);
  });
  const a = await launchSharing(t, join(root, 'a'), store);
  await eventually('a serves', () => serving(a));
  const key = (await readFile(join(a.dir, 'bootstrap.key'), 'utf8')).trim();
  const call = (d: SharingDaemon, method: string, path: string, body?: object) =>
    callDaemon(d, key, method, path, body);
  const b = await launchSharing(t, join(root, 'b'), store);
  await bothShare(a, b, key);
  await eventually('b serves', () => serving(b));
  // A flow published through a is known to b once b's copy of the directory has the entry.
  const publish = async (source: string, id: string, version: string) => {
    t.equal((await call(a, 'POST', '/admin/flows', { source, organization: 'default' })).status, 200);
    await eventually(`b knows ${id} version ${version}`, async () => {
      const flow = (await call(b, 'GET', `/admin/flows/${id}?version=${version}`)).body;
      return flow.version === version;
    });
  };
  const start = async (d: SharingDaemon, processId: string, data: object) => {
    const r = await call(d, 'POST', '/process/start', { processId, data });
    t.equal(r.status, 200, `started: ${r.status === 200 ? '' : JSON.stringify(r.body)}`);
    return r.body.processInstanceId as string;
  };
  await publish(CHECK, CHECK_ID, '1');

  const get = async (d: SharingDaemon, id: string): Promise<View> =>
    (await call(d, 'GET', `/process/instance/${id}`)).body as unknown as View;
  const settled = (d: SharingDaemon, id: string, stateCd: number, what: string) =>
    eventually(what, async () => {
      const v = await get(d, id);
      return v.stateCd === stateCd && v;
    });

  // Failed executions started on both daemons: in partitions of both.
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) ids.push(await start(i % 2 ? a : b, CHECK_ID, { n: i }));
  for (const id of ids) await settled(a, id, 2, `${id} failed`);

  // Retried through the daemon that does not started it: forwarded to the holder.
  for (const [i, id] of ids.entries()) {
    const r = await call(i % 2 ? b : a, 'POST', `/process/instance/${id}/retry`, { data: { ok: true } });
    t.same([r.status, r.body], [200, { processInstanceId: id, status: 'resumed' }]);
  }
  for (const [i, id] of ids.entries()) {
    const done = await settled(i % 2 ? a : b, id, 1, `${id} completed`);
    t.equal(done.data.checked, i, 'the child ran again with the fix and its result came back');
    t.match(done.retries, [{ by: /^key:/ }], 'one retry, by the key that asked (forwarded as it came)');
    const sub = done.nodes.filter((n) => n.nodeId === 'sub');
    t.equal(sub.length, 1, 'the subProcess node waited again for the same child');
    const child = await get(b, sub[0]!.childInstanceIds![0]!);
    t.equal(child.stateCd, 1, 'the same child completed');
  }
  const again = await call(b, 'POST', `/process/instance/${ids[0]}/retry`, {});
  t.same([again.status, again.body.error], [409, 'INSTANCE_NOT_FAILED']);

  // A replay through either daemon, from the middle, with the variables of that moment.
  const replay = await call(b, 'POST', `/process/instance/${ids[3]}/replay`, { nodeId: 'sub', data: { ok: true } });
  t.equal(replay.status, 200);
  t.equal(replay.body.replayOf, ids[3]);
  const replayed = await settled(a, replay.body.processInstanceId as string, 1, 'the replay completed');
  t.match(replayed.data, { n: 3, prepared: 3, checked: 3 });
  t.same(
    replayed.nodes.map((n) => n.nodeId),
    ['sub', 'done'],
  );
  t.match(replayed.replayOf, { processInstanceId: ids[3] });

  // Bulk, through either daemon: each lane applied by its partition's holder.
  const bulkDone = (bulkId: string) =>
    eventually(`bulk ${bulkId} ended`, async () => {
      // Read through a: one created through b may take a moment to be known there.
      const v = (await call(a, 'GET', `/process/bulk/${bulkId}`)).body;
      return ['COMPLETED', 'CANCELLED', 'FAILED'].includes(v.state as string) && v;
    });
  const more: string[] = [];
  for (let i = 0; i < 10; i++) more.push(await start(i % 2 ? a : b, CHECK_ID, { n: 100 + i }));
  for (const id of more) await settled(a, id, 2, `${id} failed`);
  const retry = await call(b, 'POST', '/process/bulk', {
    operation: 'retry',
    query: { processId: CHECK_ID, state: 'FAILED' },
    params: { data: { ok: true } },
  });
  t.equal(retry.status, 202);
  t.match(await bulkDone(retry.body.bulkId as string), { state: 'COMPLETED', total: 10, done: 10, skipped: 0 });
  for (const id of more) t.match(await settled(b, id, 1, `${id} completed`), { retries: [{ by: /^key:/ }] });

  // A bulk move of waiting executions where some cannot move.
  await publish(ROUTED_V1, ROUTED_ID, '1');
  const waiting: { id: string; kind: string }[] = [];
  for (let i = 0; i < 20; i++) {
    const kind = i % 10 === 0 ? 'b' : 'a';
    waiting.push({ id: await start(i % 2 ? a : b, ROUTED_ID, { kind }), kind });
  }
  // Each daemon checks its own executions against version 2: once it has read it.
  await publish(ROUTED_V2, ROUTED_ID, '2');
  const moveQuery = { processId: ROUTED_ID, version: '1', state: 'RUNNING' };
  const dry = await call(a, 'POST', '/process/bulk', {
    operation: 'move',
    query: moveQuery,
    params: { version: '2' },
    dryRun: true,
  });
  t.match(dry.body, { count: 20, refusedCount: 2 }, 'both daemons checked their executions');
  const move = await call(a, 'POST', '/process/bulk', {
    operation: 'move',
    query: moveQuery,
    params: { version: '2' },
  });
  t.match(await bulkDone(move.body.bulkId as string), { state: 'COMPLETED', total: 20, done: 18, skipped: 2 });
  for (const { id, kind } of waiting) t.equal((await get(b, id)).processVersion, kind === 'a' ? '2' : '1');
});

const ROUTED_ID = '4d5e6f70-8192-4aa3-9ec4-d5e6f708192a';
const ROUTED_V1 = `processId: ${ROUTED_ID}
name: Routed
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches:
      - { condition: "\${kind == 'b'}", next: hold }
    default: ask
  ask: { type: userTask, next: done }
  hold: { type: userTask, next: done }
  done: { type: endEvent }
`;
const ROUTED_V2 = `processId: ${ROUTED_ID}
name: Routed
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, next: done }
  done: { type: endEvent }
`;
