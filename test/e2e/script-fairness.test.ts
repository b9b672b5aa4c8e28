import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { callDaemon, startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const ENDLESS = '11111111-1111-4111-8111-111111111111';
const QUICK = '22222222-2222-4222-8222-222222222222';
const flow = (processId: string, script: string, timeout: string) => `processId: ${processId}
name: Script ${processId.slice(0, 4)}
nodes:
  start: { type: startEvent, next: run }
  run: { type: scriptTask, script: ${JSON.stringify(script)}, timeout: ${timeout}, next: done }
  done: { type: endEvent }
`;

t.test("one organization's endless scripts do not keep another organization's script waiting", async (t) => {
  const dataDir = join(t.testdir(), 'data');
  const info = await startDaemon(t, { dataDir });
  const bootstrap = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const call = (key: string, method: string, path: string, body?: object) =>
    callDaemon(info.url, key, method, path, body);
  const keyOf = async (organization: string) => {
    const made = await call(bootstrap, 'POST', '/admin/api-keys', { name: 'dev', role: 'developer', organization });
    t.equal(made.status, 201, `a key for ${organization}`);
    return made.body.apiKey as string;
  };
  const a = await keyOf('acme');
  const b = await keyOf('globex');

  // The longest timeout a script may have; a longer one is refused at publish.
  const refused = await call(a, 'POST', '/admin/flows', { source: flow(ENDLESS, 'while (true) {}', '24d') });
  t.match(refused, {
    status: 400,
    body: {
      error: 'FLOW_INVALID',
      details: { problems: [{ code: 'BAD_DURATION', nodeId: 'run', property: 'timeout' }] },
    },
  });
  t.equal((await call(a, 'POST', '/admin/flows', { source: flow(ENDLESS, 'while (true) {}', '5m') })).status, 200);
  t.equal((await call(b, 'POST', '/admin/flows', { source: flow(QUICK, 'return { ran: true }', '5s') })).status, 200);

  // acme takes both sandbox workers of the pool.
  const endless: string[] = [];
  for (let i = 0; i < 2; i++) {
    const started = await call(a, 'POST', '/process/exec', { processId: ENDLESS });
    t.equal(started.status, 200);
    endless.push(started.body.processInstanceId as string);
  }
  const quick = await call(b, 'POST', '/process/exec', { processId: QUICK });
  t.equal(quick.status, 200);
  const id = quick.body.processInstanceId as string;
  const done = await eventually(
    "globex's script completes",
    async () => {
      const res = await call(b, 'GET', `/process/instance/${id}`);
      return res.body.stateCd !== 0 && res.body;
    },
    { withinMs: 60_000 },
  );
  t.match(done, { stateCd: 1, data: { ran: true } }, "globex's execution completed");
  for (const running of endless)
    t.match(
      (await call(a, 'GET', `/process/instance/${running}`)).body,
      { stateCd: 0, nodes: [{ nodeId: 'start' }, { nodeId: 'run', statusCd: 0 }] },
      "while acme's scripts still run",
    );

  for (const running of endless) {
    const cancelled = await call(a, 'POST', `/process/instance/${running}/cancel`);
    t.same(cancelled, { status: 200, body: { processInstanceId: running, status: 'cancelled' } }, 'the cancel answers');
    t.equal((await call(a, 'GET', `/process/instance/${running}`)).body.stateCd, 3);
  }
  t.equal((await fetch(`${info.url}/health`)).status, 200);
});
