import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';

/*
 * Bulk retry and bulk move on a real daemon over HTTP: a query's failed executions retried with
 * a fix, and 100 waiting executions moved to a new version where 10 cannot move (the dry run
 * names them; the other 90 go on in the new version).
 */

const MOVE_ID = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
const flowV1 = `processId: ${MOVE_ID}
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
/** Version 2: no `hold` any more, and a node after `ask` that version 1 lacks. */
const flowV2 = `processId: ${MOVE_ID}
name: Routed
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: userTask, next: after }
  after: { type: setVariable, variables: { ranV2: true }, next: done }
  done: { type: endEvent }
`;

const FAIL_ID = '8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e';
const FAILING = `processId: ${FAIL_ID}
name: Fails until fixed
nodes:
  start: { type: startEvent, next: check }
  check: { type: scriptTask, script: "if (!vars.ok) throw new Error('not ok'); return { fixed: vars.ok }", next: done }
  done: { type: endEvent }
`;
const OTHER_ID = '9c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
const OTHER = FAILING.replace(FAIL_ID, OTHER_ID).replace('Fails until fixed', 'Fails too');

t.test('bulk retry with a fix, and a bulk move where some cannot move', async (t) => {
  const cwd = t.testdir();
  const info = await startDaemon(t, { cwd });
  const key = (await readFile(join(cwd, '.wfx', 'bootstrap.key'), 'utf8')).trim();
  const api = (method: string, path: string, body?: object) => callDaemon(info.url, key, method, path, body);
  for (const source of [flowV1, FAILING, OTHER])
    t.equal((await api('POST', '/admin/flows', { source, organization: 'default' })).status, 200);
  const state = async (id: string) => (await api('GET', `/process/instance/${id}`)).body;
  const finished = (id: string) =>
    eventually(`${id} finished`, async () => {
      const v = await state(id);
      return v.stateCd !== 0 && v;
    });
  const bulkDone = (bulkId: string) =>
    eventually(`bulk ${bulkId} ended`, async () => {
      const v = (await api('GET', `/process/bulk/${bulkId}`)).body;
      return v.state !== 'RUNNING' && v;
    });

  // Bulk retry: 12 failed executions of one flow, retried with the fix; the other flow's stay failed.
  const failed: string[] = [];
  for (let i = 0; i < 12; i++)
    failed.push(
      (await api('POST', '/process/start', { processId: FAIL_ID, data: { i } })).body.processInstanceId as string,
    );
  const other = (await api('POST', '/process/start', { processId: OTHER_ID, data: {} })).body
    .processInstanceId as string;
  for (const id of [...failed, other]) t.equal((await finished(id)).stateCd, 2);
  const retryQuery = { processId: FAIL_ID, state: 'FAILED' };
  const dry = await api('POST', '/process/bulk', { operation: 'retry', query: retryQuery, dryRun: true });
  t.match(dry.body, { count: 12, operation: 'retry' });
  const byNode = await wfxIn(
    [
      'instances',
      'retry',
      '--query',
      '--flow',
      FAIL_ID,
      '--state',
      'failed',
      '--failed-node',
      'check',
      '--dry-run',
      '--json',
    ],
    { cwd },
  );
  t.match(JSON.parse(byNode.stdout), { count: 12 }, 'the CLI selects by the node they failed at');
  const elsewhere = await wfxIn(
    ['instances', 'retry', '--query', '--flow', FAIL_ID, '--failed-node', 'start', '--dry-run', '--json'],
    { cwd },
  );
  t.match(JSON.parse(elsewhere.stdout), { count: 0 });
  const created = await api('POST', '/process/bulk', {
    operation: 'retry',
    query: retryQuery,
    params: { data: { ok: 'yes' } },
  });
  t.equal(created.status, 202);
  t.match(await bulkDone(created.body.bulkId as string), { state: 'COMPLETED', total: 12, done: 12, skipped: 0 });
  for (const id of failed) {
    const v = await finished(id);
    t.match(v, { stateCd: 1, data: { fixed: 'yes' }, retries: [{ by: /^key:\S+ \(bulk operation / }] });
  }
  t.equal((await state(other)).stateCd, 2, 'outside the query: still failed');
  t.notOk((await state(other)).retries, 'and never retried');

  // Bulk move: 90 waiting at ask, 10 at hold (gone in version 2).
  const ids: { id: string; kind: string }[] = [];
  for (let i = 0; i < 100; i++) {
    const kind = i % 10 === 0 ? 'b' : 'a';
    const r = await api('POST', '/process/start', { processId: MOVE_ID, data: { kind } });
    ids.push({ id: r.body.processInstanceId as string, kind });
  }
  t.equal((await api('POST', '/admin/flows', { source: flowV2, organization: 'default' })).status, 200);
  const moveQuery = { processId: MOVE_ID, version: '1', state: 'RUNNING' };
  const moveDry = await api('POST', '/process/bulk', {
    operation: 'move',
    query: moveQuery,
    params: { version: '2' },
    dryRun: true,
  });
  t.match(moveDry.body, { count: 100, refusedCount: 10 });
  const refused =
    (moveDry.body.refused as {
      processInstanceId: string;
      code: string;
      problems: { nodeId: string; code: string }[];
    }[]) ?? [];
  t.same(
    refused.map((r) => r.processInstanceId).sort(),
    ids
      .filter((x) => x.kind === 'b')
      .map((x) => x.id)
      .sort(),
    'the dry run names the ten that cannot move',
  );
  t.ok(
    refused.every(
      (r) =>
        r.code === 'INSTANCE_NOT_MOVABLE' && r.problems.some((p) => p.nodeId === 'hold' && p.code === 'NODE_MISSING'),
    ),
    'and why: their node is missing in version 2',
  );
  const cli = await wfxIn(
    [
      'instances',
      'move',
      '--query',
      '--flow',
      MOVE_ID,
      '--version',
      '1',
      '--state',
      'running',
      '--to',
      '2',
      '--dry-run',
    ],
    { cwd },
  );
  t.equal(cli.code, 0, cli.stderr);
  t.match(cli.stdout, /move would select 100 executions[\s\S]*10 of them cannot move now/);

  const move = await api('POST', '/process/bulk', { operation: 'move', query: moveQuery, params: { version: '2' } });
  t.equal(move.status, 202);
  t.match(await bulkDone(move.body.bulkId as string), { state: 'COMPLETED', total: 100, done: 90, skipped: 10 });
  const results = (await api('GET', `/process/bulk/${move.body.bulkId as string}/results?outcome=SKIPPED&limit=100`))
    .body.items as { processInstanceId: string; code: string }[];
  t.same(
    results.map((r) => r.code),
    Array(10).fill('INSTANCE_NOT_MOVABLE'),
  );
  for (const { id, kind } of ids) t.equal((await state(id)).processVersion, kind === 'a' ? '2' : '1');
  const moved = ids.find((x) => x.kind === 'a')!.id;
  t.equal(
    (await api('POST', '/process/task', { processInstanceId: moved, nodeId: 'ask', action: 'COMPLETE', data: {} }))
      .status,
    200,
  );
  t.match(await finished(moved), { stateCd: 1, data: { ranV2: true } }, 'a moved execution goes on in version 2');
});
