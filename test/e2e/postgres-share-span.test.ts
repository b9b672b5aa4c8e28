import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { BILLING } from '../helpers/jobs.js';
import { parseSse } from '../../src/shared/sse.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import {
  askFlow,
  callDaemon,
  bothShare,
  launchSharing,
  printLogs,
  serving,
  waitForGoFlow,
  type SharingDaemon,
} from '../helpers/share.js';

/*
 * Calls that span executions among daemons sharing a database (decision 042): lists, event
 * correlation and a worker's activation answer through either daemon as one daemon would, over
 * the executions both hold; and a key's rate limit counts each call once, whichever daemon it
 * reaches (a call one daemon counted and passed on is not counted again).
 */

const ASK_ID = '3c4d5e6f-7081-4a92-8db3-c4d5e6f70819';
const WAIT_ID = '4d5e6f70-8192-4aa3-9ec4-d5e6f708192a';
const CHARGE_ID = '5e6f7081-92a3-4bb4-8fd5-e6f708192a3b';
const THROW_ID = '6f708192-a3b4-4cc5-9ae6-f708192a3b4c';
const FAIL_ID = '708192a3-b4c5-4dd6-8af7-08192a3b4c5d';
const FLOWS = [
  `processId: ${FAIL_ID}
name: Fail
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches:
      - { condition: "\${mode == 'ok'}", next: done }
  done: { type: endEvent }
`,
  askFlow(ASK_ID),
  waitForGoFlow(WAIT_ID),
  `processId: ${THROW_ID}
name: Say go
nodes:
  start: { type: startEvent, next: say }
  say: { type: intermediateThrowEvent, eventType: message, messageRef: go, correlationKey: "{key}", data: { from: thrower }, next: done }
  done: { type: endEvent }
`,
  `processId: ${CHARGE_ID}
name: Charge
nodes:
  start: { type: startEvent, next: charge }
  charge: { type: domainTask, domain: billing, action: charge, input: { amount: 5 }, next: done }
  done: { type: endEvent }
`,
];

