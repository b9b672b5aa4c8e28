import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { spawnWfx, startDaemon } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

const QUICK_ID = '6b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e';
const QUICK = `processId: ${QUICK_ID}
name: Straight through
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

/** The value of an unlabelled series in a text exposition, or null when absent. */
const value = (text: string, name: string): number | null => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
};

t.test("a standby's /metrics: its own figures, its replay lag falling to 0", { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('lag');
  const root = t.testdir();
  const a = await startDaemon(t, { dataDir: join(root, 'a'), args: ['--store', url, '--lease', '2s'] });
  const key = (await readFile(join(root, 'a', 'bootstrap.key'), 'utf8')).trim();
  const call = (path: string, body: object) =>
    fetch(`${a.url}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  t.equal((await call('/admin/flows', { source: QUICK, organization: 'default' })).status, 200);

  const dirB = join(root, 'b');
  spawnWfx(
    t,
    ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dirB, '--store', url].concat([
      '--standby',
      '--lease',
      '2s',
      '--metrics-open',
    ]),
  );
  const standbyUrl = await eventually('the standby listens', async () => {
    const info = JSON.parse(await readFile(join(dirB, 'daemon.json'), 'utf8')) as { url: string };
    return info.url !== a.url && (await fetch(`${info.url}/health`)).status === 200 && info.url;
  });
  const scrape = async () => {
    const res = await fetch(`${standbyUrl}/metrics`);
    t.equal(res.status, 200, 'read without a key (--metrics-open)');
    return res.text();
  };
  const first = await eventually('the lag known', async () => {
    const text = await scrape();
    const lag = value(text, 'wfx_pg_replay_lag_entries');
    return lag !== null && !Number.isNaN(lag) && text;
  });
  t.equal(value(first, 'wfx_store_lease_held'), 0, "the standby's own figures, not the serving daemon's");
  t.equal(value(first, 'wfx_executions_started_total'), null, 'no series of the serving daemon');

  for (let i = 0; i < 10; i++)
    t.equal((await call('/process/start', { processId: QUICK_ID, data: { i } })).status, 200);
  const caught = await eventually('the standby caught up', async () => {
    const text = await scrape();
    return value(text, 'wfx_pg_replay_lag_entries') === 0 && text;
  });
  t.equal(value(caught, 'wfx_pg_replay_lag_entries'), 0, 'no entry left to apply');

  const served = await fetch(`${a.url}/metrics`, { headers: { 'x-api-key': key } });
  t.equal(value(await served.text(), 'wfx_pg_replay_lag_entries'), null, 'the serving daemon has no replay lag');
});
