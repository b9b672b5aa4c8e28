import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { callDaemon, startDaemon, wfxIn } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

// Issue #87 on a real daemon: a flow's concurrency limit (queue, keys, priority, cancel-new,
// cancel-oldest), queued starts across a kill -9, and starts that wait for their end (?wait=).

const flowYaml = (processId: string, concurrency: string): string => `processId: ${processId}
name: Limited ${processId.slice(-4)}
concurrency: ${concurrency}
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

const THREE_NODES = `processId: 87000000-0000-4000-8000-000000000009
name: Three nodes
nodes:
  start: { type: startEvent, next: total }
  total: { type: setVariable, variables: { greeting: "hello {name}" }, next: done }
  done: { type: endEvent }
`;

/** A daemon on `dataDir`, with its bootstrap (system admin) key. */
async function daemon(t: Test, dataDir: string) {
  const info = await startDaemon(t, { dataDir });
  const key = (await readFile(join(dataDir, 'bootstrap.key'), 'utf8')).trim();
  const call = (method: string, path: string, body?: object) => callDaemon(info.url, key, method, path, body);
  return { info, key, dataDir, call, kill: () => process.kill(info.pid, 'SIGKILL') };
}
type Daemon = Awaited<ReturnType<typeof daemon>>;

async function publish(d: Daemon, source: string): Promise<void> {
  const res = await d.call('POST', '/admin/flows', { source, environment: 'PRODUCTION' });
  if (res.status !== 201 && res.status !== 200) throw new Error(`publish: ${JSON.stringify(res)}`);
}

async function start(d: Daemon, processId: string, data: object = {}, priority?: number) {
  const res = await d.call('POST', '/process/start', { processId, data, ...(priority !== undefined && { priority }) });
  if (res.status !== 200) throw new Error(`start: ${JSON.stringify(res)}`);
  return res.body as { processInstanceId: string; status: string };
}

interface Listed {
  readonly processInstanceId: string;
  readonly state: string;
  readonly waitingNodeIds: string[];
  readonly queuePosition?: number;
  readonly endTime: string | null;
}

async function listed(d: Daemon, processId: string): Promise<Listed[]> {
  const res = await d.call('GET', `/process/instances?processId=${processId}&limit=200`);
  if (res.status !== 200) throw new Error(`list: ${JSON.stringify(res)}`);
  return (res.body.items as Listed[]).reverse(); // oldest first
}

const answer = (d: Daemon, id: string) =>
  d.call('POST', '/process/task', {
    processInstanceId: id,
    nodeId: 'ask',
    action: 'COMPLETE',
    data: { inputValue: 'ok' },
  });

/** The executions that hold a slot now (running, waiting at `ask`), oldest first. */
const holding = (items: readonly Listed[]) =>
  items.filter((i) => i.state === 'RUNNING' && i.queuePosition === undefined);

// One daemon for the tests that never stop it: each uses flows of its own (their process ids
// differ), so none sees another's executions. The SIGKILL test starts and kills its own.
const shared = await daemon(t, t.testdir({}));

t.test('limit 2: never more than 2 run, all 10 complete in the order they started', async (t) => {
  const d = shared;
  const pid = '87000000-0000-4000-8000-000000000001';
  await publish(d, flowYaml(pid, '{ limit: 2 }'));
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) ids.push((await start(d, pid)).processInstanceId);
  const first = await listed(d, pid);
  t.same(
    first.map((i) => i.queuePosition ?? 0),
    [0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
    'two run, eight queued with their places',
  );
  const completed: string[] = [];
  for (let round = 0; round < 10; round++) {
    const items = await listed(d, pid);
    const running = holding(items);
    t.ok(running.length <= 2, `round ${round}: ${running.length} hold a slot`);
    const next = running.find((i) => i.waitingNodeIds.includes('ask'));
    if (!next) break;
    t.equal((await answer(d, next.processInstanceId)).status, 200);
    completed.push(next.processInstanceId);
  }
  t.same(completed, ids, 'each started in turn, oldest first');
  const end = await listed(d, pid);
  t.same(
    end.map((i) => i.state),
    ids.map(() => 'COMPLETED'),
  );
});

t.test('keys, priority, cancel-new and cancel-oldest', async (t) => {
  const d = shared;
  const keyed = '87000000-0000-4000-8000-000000000002';
  await publish(d, flowYaml(keyed, '{ limit: 2, key: "{customerId}" }'));
  const a: string[] = [];
  for (let i = 0; i < 100; i++) a.push((await start(d, keyed, { customerId: 'A' })).processInstanceId);
  const b = await start(d, keyed, { customerId: 'B' });
  t.equal(b.status, 'started', "B's first start runs at once, behind none of A's 98 queued");
  const items = await listed(d, keyed);
  t.equal(items.find((i) => i.processInstanceId === a[2])?.queuePosition, 1, "A's 3rd waits, first in A's queue");

  const prio = '87000000-0000-4000-8000-000000000003';
  await publish(d, flowYaml(prio, '{ limit: 1 }'));
  const runs = (await start(d, prio)).processInstanceId;
  const bulk = [await start(d, prio, {}, 0), await start(d, prio, {}, 0)];
  const urgent = await start(d, prio, {}, 10);
  t.same([bulk[0]!.status, urgent.status], ['queued', 'queued']);
  const view = await d.call('GET', `/process/instance/${urgent.processInstanceId}`);
  t.match(view.body, { queuePosition: 1, priority: 10 }, 'the urgent start is next');
  await answer(d, runs);
  const after = await listed(d, prio);
  t.same(
    holding(after).map((i) => i.processInstanceId),
    [urgent.processInstanceId],
    'priority jumped the queue',
  );

  const refusing = '87000000-0000-4000-8000-000000000004';
  await publish(d, flowYaml(refusing, '{ limit: 1, policy: cancel-new }'));
  await start(d, refusing);
  const refused = await d.call('POST', '/process/start', { processId: refusing, data: {} });
  t.match(refused, { status: 409, body: { error: 'CONCURRENCY_LIMIT_REACHED', details: { limit: 1 } } });

  const cancelling = '87000000-0000-4000-8000-000000000005';
  await publish(d, flowYaml(cancelling, '{ limit: 1, policy: cancel-oldest }'));
  const old = await start(d, cancelling);
  const fresh = await start(d, cancelling);
  t.equal(fresh.status, 'started');
  const oldView = await d.call('GET', `/process/instance/${old.processInstanceId}`);
  t.match(oldView.body, { state: 'CANCELLED' }, 'the oldest was cancelled for the new one');
});

t.test('SIGKILL with 50 queued starts: after a restart each runs exactly once', async (t) => {
  const dataDir = t.testdir({});
  let d = await daemon(t, dataDir);
  const pid = '87000000-0000-4000-8000-000000000006';
  await publish(d, flowYaml(pid, '{ limit: 2 }'));
  const ids: string[] = [];
  for (let i = 0; i < 52; i++) ids.push((await start(d, pid)).processInstanceId);
  d.kill();
  await eventually('the daemon is gone', () => {
    try {
      process.kill(d.info.pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  d = await daemon(t, dataDir);
  const again = await listed(d, pid);
  t.equal(again.filter((i) => i.queuePosition !== undefined).length, 50, 'the 50 queued are still queued');
  for (let round = 0; round < 60; round++) {
    const next = holding(await listed(d, pid)).find((i) => i.waitingNodeIds.includes('ask'));
    if (!next) break;
    await answer(d, next.processInstanceId);
  }
  for (const id of ids) {
    const view = await d.call('GET', `/process/instance/${id}`);
    const asked = (view.body.nodes as { nodeId: string }[]).filter((n) => n.nodeId === 'ask').length;
    t.equal(`${view.body.state as string} ${asked}`, 'COMPLETED 1', `${id} ran once`);
  }
});

t.test('?wait=: the end in the answer, or 202 once the wait passes', async (t) => {
  const d = shared;
  await publish(d, THREE_NODES);
  const done = await d.call('POST', '/process/start?wait=10', {
    processId: '87000000-0000-4000-8000-000000000009',
    data: { name: 'Ada' },
  });
  t.match(done, {
    status: 200,
    body: { status: 'completed', state: 'COMPLETED', stateCd: 1, data: { name: 'Ada', greeting: 'hello Ada' } },
  });
  const waiting = '87000000-0000-4000-8000-000000000007';
  await publish(d, flowYaml(waiting, '{ limit: 5 }'));
  const pending = await d.call('POST', '/process/start?wait=1', { processId: waiting, data: {} });
  t.match(pending, { status: 202, body: { status: 'started', processInstanceId: String } });
  t.notOk('data' in pending.body, 'no variables while it runs');
  const bad = await d.call('POST', '/process/start?wait=301', { processId: waiting, data: {} });
  t.match(bad, { status: 400, body: { error: 'VALIDATION_ERROR' } });
});

t.test(
  'wfx schedules: pause, resume, list, and a backfill of 10 minutes starts 10 runs with their times',
  async (t) => {
    const d = shared;
    const pid = '87000000-0000-4000-8000-000000000008';
    await publish(
      d,
      `processId: ${pid}