t.test('calls that span executions answer through either daemon', { skip: POSTGRES_SKIP }, async (t) => {
  const server = await startPostgres(t);
  const store = await server.createDatabase('span');
  const root = t.testdir();
  t.teardown(async () => {
    if (!t.passing()) await printLogs([join(root, 'a'), join(root, 'b')]);
  });
  const a = await launchSharing(t, join(root, 'a'), store);
  await eventually('a serves', () => serving(a));
  const admin = (await readFile(join(a.dir, 'bootstrap.key'), 'utf8')).trim();
  const call = (d: SharingDaemon, method: string, path: string, body?: object, key = admin) =>
    callDaemon(d, key, method, path, body);

  const domain = { description: BILLING.description, actions: BILLING.actions };
  t.equal((await call(a, 'PUT', '/admin/domains/billing', domain)).status, 200, 'domain registered');
  for (const source of FLOWS)
    t.equal((await call(a, 'POST', '/admin/flows', { source, organization: 'default' })).status, 200, 'published');

  const b = await launchSharing(t, join(root, 'b'), store);
  await bothShare(a, b, admin);
  const start = async (via: SharingDaemon, processId: string, data: object = {}) => {
    const r = await call(via, 'POST', '/process/start', { processId, data });
    t.equal(r.status, 200, 'started');
    return r.body.processInstanceId as string;
  };

  // A start draws its id in a partition the daemon asked holds: half on each.
  const asked: string[] = [];
  for (let i = 0; i < 10; i++) asked.push(await start(i % 2 ? a : b, ASK_ID));
  const newestFirst = [...asked].sort().reverse();
  for (const via of [a, b]) {
    const list = await call(via, 'GET', `/process/${ASK_ID}/instances?limit=100`);
    t.same(
      (list.body.items as { processInstanceId: string }[]).map((i) => i.processInstanceId),
      newestFirst,
      `every execution of the flow, newest first, through ${via === a ? 'a' : 'b'}`,
    );
    t.equal(list.body.nextCursor, null);
    // The header one daemon narrows a call to another with is not a client's to use.
    const narrowed = await fetch(`${via.url}/process/${ASK_ID}/instances?limit=100`, {
      headers: { 'x-api-key': admin, 'x-wfx-asked-by': 'me' },
    });
    t.equal(
      ((await narrowed.json()) as { items: unknown[] }).items.length,
      asked.length,
      'unsigned, it narrows nothing',
    );
    const paged: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const q: string = cursor === null ? '' : `&cursor=${cursor}`;
      const r = await call(via, 'GET', `/process/${ASK_ID}/instances?limit=3${q}`);
      paged.push(...(r.body.items as { processInstanceId: string }[]).map((i) => i.processInstanceId));
      cursor = r.body.nextCursor as string | null;
      if (cursor === null) break;
    }
    t.same(paged, newestFirst, 'pages of three, each after the cursor, list each execution once');

    const tasks: string[] = [];
    cursor = null;
    for (let page = 0; page < 10; page++) {
      const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const r = await call(via, 'GET', `/process/tasks?processId=${ASK_ID}&limit=4${q}`);
      tasks.push(...(r.body.items as { processInstanceId: string }[]).map((i) => i.processInstanceId));
      cursor = r.body.nextCursor as string | null;
      if (cursor === null) break;
    }
    t.same([...tasks].sort(), [...asked].sort(), 'every waiting task, a page of four at a time');
  }

  // Failures grouped through either daemon: history once, each daemon's live failures added.
  const failed: string[] = [];
  for (let i = 0; i < 6; i++) failed.push(await start(i % 2 ? a : b, FAIL_ID, { mode: 'no' }));
  for (const via of [a, b]) {
    const grouped = await eventually('every failure archived or counted once', async () => {
      const r = await call(via, 'GET', `/process/failures?processId=${FAIL_ID}`);
      return r.body.total === failed.length && r.body;
    });
    t.match(grouped, {
      groupCount: 1,
      groups: [{ processId: FAIL_ID, errorCode: 'NO_BRANCH_MATCHED', nodeId: 'route', count: failed.length }],
    });
    t.equal(
      (grouped.groups as Array<{ newest: { processInstanceId: string } }>)[0]!.newest.processInstanceId,
      [...failed].sort().at(-1),
      `the newest of both daemons' through ${via === a ? 'a' : 'b'}`,
    );
    const byNode = await call(via, 'GET', `/process/instances?failedNode=route&processId=${FAIL_ID}&limit=100`);
    t.same(
      (byNode.body.items as { processInstanceId: string }[]).map((i) => i.processInstanceId),
      [...failed].sort().reverse(),
      'listed by the node they failed at',
    );
  }

  // The lifecycle events of executions the other daemon holds reach a stream opened on either.
  const events = new AbortController();
  t.teardown(() => events.abort());
  const stream = await fetch(`${a.url}/events`, { headers: { 'x-api-key': admin }, signal: events.signal });
  const streamed = new Set<string>();
  void (async () => {
    for await (const ev of parseSse(stream.body!))
      if (ev.event === 'PROCESS_STARTED')
        streamed.add((JSON.parse(ev.data!) as { processInstanceId: string }).processInstanceId);
  })().catch(() => undefined);
  // Started until one is streamed: the stream follows b once it has connected there.
  const startedOnB: string[] = [];
  await eventually('an execution started on b is streamed by a', async () => {
    if (startedOnB.some((id) => streamed.has(id))) return true;
    startedOnB.push(await start(b, ASK_ID));
    return false;
  });
  const onBNow = await start(b, ASK_ID);
  await eventually('the next one too', () => streamed.has(onBNow));
  events.abort();

  // An event reaches an execution the other daemon holds; kept only when nothing waits anywhere.
  const onB = await start(b, WAIT_ID, { key: 'k-b' });
  const onA = await start(a, WAIT_ID, { key: 'k-a' });
  for (const [via, key, id] of [
    [a, 'k-b', onB],
    [b, 'k-a', onA],
  ] as const) {
    const r = await call(via, 'POST', '/process/event', { eventType: 'go', correlationKey: key });
    t.equal(r.status, 200, `the event for ${key} is delivered`);
    t.same(r.body.matched, [{ processInstanceId: id, nodeId: 'wait' }], 'to the execution the other daemon holds');
    await eventually(
      `${id} completes`,
      async () => (await call(via, 'GET', `/process/instance/${id}`)).body.state === 'COMPLETED',
    );
  }
  const none = await call(a, 'POST', '/process/event', { eventType: 'go', correlationKey: 'nobody' });
  t.equal(none.status, 404);
  t.equal(none.body.error, 'NO_MATCHING_SUBSCRIPTION', 'nothing waits on either daemon');
  const kept = { eventType: 'go', correlationKey: 'later', ttlSeconds: 60, messageId: 'm-1' };
  t.match((await call(b, 'POST', '/process/event', kept)).body, { status: 'buffered', matched: [] }, 'kept');
  t.match((await call(b, 'POST', '/process/event', kept)).body, { duplicate: true }, 'its message id is known');

  // An event an execution throws reaches what waits on the other daemon too.
  for (const [catcher, thrower] of [
    [b, a],
    [a, b],
  ] as const) {
    const key = `k-thrown-${catcher === a ? 'a' : 'b'}`;
    const waits = await start(catcher, WAIT_ID, { key });
    await start(thrower, THROW_ID, { key });
    await eventually(`${waits} is woken by the event thrown on the other daemon`, async () => {
      const r = await call(catcher, 'GET', `/process/instance/${waits}`);
      return r.body.state === 'COMPLETED' && (r.body.data as { from?: string }).from === 'thrower';
    });
  }

  // The message kept above (`later`), which both daemons have read by now, is consumed once
  // when nodes on both start waiting for it at once: the other one waits for the next.
  const waiters = await Promise.all([a, b].map((via) => start(via, WAIT_ID, { key: 'later' })));
  const stateOf = async (id: string) => (await call(a, 'GET', `/process/instance/${id}`)).body.state as string;
  const first = await eventually('one of them takes the kept message', async () => {
    const states = await Promise.all(waiters.map(stateOf));
    return states.includes('COMPLETED') && states;
  });
  const waiting = waiters.filter((_, i) => first[i] !== 'COMPLETED');
  t.equal(waiting.length, 1, 'the other one did not take it too');
  const next = await call(b, 'POST', '/process/event', { eventType: 'go', correlationKey: 'later' });
  t.same(next.body.matched, [{ processInstanceId: waiting[0], nodeId: 'wait' }], 'and takes the next message');

  // One message id sent to both daemons at once is taken in once (by the daemon its id is
  // hashed to): one answer resumes the execution, the others say it is a duplicate.
  const once = await start(b, WAIT_ID, { key: 'k-once' });
  const twice = { eventType: 'go', correlationKey: 'k-once', ttlSeconds: 60, messageId: 'm-once' };
  const answers = await Promise.all([a, b, a, b].map((via) => call(via, 'POST', '/process/event', twice)));
  t.same(
    answers.map((r) => r.status),
    [200, 200, 200, 200],
  );
  t.same(
    answers.filter((r) => r.body.status === 'resumed').map((r) => r.body.matched),
    [[{ processInstanceId: once, nodeId: 'wait' }]],
    'resumed once',
  );
  t.equal(answers.filter((r) => r.body.duplicate === true).length, 3, 'the other three are duplicates');

  // A worker polling one daemon is given the jobs the other holds.
  const charges = [await start(b, CHARGE_ID), await start(b, CHARGE_ID)];
  const jobs = await call(a, 'GET', '/jobs?domain=billing');
  t.same(
    (jobs.body.items as { processInstanceId: string }[]).map((j) => j.processInstanceId).sort(),
    [...charges].sort(),
    "b's jobs are listed through a",
  );
  const worker = { domain: 'billing', worker: 'w1', maxJobs: 5, requestTimeout: 0 };
  const got = await call(a, 'POST', '/jobs/activate', worker);
  const keys = (got.body.jobs as { key: string; processInstanceId: string }[]).map((j) => j.key);
  t.equal(keys.length, 2, "a worker on a activates b's jobs");
  // Completed together through a: each where its execution is held (b).
  const completed = await call(a, 'POST', '/jobs/complete', {
    worker: 'w1',
    jobs: keys.map((key) => ({ key, output: { receipt: 'r' } })),
  });
  t.same(
    completed.body.results,
    keys.map((key) => ({ key, status: 'completed' })),
    "a completes b's jobs in one request",
  );
  // None waits anywhere: the poll waits on both daemons, and a job started on b ends it.
  const polled = call(a, 'POST', '/jobs/activate', { ...worker, maxJobs: 1, requestTimeout: 25_000 });
  await eventually('the poll waits on b', async () => {
    const health = await call(b, 'GET', '/jobs/workers');
    const billing = (health.body.items as { domain: string; workers: { worker: string; polling: boolean }[] }[]).find(
      (d) => d.domain === 'billing',
    );
    return billing?.workers.some((w) => w.worker === 'w1' && w.polling);
  });
  const third = await start(b, CHARGE_ID);
  const woken = await polled;
  t.same(
    (woken.body.jobs as { processInstanceId: string }[]).map((j) => j.processInstanceId),
    [third],
    'the waiting poll is given the job b created',
  );
  // A worker that goes away while its poll waits on both: no job is left locked for it.
  const leaving = new AbortController();
  const left = fetch(`${a.url}/jobs/activate`, {
    method: 'POST',
    headers: { 'x-api-key': admin, 'content-type': 'application/json' },
    body: JSON.stringify({ ...worker, worker: 'w-gone', maxJobs: 1, requestTimeout: 25_000 }),
    signal: leaving.signal,
  }).catch(() => null);
  await eventually('the poll waits on b', async () => {
    const health = await call(b, 'GET', '/jobs/workers');
    const billing = (health.body.items as { domain: string; workers: { worker: string; polling: boolean }[] }[]).find(
      (d) => d.domain === 'billing',
    );
    return billing?.workers.some((w) => w.worker === 'w-gone' && w.polling);
  });
  leaving.abort();
  await left;
  const fourth = await start(b, CHARGE_ID);
  const other = await eventually('another worker is given the job', async () => {
    const r = await call(b, 'POST', '/jobs/activate', { ...worker, worker: 'w2', maxJobs: 5 });
    return (r.body.jobs as { processInstanceId: string }[]).length > 0 && r;
  });
  t.same(
    (other.body.jobs as { processInstanceId: string }[]).map((j) => j.processInstanceId),
    [fourth],
    'the job the gone worker would have had',
  );

  // A key's limit counts each call once, whichever daemon it reaches.
  const limitedKey = async (name: string, role: string, perMinute: number) => {
    const created = await call(a, 'POST', '/admin/api-keys', {
      name,
      role,
      organization: 'default',
      rateLimitPerMinute: perMinute,
    });
    t.equal(created.status, 201);
    const id = (created.body as { keyId: string }).keyId;
    await eventually(`b knows key ${name}`, async () => (await call(b, 'GET', `/admin/api-keys/${id}`)).status === 200);
    return created.body.apiKey as string;
  };
  const viewer = await limitedKey('viewer', 'viewer', 4);
  const seen: Array<[number, string | null]> = [];
  for (const via of [a, b, a, b, a, b]) {
    const r = await call(via, 'GET', '/process/list', undefined, viewer);
    seen.push([r.status, r.headers.get('ratelimit-remaining')]);
  }
  t.same(
    seen,
    [
      [200, '3'],
      [200, '2'],
      [200, '1'],
      [200, '0'],
      [429, '0'],
      [429, '0'],
    ],
    'four calls a minute across both daemons, then refused on either',
  );
  // A task answer routed on its body is counted where it arrived, not again where it is served.
  const answerer = await limitedKey('answerer', 'developer', 2);
  const heldByB = asked[0]!; // started through b
  const answered = await call(
    a,
    'POST',
    '/process/task',
    { processInstanceId: heldByB, nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'hi' } },
    answerer,
  );
  t.equal(answered.status, 200, 'answered through a, served by b');
  t.equal(answered.headers.get('ratelimit-remaining'), '1', 'counted once, by a');
  t.equal((await call(b, 'GET', '/process/list', undefined, answerer)).status, 200, 'one call left');
  t.equal((await call(b, 'GET', '/process/list', undefined, answerer)).status, 429);
  // A list asked of both daemons is counted once.
  const lister = await limitedKey('lister', 'viewer', 2);
  t.equal((await call(a, 'GET', `/process/${ASK_ID}/instances`, undefined, lister)).status, 200);
  t.equal((await call(b, 'GET', `/process/${ASK_ID}/instances`, undefined, lister)).status, 200, 'one call left');
  t.equal((await call(a, 'GET', `/process/${ASK_ID}/instances`, undefined, lister)).status, 429);
  // A forged "counted" signature is not believed.
  const forged = await fetch(`${b.url}/process/list`, {
    headers: { 'x-api-key': lister, 'x-wfx-counted': `${Date.now()}.${'0'.repeat(64)}` },
  });
  t.equal(forged.status, 429, 'a request signed by no daemon of the database is counted');
});
