import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, queryAt, startPostgres } from '../helpers/postgres.js';

// A daemon on PostgreSQL keeps its executions as rows of wfx_executions, with their summaries
// (decision 068 step 9); a database whose snapshots still hold executions (written by a daemon
// of before) opens, loses nothing to a kill -9 before its next checkpoint, and that checkpoint
// moves them into rows.

const FLOW_ID = '6e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b';
const FLOW = `processId: ${FLOW_ID}
name: Rows on PostgreSQL
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** Calls a daemon's API with `key`. */
const api = (url: string, key: string) => (method: string, path: string, body?: object) =>
  callDaemon(url, key, method, path, body);

t.test('executions as rows on a daemon', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('rows');
  const dataDir = join(t.testdir(), 'a');
  const args = ['--store', url, '--partitions', '4'];
  const stop = async () => t.equal((await wfxIn(['daemon', 'stop', '--data-dir', dataDir])).code, 0);
  const first = await startDaemon(t, { dataDir, args });
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  let call = api(first.url, key);
  t.match((await call('POST', '/admin/flows', { source: FLOW, organization: 'default' })).body, { created: true });
  const ids: string[] = [];
  for (let i = 0; i < 4; i++)
    ids.push(
      (await call('POST', '/process/start', { processId: FLOW_ID, data: { n: i } })).body.processInstanceId as string,
    );
  await stop(); // a clean stop checkpoints
  const rows = await queryAt(
    url,
    `SELECT id, partition, organization, process_id, state_cd, root, waits->0->>'kind' AS wait, doc
       FROM wfx_executions ORDER BY id`,
  );
  t.same(
    rows.map((r) => [r.id, r.organization, r.process_id, r.state_cd, r.root, r.wait]),
    [...ids].sort().map((id) => [id, 'default', FLOW_ID, 0, null, 'input']),
    'a row an execution, with its summary: waiting for input',
  );
  t.ok(
    rows.every(
      (r) =>
        r.partition > 0 && (JSON.parse(r.doc as string) as { processInstanceId: string }).processInstanceId === r.id,
    ),
    'each in its execution partition, its document whole',
  );

  // What a daemon of before the rows left: the executions inside their partitions' snapshots.
  await queryAt(
    url,
    `UPDATE wfx_snapshots s
        SET state = (s.state::jsonb || jsonb_build_object('instances', coalesce(
          (SELECT jsonb_object_agg(e.id, e.doc::jsonb) FROM wfx_executions e WHERE e.partition = s.partition),
          '{}'::jsonb)))::text
      WHERE s.partition > 0`,
  );
  await queryAt(url, 'DELETE FROM wfx_executions');
  const second = await startDaemon(t, { dataDir, args });
  call = api(second.url, key);
  const answered = await call('POST', '/process/task', {
    processInstanceId: ids[0],
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'yes' },
  });
  t.equal(answered.status, 200);
  await eventually('the answered execution completes', async () => {
    return (await call('GET', `/process/instance/${ids[0]}`)).body.state === 'COMPLETED';
  });
  process.kill(second.pid, 'SIGKILL');
  t.same(await queryAt(url, 'SELECT count(*)::int AS n FROM wfx_executions'), [{ n: 0 }], 'killed before moving any');

  const third = await startDaemon(t, { dataDir, args });
  call = api(third.url, key);
  for (const id of ids.slice(1))
    t.match((await call('GET', `/process/instance/${id}`)).body, { state: 'RUNNING' }, 'nothing lost to the kill');
  t.match((await call('GET', `/process/instance/${ids[0]}`)).body, { state: 'COMPLETED' });
  await stop();
  const moved = await queryAt(url, 'SELECT id FROM wfx_executions ORDER BY id');
  t.ok(
    ids.slice(1).every((id) => moved.some((r) => r.id === id)),
    'the checkpoint moved the waiting executions into rows',
  );
  const snapshots = await queryAt(url, 'SELECT state FROM wfx_snapshots WHERE partition > 0');
  t.same([...new Set(snapshots.map((s) => s.state))], ['{}'], 'and out of the snapshots');

  const fourth = await startDaemon(t, { dataDir, args });
  call = api(fourth.url, key);
  for (const id of ids.slice(1))
    t.match((await call('GET', `/process/instance/${id}`)).body, { state: 'RUNNING' }, 'read back from the rows');
  const done = await call('POST', '/process/task', {
    processInstanceId: ids[1],
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'yes' },
  });
  t.equal(done.status, 200);
  await stop();
});
