import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import {
  callDaemon,
  bothShare,
  launchSharing,
  printLogs,
  serving,
  waitForGoFlow,
  type SharingDaemon,
} from '../helpers/share.js';

/*
 * An event an execution throws reaches what waits on the other daemons even when the daemon
 * that threw it is killed before it told them (decision 044): the step kept the event, and the
 * daemon that takes the thrower's partition gives it on. The kill lands exactly there
 * (WFX_TEST_CRASH_POINT=thrown:kept, store/crash-point.ts).
 */

const WAIT_ID = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
const THROW_ID = '8b9c0d1e-2f3a-4b4c-9d5e-6f7a8b9c0d1e';
const THROW = `processId: ${THROW_ID}
name: Say go
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: go, correlationKey: "{key}", data: { from: thrower }, next: done }
  done: { type: endEvent }
`;

t.test(
  'an event thrown by a daemon killed before it told the others still reaches them',
  { skip: POSTGRES_SKIP },
  async (t) => {
    const server = await startPostgres(t);
    const store = await server.createDatabase('thrown');
    const root = t.testdir();
    t.teardown(async () => {
      if (!t.passing()) await printLogs([join(root, 'a'), join(root, 'b')]);
    });
    const a = await launchSharing(t, join(root, 'a'), store, { WFX_TEST_CRASH_POINT: 'thrown:kept' });
    await eventually('a serves', () => serving(a));
    const admin = (await readFile(join(a.dir, 'bootstrap.key'), 'utf8')).trim();
    const call = (d: SharingDaemon, method: string, path: string, body?: object) =>
      callDaemon(d, admin, method, path, body);
    for (const source of [waitForGoFlow(WAIT_ID), THROW])
      t.equal((await call(a, 'POST', '/admin/flows', { source, organization: 'default' })).status, 200, 'published');
    const b = await launchSharing(t, join(root, 'b'), store);
    await bothShare(a, b, admin);

    const started = await call(b, 'POST', '/process/start', { processId: WAIT_ID, data: { key: 'k' } });
    t.equal(started.status, 200);
    const waiter = started.body.processInstanceId as string;

    let out = '';
    a.child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // The start's step is durable, then a stops before its answer: nothing is acknowledged.
    const thrown = fetch(`${a.url}/process/start`, {
      method: 'POST',
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      body: JSON.stringify({ processId: THROW_ID, data: { key: 'k' } }),
    }).catch(() => null);
    await eventually('a stops where the event is kept and not yet given on', () =>
      out.includes('crash-point thrown:kept\n'),
    );
    a.child.kill('SIGKILL');
    t.equal(await thrown, null, 'the start was never answered');

    await eventually(
      'b takes the partitions and gives the event on, to what waits on itself',
      async () => {
        const r = await call(b, 'GET', `/process/instance/${waiter}`);
        return r.body.state === 'COMPLETED' && (r.body.data as { from?: string }).from === 'thrower';
      },
      { withinMs: 30_000 },
    );
    const throwers = await call(b, 'GET', `/process/${THROW_ID}/instances`);
    t.match(throwers.body.items, [{ stateCd: 1 }], 'the thrower had completed in that step');
  },
);
