import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { chatServer } from '../helpers/chat-server.js';
import { startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import { bothShare, callDaemon, holdings, launchSharing, printLogs, type SharingDaemon } from '../helpers/share.js';
import { partitionOf } from '../../src/daemon/state/ids.js';

/*
 * Execution triggers on PostgreSQL (decision 065): the end of an execution and the starts it
 * makes are one step of its partition there too. A daemon on `--store postgres://` runs the
 * failure-alert example for a failed execution with its variables; two daemons sharing a
 * database (`--share`) start each failure flow in the ended execution's partition, whichever
 * daemon holds it, and the loop guard stops a flow its own failure would start again.
 */

const ALERT_YAML = readFileSync(new URL('../../../flows/opt-in/failure-alert.yaml', import.meta.url), 'utf8');
const ALERT = /^processId: (\S+)$/m.exec(ALERT_YAML)![1]!;

/** A flow that fails at its gateway (NO_BRANCH_MATCHED), with `triggers` (YAML list items) if any. */
const failing = (processId: string, name: string, triggers = '') => `processId: ${processId}
name: ${name}
${triggers && `triggers:\n${triggers}\n`}nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    name: Pick the source
    branches:
      - { condition: "\${source == 'ftp'}", next: done }
  done: { type: endEvent }
`;
const IMPORT = '0192f0c0-0000-7000-8000-00000000f1f1';
// L and M each start on the other's failure, and fail: L, M, then L again would loop.
const PING = '0192f0c0-0000-7000-8000-00000000f2f2';
const PONG = '0192f0c0-0000-7000-8000-00000000f3f3';
// Watches its own failures: the guard never lets it start itself.
const SELF = '0192f0c0-0000-7000-8000-00000000f4f4';

/** An execution as GET /process/instance/{id} and the list show the fields read here. */
interface Run {
  readonly processInstanceId: string;
  readonly processId: string;
  readonly stateCd: number;
  readonly data: Record<string, unknown>;
  readonly triggeredBy?: Record<string, unknown>;
}

/** One PostgreSQL server for the file (none where it cannot run): each test makes a database of its own on it. */
const server = POSTGRES_SKIP ? null : await startPostgres(t);

t.test(
  'on --store postgres: a failed execution starts the failure-alert example with its variables',
  { skip: POSTGRES_SKIP },
  async (t) => {
    const store = await server!.createDatabase('trigger');
    const chat = await chatServer(t);
    const cwd = t.testdir({ 'failure-alert.yaml': ALERT_YAML, 'failing.yaml': failing(IMPORT, 'Nightly import') });
    await startDaemon(t, { cwd, args: ['--store', store] });
    const run = (args: string[]) => wfxIn(args, { cwd });
    const published = await run(['flow', 'publish', 'failure-alert.yaml', 'failing.yaml']);
    t.equal(published.code, 0, published.stderr);
    const set = await run(['env', 'set', 'CHAT_WEBHOOK_URL', chat.url, '--env', 'PRODUCTION']);
    t.equal(set.code, 0, set.stderr);

    const res = await run(['run', IMPORT, '--data', '{"source":"s3"}', '--wait', '--json']);
    t.equal(res.code, 1, 'the flow fails');
    const failed = JSON.parse(res.stdout) as { processInstanceId: string; processVersion: string };
    const post = await eventually('the summary is posted', () => chat.posts[0]);
    t.match(post, {
      text: `Nightly import v${failed.processVersion} failed at Pick the source: NO_BRANCH_MATCHED: `,
      execution: {
        id: failed.processInstanceId,
        processId: IMPORT,
        flowName: 'Nightly import',
        state: 'FAILED',
        failureCode: 'NO_BRANCH_MATCHED',
        failedNode: 'route',
        failedNodeName: 'Pick the source',
        environment: 'PRODUCTION',
      },
    });
    const alerts = await eventually('the alert completes', async () => {
      const list = await run(['instances', 'list', ALERT, '--json']);
      const items = JSON.parse(list.stdout) as Run[];
      return items.length > 0 && items.every((i) => i.stateCd === 1) && items;
    });
    t.equal(alerts.length, 1, 'one alert; its own completion starts nothing');
    t.equal(chat.posts.length, 1, 'posted once');
    const alert = JSON.parse((await run(['instances', 'get', alerts[0]!.processInstanceId, '--json'])).stdout) as Run;
    t.same(
      alert.triggeredBy,
      {
        processInstanceId: failed.processInstanceId,
        processId: IMPORT,
        processName: 'Nightly import',
        state: 'FAILED',
        depth: 1,
        chain: [IMPORT],
      },
      'the alert names what started it',
    );
    t.match(alert.data, { triggerType: 'execution', endedExecution: { id: failed.processInstanceId } });
  },
);

t.test(
  'on --share: each failure flow starts once per failure, whichever daemon holds it; the loop guard holds',
  { skip: POSTGRES_SKIP },
  async (t) => {
    const store = await server!.createDatabase('share');
    const root = t.testdir();
    t.teardown(async () => {
      if (!t.passing()) await printLogs([join(root, 'a'), join(root, 'b')]);
    });
    const a = await launchSharing(t, join(root, 'a'), store);
    const key = (
      await eventually('a wrote its key', () => readFile(join(a.dir, 'bootstrap.key'), 'utf8').catch(() => ''))
    ).trim();
    const b = await launchSharing(t, join(root, 'b'), store);
    await bothShare(a, b, key);
    const call = (d: SharingDaemon, method: string, path: string, body?: object) =>
      callDaemon(d, key, method, path, body);
    const publish = async (source: string) =>
      t.equal((await call(a, 'POST', '/admin/flows', { source, organization: 'default' })).status, 200);
    await publish(failing(PING, 'Ping', `  - { type: execution, processId: ${PONG}, states: [FAILED] }`));
    await publish(failing(PONG, 'Pong', `  - { type: execution, processId: ${PING}, states: [FAILED] }`));
    await publish(failing(SELF, 'Self', `  - { type: execution, processId: ${SELF}, states: [FAILED] }`));

    // Started until both daemons hold some of them (an id's partition is random): each Pong
    // must start in its Ping's partition, on the daemon that holds it.
    const held = await holdings(a, key);
    const count = [...held.values()].flat().length;
    const holderOf = (id: string) => [...held].find(([, parts]) => parts.includes(partitionOf(id, count)))![0];
    const pings: string[] = [];
    for (let i = 0; i < 60 && (pings.length < 4 || new Set(pings.map(holderOf)).size < 2); i++) {
      const r = await call(i % 2 ? a : b, 'POST', '/process/start', { processId: PING, data: { source: 's3' } });
      t.equal(r.status, 200, 'started');
      pings.push(r.body.processInstanceId as string);
    }
    t.equal(new Set(pings.map(holderOf)).size, 2, 'both daemons hold Pings');
    const self = await call(b, 'POST', '/process/start', { processId: SELF, data: { source: 's3' } });
    t.equal(self.status, 200);
    const selfId = self.body.processInstanceId as string;

    const runsOf = async (processId: string) =>
      (await call(a, 'GET', `/process/instances?processId=${processId}&limit=100`)).body.items as Run[];
    const pongs = await eventually(
      'a Pong per Ping, each failed',
      async () => {
        const items = await runsOf(PONG);
        return items.length === pings.length && items.every((i) => i.stateCd === 2) && items;
      },
      { withinMs: 60_000 },
    );
    const startedBy: string[] = [];
    for (const pong of pongs) {
      const full = (await call(b, 'GET', `/process/instance/${pong.processInstanceId}`)).body as unknown as Run;
      const by = full.triggeredBy as { processInstanceId: string };
      startedBy.push(by.processInstanceId);
      t.equal(
        partitionOf(pong.processInstanceId, count),
        partitionOf(by.processInstanceId, count),
        "in its Ping's partition",
      );
      t.match(full, {
        triggeredBy: { processId: PING, processName: 'Ping', state: 'FAILED', depth: 1, chain: [PING] },
        data: {
          triggerType: 'execution',
          endedExecution: {
            id: by.processInstanceId,
            processId: PING,
            state: 'FAILED',
            failureCode: 'NO_BRANCH_MATCHED',
          },
        },
      });
      // Its failure would start Ping, which is in its chain.
      t.match(await logText(a, key, pong.processInstanceId), /WARN.*Ping \(.*\) not started: TRIGGER_LOOP/);
    }
    t.same(startedBy.sort(), [...pings].sort(), 'each Ping started exactly one Pong');
    const allPings = await runsOf(PING);
    t.equal(allPings.length, pings.length, 'no Ping was started by a Pong');
    t.ok(
      allPings.every((p) => p.stateCd === 2),
      'every Ping failed',
    );
    const selves = await runsOf(SELF);
    t.equal(selves.length, 1, 'Self did not start itself');
    t.match(await logText(b, key, selfId), /WARN.*Self \(.*\) not started: TRIGGER_LOOP/);
  },
);

/** An execution's log as its SSE stream gives every entry (no follow: the stream ends). */
async function logText(d: SharingDaemon, key: string, id: string): Promise<string> {
  return eventually(`the log of ${id}`, async () => {
    const res = await fetch(`${d.url}/process/instance/${id}/logs`, { headers: { 'x-api-key': key } });
    return res.status === 200 && (await res.text());
  });
}
