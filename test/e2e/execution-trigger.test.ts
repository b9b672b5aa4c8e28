import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import type { WfxClient } from '../../src/client/client.js';
import { chatServer } from '../helpers/chat-server.js';
import { adminClient, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

// The example of flows/: on any failed execution, POST its summary to {env.CHAT_WEBHOOK_URL}.
const ALERT_YAML = readFileSync(new URL('../../../flows/opt-in/failure-alert.yaml', import.meta.url), 'utf8');
const ALERT = /^processId: (\S+)$/m.exec(ALERT_YAML)![1]!;
const FAILING = '0192f0c0-0000-7000-8000-00000000e1e1';
const FAILING_YAML = `processId: ${FAILING}
name: Nightly import
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    name: Pick the source
    branches:
      - { condition: "\${source == 'ftp'}", next: done }
  done: { type: endEvent }
`;

/** A daemon with the example and a failing flow published, and the chat webhook's address set. */
async function setup(t: Test, env?: NodeJS.ProcessEnv) {
  const chat = await chatServer(t);
  const cwd = t.testdir({ 'failure-alert.yaml': ALERT_YAML, 'failing.yaml': FAILING_YAML });
  const daemon = await startDaemon(t, { cwd, ...(env && { env: { ...process.env, ...env } }) });
  const run = (args: string[]) => wfxIn(args, { cwd });
  const published = await run(['flow', 'publish', 'failure-alert.yaml', 'failing.yaml']);
  t.equal(published.code, 0, published.stderr);
  const set = await run(['env', 'set', 'CHAT_WEBHOOK_URL', chat.url, '--env', 'PRODUCTION']);
  t.equal(set.code, 0, set.stderr);
  return { chat, cwd, daemon, run };
}

/** The executions of `processId`, newest first. */
async function runsOf(client: WfxClient, processId: string) {
  return (await client.instances.list(processId, { limit: 100 })).items;
}

t.test(
  'a failed execution starts the failure-alert example, which posts its summary to the chat webhook',
  async (t) => {
    const { chat, cwd, daemon, run } = await setup(t);
    const res = await run(['run', FAILING, '--data', '{"source":"s3"}', '--wait', '--json']);
    t.equal(res.code, 1, 'the flow fails');
    const failed = JSON.parse(res.stdout) as { processInstanceId: string; processVersion: string };
    const post = await eventually('the summary is posted', () => chat.posts[0]);
    t.match(post, {
      text: `Nightly import v${failed.processVersion} failed at Pick the source: NO_BRANCH_MATCHED: `,
      execution: {
        id: failed.processInstanceId,
        processId: FAILING,
        state: 'FAILED',
        failureCode: 'NO_BRANCH_MATCHED',
        failedNode: 'route',
        environment: 'PRODUCTION',
      },
    });
    t.match(post.text, failed.processInstanceId, 'the text names the execution');
    const client = await adminClient(cwd, daemon.url);
    const alerts = await eventually('the alert completes', async () => {
      const items = await runsOf(client, ALERT);
      return items.length > 0 && items.every((i) => i.stateCd === 1) && items;
    });
    t.equal(alerts.length, 1, 'one alert; its own completion starts nothing');
    t.equal(chat.posts.length, 1);
    t.match(
      (await client.instances.get(alerts[0]!.processInstanceId)).triggeredBy,
      {
        processInstanceId: failed.processInstanceId,
        processId: FAILING,
        processName: 'Nightly import',
        state: 'FAILED',
        depth: 1,
        chain: [FAILING],
      },
      'the alert names what started it',
    );
    const got = await run(['instances', 'get', alerts[0]!.processInstanceId]);
    t.equal(got.code, 0, got.stderr);
    t.match(
      got.stdout,
      new RegExp(`^triggered by ${failed.processInstanceId} \\(Nightly import, FAILED\\)$`, 'm'),
      'wfx instances get names the execution that started it, its flow and how it ended',
    );
    const status = JSON.parse((await run(['daemon', 'status', '--json'])).stdout) as {
      triggers: Array<{ type: string; processId: string; lastFire: string | null; watchedProcessId: string | null }>;
    };
    t.match(
      status.triggers.find((x) => x.type === 'execution'),
      { processId: ALERT, watchedProcessId: null, lastFire: alerts[0]!.startTime },
      'trigger health lists it with its last fire',
    );
  },
);

t.test('SIGKILL right after the end is durable: the alert starts once after the restart, posts once', async (t) => {
  // The daemon stops right after the step that ends the execution and starts the alert is
  // durable, before the alert runs (crash-point.ts): the kill lands exactly there.
  const { chat, cwd, daemon } = await setup(t, { WFX_TEST_CRASH_POINT: 'trigger:started' });
  // The daemon blocks before it answers: the start is not awaited (its connection dies with it).
  const starting = wfxIn(['run', FAILING, '--data', '{"source":"s3"}', '--json'], { cwd });
  const out = join(cwd, '.wfx', 'logs', 'daemon.out');
  await eventually('the daemon stops with the end and the start journaled', async () =>
    (await readFile(out, 'utf8').catch(() => '')).includes('crash-point trigger:started\n'),
  );
  t.equal(chat.posts.length, 0, 'nothing posted yet');
  process.kill(daemon.pid, 'SIGKILL');
  await eventually(`daemon ${daemon.pid} is gone`, () => {
    try {
      process.kill(daemon.pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  await starting;

  const after = await startDaemon(t, { cwd });
  const client = await adminClient(cwd, after.url);
  const failures = await runsOf(client, FAILING);
  t.ok(failures.length >= 1, 'the failed execution survived');
  t.ok(
    failures.every((f) => f.stateCd === 2),
    'each failed',
  );
  const alerts = await eventually('each alert completes', async () => {
    const items = await runsOf(client, ALERT);
    return items.length >= failures.length && items.every((i) => i.stateCd === 1) && items;
  });
  t.equal(alerts.length, failures.length, 'one alert per failed execution: none lost, none repeated');
  t.equal(chat.posts.length, failures.length, 'posted once per failed execution');
  t.same(
    chat.posts.map((p) => (p.execution as { id: string }).id).sort(),
    failures.map((f) => f.processInstanceId).sort(),
  );
});

t.test("npm start's flows/ leave the alert out: one failing run is one failure group", async (t) => {
  // As `npm start` runs the daemon: every flow of flows/ published at start.
  const flows = fileURLToPath(new URL('../../../flows', import.meta.url));
  const cwd = t.testdir({ 'failing.yaml': FAILING_YAML });
  const daemon = await startDaemon(t, { cwd, args: ['--flows', flows] });
  const client = await adminClient(cwd, daemon.url);
  const listed = await eventually('the examples are published', async () => {
    const items = (await client.flows.list()).items;
    return items.some((f) => f.name === 'Order approval') && items;
  });
  t.notOk(
    listed.some((f) => f.processId === ALERT),
    'the opt-in alert is not among them',
  );
  const published = await wfxIn(['flow', 'publish', 'failing.yaml'], { cwd });
  t.equal(published.code, 0, published.stderr);
  const res = await wfxIn(['run', FAILING, '--data', '{"source":"s3"}', '--wait'], { cwd });
  t.equal(res.code, 1, 'the flow fails');
  const failures = await wfxIn(['instances', 'failures', '--json'], { cwd });
  t.equal(failures.code, 0, failures.stderr);
  const groups = (JSON.parse(failures.stdout) as { groups: Array<{ processId: string; count: number }> }).groups;
  t.match(groups, [{ processId: FAILING, count: 1 }], 'one group: the failed run, no failed alert beside it');
  t.equal(groups.length, 1);
});
