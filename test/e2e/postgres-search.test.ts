import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

// Search attributes on PostgreSQL: a daemon that keeps no execution in memory (--execution-cache
// 0) finds running executions by the summaries in their rows, a daemon started after a clean
// stop by the summaries alone, and ended ones by history's index of the pairs (migration 15).

const FLOW_ID = '4b5c6d7e-8f9a-4b1c-9d2e-3f4a5b6c7d8e';
const FLOW = `processId: ${FLOW_ID}
name: Orders searched
search: { orderId: "{orderId}", customer: "{customer}" }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, search: { verdict: "{inputValue}" }, next: done }
  done: { type: endEvent }
`;

t.test('search attributes on PostgreSQL: rows, a restart, history', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('search');
  const dataDir = join(t.testdir(), 'a');
  const args = ['--store', url, '--lease', '2s', '--execution-cache', '0'];
  const a = await startDaemon(t, { dataDir, args });
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const api = (at: string, method: string, path: string, body?: object) => callDaemon(at, key, method, path, body);
  t.equal((await api(a.url, 'POST', '/admin/flows', { source: FLOW })).status, 200);
  const ids: string[] = [];
  for (const [orderId, customer] of [
    ['A-1', 'Ada'],
    ['A-2', 'Bob'],
    ['A-3', 'Ada'],
  ])
    ids.push(
      (await api(a.url, 'POST', '/process/start', { processId: FLOW_ID, data: { orderId, customer } })).body
        .processInstanceId as string,
    );
  const where = async (at: string, ...pairs: string[]) =>
    (
      (await api(at, 'GET', `/process/instances?${pairs.map((p) => `where=${encodeURIComponent(p)}`).join('&')}`)).body
        .items as Array<{ processInstanceId: string; search?: Record<string, string> }>
    ).map((i) => i.processInstanceId);
  const cold = async (at: string) =>
    Number(
      /^wfx_executions_cold (\d+)$/m.exec(
        await (await fetch(`${at}/metrics`, { headers: { 'x-api-key': key } })).text(),
      )?.[1] ?? NaN,
    );
  await eventually('every execution cold', async () => (await cold(a.url)) === 3);
  t.same(await where(a.url, 'customer=Ada'), [ids[2], ids[0]], 'running, out of memory: by their rows');
  t.same(await where(a.url, 'orderId=A-2'), [ids[1]]);

  // Answered: the node's search: adds the verdict, and the run ends into history.
  const answered = await api(a.url, 'POST', '/process/task', {
    processInstanceId: ids[1],
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'approve' },
  });
  t.equal(answered.status, 200, JSON.stringify(answered.body));
  await eventually(
    'the answered run in history',
    async () => (await api(a.url, 'GET', `/process/instance/${ids[1]}`)).body.stateCd === 1,
  );
  const stopped = await wfxIn(['daemon', 'stop', '--data-dir', dataDir]);
  t.equal(stopped.code, 0, 'a clean stop');

  // A start after a clean stop reads the rows' summaries alone.
  const b = await startDaemon(t, { dataDir, args: ['--store', url, '--lease', '2s'] });
  t.same(await where(b.url, 'customer=Ada'), [ids[2], ids[0]], 'after a restart, from the summaries');
  t.same(await where(b.url, 'orderId=A-2', 'verdict=approve'), [ids[1]], 'ended: by history’s index');
  t.same(await where(b.url, 'verdict=reject'), []);
  const item = (await api(b.url, 'GET', `/process/instances?where=orderId%3DA-2`)).body.items as Array<{
    search?: Record<string, string>;
  }>;
  t.same(item[0]?.search, { orderId: 'A-2', customer: 'Bob', verdict: 'approve' }, 'with its attributes');
});