name: Minutely
triggers:
  - { type: schedule, cron: "* * * * *", overlap: skip }
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`,
    );
    const cli = (args: string[]) => wfxIn(['--url', d.info.url, '--api-key', d.key, ...args], { cwd: d.dataDir });
    const paused = await cli(['schedules', 'pause', 'Minutely']);
    t.equal(paused.code, 0, paused.stderr);
    t.match(paused.stdout, /schedules paused in PRODUCTION/);
    const list = await cli(['schedules', 'list']);
    t.match(list.stdout, /Minutely\s+PRODUCTION\s+\* \* \* \* \*\s+UTC\s+paused\s+skip\s+0\s+-/);
    t.equal((await cli(['schedules', 'resume', 'Minutely'])).code, 0);
    t.match((await cli(['schedules', 'list', '--json'])).stdout, /"state": "active"/);

    const backfill = await cli([
      'schedules',
      'backfill',
      'Minutely',
      '--from',
      '2026-11-01T09:00:00Z',
      '--to',
      '2026-11-01T09:09:59Z',
      '--json',
    ]);
    t.equal(backfill.code, 0, backfill.stderr);
    const times = (JSON.parse(backfill.stdout) as { fireTimes: string[] }).fireTimes;
    t.equal(times.length, 10);
    const started = await eventually('the ten backfilled runs ended', async () => {
      const items = (await listed(d, pid)).filter((i) => i.state === 'COMPLETED');

      return items.length >= 10 ? items : null;
    });
    const scheduled: string[] = [];
    for (const i of started) {
      const view = await d.call('GET', `/process/instance/${i.processInstanceId}`);
      scheduled.push((view.body.data as { scheduledTime: string }).scheduledTime);
    }
    t.same(
      scheduled.filter((x) => x.startsWith('2026-11-01')).sort(),
      times,
      'one run per fire time, each with its time',
    );
    const tooMany = await cli([
      'schedules',
      'backfill',
      'Minutely',
      '--from',
      '2026-01-01T00:00:00Z',
      '--to',
      '2026-02-01T00:00:00Z',
    ]);
    t.equal(tooMany.code, 1);
    t.match(tooMany.stderr, /BACKFILL_TOO_LARGE/);
  },
);

t.test("a webhook registered to answer returns the flow's status and body, or 202 past its time", async (t) => {
  const d = shared;
  const made = await d.call('POST', '/admin/webhooks?organization=default', {
    name: 'signup',
    provider: 'STANDARD',
    authType: 'NONE',
    respondWithin: 10,
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.equal(made.body.respondWithin, 10);
  const url = (made.body.endpoints as { url: string }[])[0]!.url;
  await publish(
    d,
    `processId: 87000000-0000-4000-8000-00000000000a
name: Sign up
triggers:
  - { type: webhook, webhook: signup }
nodes:
  start: { type: startEvent, next: reply }
  reply: { type: outputNode, outputs: { status: 201, body: { greeting: "hello {webhookPayload.name}" } }, next: done }
  done: { type: endEvent }
`,
  );
  const post = (body: object) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answered = await post({ name: 'Ada' });
  t.equal(answered.status, 201);
  t.same(await answered.json(), { greeting: 'hello Ada' }, "the flow's body");

  const slow = await d.call('PATCH', '/admin/webhooks/signup?organization=default', { respondWithin: 1 });
  t.equal(slow.status, 200);
  await publish(
    d,
    `processId: 87000000-0000-4000-8000-00000000000a
name: Sign up
triggers:
  - { type: webhook, webhook: signup }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`,
  );
  const waiting = await post({ name: 'Bob' });
  t.equal(waiting.status, 202, 'a flow that waits answers 202 once the time passes');
  t.match(await waiting.json(), { received: true, deliveryId: String });
  const atOnce = await d.call('PATCH', '/admin/webhooks/signup?organization=default', { respondWithin: null });
  t.notOk('respondWithin' in atOnce.body, 'answered at once again');
});
