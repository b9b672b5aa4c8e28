import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { bothShare, callDaemon, launchSharing, printLogs, serving } from '../helpers/share.js';

/*
 * Moving executions between versions on daemons sharing one database (`--share`): a move names
 * an execution, so it is served by the daemon holding the execution's partition (forwarded
 * there when sent to the other), and the moved executions go on in the new version there.
 */

const PID = '6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c';
const flow = (extra: boolean) => `processId: ${PID}
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: ${extra ? 'stamp' : 'done'} }
${extra ? '  stamp: { type: setVariable, variables: { stamped: v2 }, next: done }\n' : ''}  done: { type: endEvent }
`;

t.test('executions move to a new version through either of two sharing daemons', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const store = await server.createDatabase('move');
  const root = t.testdir();
  t.teardown(async () => {
    if (!t.passing()) await printLogs([join(root, 'a'), join(root, 'b')]);
  });
  const a = await launchSharing(t, join(root, 'a'), store);
  await eventually('a serves', () => serving(a));
  const key = (await readFile(join(a.dir, 'bootstrap.key'), 'utf8')).trim();
  const b = await launchSharing(t, join(root, 'b'), store);
  await bothShare(a, b, key);
  const daemons = [a, b] as const;

  // Published through b, which holds no partition 0: it answers once its own copy has the version.
  const v1 = await callDaemon(b, key, 'POST', '/admin/flows', { source: flow(false), organization: 'default' });
  t.equal(v1.body.version, '1');
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await callDaemon(daemons[i % 2]!, key, 'POST', '/process/start', { processId: PID, data: {} });
    t.equal(r.status, 200);
    ids.push(r.body.processInstanceId as string);
  }
  const v2 = await callDaemon(b, key, 'POST', '/admin/flows', { source: flow(true), organization: 'default' });
  t.equal(v2.body.version, '2');

  // Each moved through both daemons: one of them forwards it to the holder of its partition.
  for (const [i, id] of ids.entries()) {
    const dry = await callDaemon(daemons[i % 2]!, key, 'POST', `/process/instance/${id}/move`, {
      version: '2',
      dryRun: true,
    });
    t.match(dry.body, { status: 'movable' }, `dry run of ${id}`);
    const moved = await callDaemon(daemons[(i + 1) % 2]!, key, 'POST', `/process/instance/${id}/move`, {
      version: '2',
    });
    t.match(moved.body, { status: 'moved', fromVersion: '1', toVersion: '2' }, `moved ${id}`);
  }
  for (const [i, id] of ids.entries()) {
    const answered = await callDaemon(daemons[i % 2]!, key, 'POST', '/process/task', {
      processInstanceId: id,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { inputValue: 'yes' },
    });
    t.equal(answered.status, 200);
    const view = await callDaemon(daemons[(i + 1) % 2]!, key, 'GET', `/process/instance/${id}`);
    t.match(view.body, { processVersion: '2', state: 'COMPLETED', data: { stamped: 'v2' } }, `${id} ran version 2`);
  }
});
