import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { dataDirPaths } from '../../../src/shared/data-dir.js';
import { eventually } from '../../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../../helpers/postgres.js';
import { launchSharing, serving, type SharingDaemon } from '../../helpers/share.js';
import { spawnWfx } from '../../helpers/cli.js';

/*
 * The cluster room (src/daemon/cluster/) loads only for a daemon on PostgreSQL: a daemon on the
 * JSON store runs with none of it (the engine, the routes and the lifecycle see it through
 * ports of their own, engine/, api/ and process/cluster-port.ts, whose types are erased). Each daemon here runs with a loader hook
 * (test/fixtures/module-record.ts) that lists every module it loads; npm run lint checks the
 * imports that make it so (scripts/check-imports.mjs's cluster rule).
 */

const RECORD_HOOK = pathToFileURL(fileURLToPath(new URL('../../fixtures/module-record.js', import.meta.url))).href;
/** Where the compiled daemon's modules are, as the loader names them. */
const DAEMON = pathToFileURL(fileURLToPath(new URL('../../../src/daemon/', import.meta.url))).href;

/** The environment of a daemon whose modules are listed in `record`. */
const recorded = (record: string) => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${RECORD_HOOK}`.trim(),
  WFX_MODULE_RECORD: record,
});

/** The modules of src/daemon `record` lists, by their path under it (`cluster/rejoin.js`). */
async function daemonModules(record: string): Promise<string[]> {
  const urls = (await readFile(record, 'utf8')).split('\n');
  return [...new Set(urls.filter((u) => u.startsWith(DAEMON)).map((u) => u.slice(DAEMON.length)))].sort();
}

/** Has daemon `d` serve a little (health, an event nothing waits for), then stops it. */
async function exercise(t: Test, d: SharingDaemon): Promise<void> {
  await eventually(`${d.dir} serves`, () => serving(d));
  const key = (await readFile(dataDirPaths(d.dir).bootstrapKey, 'utf8')).trim();
  const res = await fetch(`${d.url}/process/event`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ eventType: 'nothing-waits', correlationKey: 'k' }),
  });
  t.equal(((await res.json()) as { error?: string }).error, 'NO_MATCHING_SUBSCRIPTION', 'the daemon answered');
  const exited = once(d.child, 'exit');
  d.child.kill('SIGTERM');
  await exited;
}

const clusterModules = (modules: readonly string[]) => modules.filter((m) => m.startsWith('cluster/'));

t.test('a daemon on the JSON store loads nothing of the cluster room', async (t) => {
  const dir = t.testdir({ data: {} });
  const dataDir = join(dir, 'data');
  const record = join(dir, 'modules.txt');
  const args = ['daemon', 'start', '--foreground', '--port', '0', '--data-dir', dataDir];
  const child = spawnWfx(t, args, { env: recorded(record) });
  child.stdout.resume();
  child.stderr.resume();
  const url = await eventually(`daemon ${dataDir} listens`, async () => {
    const info = JSON.parse(await readFile(dataDirPaths(dataDir).daemonJson, 'utf8')) as { pid: number; url: string };
    return info.pid === child.pid && info.url;
  });
  await exercise(t, { dir: dataDir, child, url });
  const modules = await daemonModules(record);
  // What was listed is the daemon's: its engine, its HTTP app, its store.
  for (const m of ['engine/engine.js', 'api/server.js', 'api/routes/process.js', 'store/store.js', 'process/daemon.js'])
    t.ok(modules.includes(m), `${m} is listed`);
  t.same(clusterModules(modules), [], 'no module of the cluster room');
});

t.test('a daemon sharing a PostgreSQL database loads the cluster room', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const url = await server.createDatabase('not_loaded');
  const dir = t.testdir({ data: {} });
  const record = join(dir, 'modules.txt');
  const d = await launchSharing(t, join(dir, 'data'), url, recorded(record));
  await exercise(t, d);
  const loaded = clusterModules(await daemonModules(record));
  // Each part: the entry, the member, the routing and fan-out, the engine's part, the moves.
  for (const m of [
    'cluster/rejoin.js',
    'cluster/members.js',
    'cluster/serving.js',
    'cluster/partition-routing.js',
    'cluster/fan-out.js',
    'cluster/other-daemons.js',
    'cluster/engine-part.js',
    'cluster/kept-claims.js',
    'cluster/thrown-outbox.js',
    'cluster/partition-moves.js',
  ])
    t.ok(loaded.includes(m), `${m} is loaded`);
});
