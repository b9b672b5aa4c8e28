import t, { type Test } from 'tap';
import { apiHarness } from '../../../helpers/api.js';
import type { HarnessEngineOptions } from '../../../helpers/engine.js';
import { BILLING, chargeFlow } from '../../../helpers/jobs.js';
import { eventually } from '../../../helpers/eventually.js';

const DOMAIN_BODY = { description: BILLING.description, actions: BILLING.actions };

async function setup(t: Test, engine: HarnessEngineOptions = {}) {
  const h = await apiHarness(t, { engine });
  const dev = await h.key('developer', 'default');
  const worker = await h.key('worker', 'default');
  const viewer = await h.key('viewer', 'default');
  const put = await h.call(dev, { method: 'PUT', url: '/admin/domains/billing', payload: DOMAIN_BODY });
  t.equal(put.statusCode, 200, 'registered');
  return { h, dev, worker, viewer };
}

t.test('domains: registered whole by a developer, schemas checked, deletion refused while jobs wait', async (t) => {
  const { h, dev, viewer } = await setup(t);
  t.equal(
    (await h.call(viewer, { method: 'PUT', url: '/admin/domains/x', payload: DOMAIN_BODY })).statusCode,
    403,
    'a viewer may not register',
  );
  const bad = await h.call(dev, {
    method: 'PUT',
    url: '/admin/domains/crm',
    payload: { actions: { find: { input: { type: 'string' }, output: { type: 'nope' } } } },
  });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), {
    error: 'VALIDATION_ERROR',
    details: { problems: [/actions\.find\.output/, /actions\.find\.input\.type/] },
  });
  const list = await h.call(viewer, { method: 'GET', url: '/admin/domains' });
  t.same(
    list.json().items.map((d: { name: string }) => d.name),
    ['billing'],
  );
  const pid = await h.publish(chargeFlow());
  await h.start(pid, { amount: 3 });
  const del = await h.call(dev, { method: 'DELETE', url: '/admin/domains/billing' });
  t.match(del.json(), { error: 'DOMAIN_IN_USE', details: { jobs: 1, actions: ['charge'] } });
  const drop = await h.call(dev, {
    method: 'PUT',
    url: '/admin/domains/billing',
    payload: { actions: { refund: {} } },
  });
  t.equal(drop.json().error, 'DOMAIN_IN_USE', 'a registration that drops an action with jobs is refused');
});

t.test('publish refuses an unknown domain or action, and input that cannot match', async (t) => {
  const { h, dev } = await setup(t);
  const publish = (node: string) =>
    h.call(dev, {
      method: 'POST',
      url: '/admin/flows',
      payload: {
        source: `processId: 3a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d
name: P
nodes:
  start: { type: startEvent, next: job }
  job: ${node}
  done: { type: endEvent }
`,
      },
    });
  const unknown = await publish('{ type: domainTask, domain: crm, action: find, next: done }');
  t.match(unknown.json(), {
    error: 'FLOW_INVALID',
    details: { problems: [{ code: 'UNKNOWN_DOMAIN', property: 'domain' }] },
  });
  const action = await publish('{ type: domainTask, domain: billing, action: pay, next: done }');
  t.match(action.json().details.problems, [{ code: 'UNKNOWN_DOMAIN', property: 'action' }]);
  const input = await publish(
    '{ type: domainTask, domain: billing, action: charge, input: { amount: ten, extra: "{x}" }, next: done }',
  );
  t.match(input.json().details.problems, [{ code: 'JOB_INPUT_MISMATCH', property: 'input.amount' }]);
  const missing = await publish(
    '{ type: domainTask, domain: billing, action: charge, input: { currency: EUR }, next: done }',
  );
  t.match(missing.json().details.problems, [{ code: 'JOB_INPUT_MISMATCH', message: /requires amount/ }]);
  for (const ok of [
    '{ type: domainTask, domain: billing, action: charge, input: { amount: "{total}" }, next: done }',
    '{ type: domainTask, domain: billing, action: charge, input: "{order}", next: done }',
    '{ type: domainTask, domain: billing, action: charge, input: { amount: 12.5 }, next: done }',
  ])
    t.equal((await publish(ok)).statusCode, 200, ok);
});

t.test('a long poll answers as soon as a job is made; with no job it answers empty in time', async (t) => {
  const { h, worker, viewer } = await setup(t);
  const pid = await h.publish(chargeFlow());
  const started = Date.now();
  const empty = await h.call(worker, {
    method: 'POST',
    url: '/jobs/activate',
    payload: { domain: 'billing', worker: 'w1', requestTimeout: 200 },
  });
  t.same(empty.json(), { jobs: [] });
  t.ok(Date.now() - started >= 190, 'held for the request timeout');
  const polling = h.call(worker, {
    method: 'POST',
    url: '/jobs/activate',
    payload: { domain: 'billing', worker: 'w1', requestTimeout: 30_000, lockDuration: 5000 },
  });
  // The poll waits before the job exists.
  const health = await eventually('the poll waits', async () => {
    const items = (await h.call(viewer, { method: 'GET', url: '/jobs/workers' })).json().items;
    return items[0]?.workers[0]?.polling === true && items;
  });
  t.match(health, [{ domain: 'billing', state: 'active', workers: [{ worker: 'w1', polling: true }] }]);
  const inst = await h.start(pid, { amount: 9 });
  const res = await polling;
  t.ok(Date.now() - started < 10_000, 'answered long before the poll’s timeout');
  const [job] = res.json().jobs;
  t.match(job, { action: 'charge', input: { amount: 9 }, processInstanceId: inst.processInstanceId });

  const listed = (await h.call(viewer, { method: 'GET', url: '/jobs' })).json();
  t.match(listed.items, [{ key: job.key, state: 'locked', worker: 'w1', attempt: 1 }]);
  const lost = await h.call(worker, { method: 'POST', url: `/jobs/${job.key}/complete`, payload: { worker: 'w2' } });
  t.equal(lost.statusCode, 409);
  t.match(lost.json(), { error: 'JOB_LOCK_LOST', details: { worker: 'w1' } });
  const invalid = await h.call(worker, {
    method: 'POST',
    url: `/jobs/${job.key}/complete`,
    payload: { worker: 'w1', output: { receipt: 1 } },
  });
  t.equal(invalid.statusCode, 422);
  t.match(invalid.json(), { error: 'JOB_OUTPUT_INVALID', details: { status: 'retrying', retriesLeft: 1 } });
  t.equal((await h.call(worker, { method: 'GET', url: '/jobs' })).statusCode, 403, 'a worker key lists nothing');
});

t.test('jobs waiting with no worker seen are shown as stalled', async (t) => {
  const { h, viewer } = await setup(t);
  const pid = await h.publish(chargeFlow());
  await h.start(pid, { amount: 1 });
  const health = (await h.call(viewer, { method: 'GET', url: '/jobs/workers' })).json();
  t.match(health.items, [{ domain: 'billing', state: 'stalled', waiting: 1, locked: 0, workers: [] }]);
});

t.test('cold jobs: health from their summaries; a list and an activation read back only their own', async (t) => {
  const { h, worker, viewer } = await setup(t, { cold: true });
  const pid = await h.publish(chargeFlow());
  const first = await h.start(pid, { amount: 1 });
  h.clock.advance(1000);
  await h.start(pid, { amount: 2 });
  const cold = h.cold!;
  await h.rest();
  t.equal(cold.size, 2, 'both executions cold');
  let read = cold.loads;
  const health = (await h.call(viewer, { method: 'GET', url: '/jobs/workers' })).json();
  t.match(health.items, [{ domain: 'billing', state: 'stalled', waiting: 2, locked: 0 }]);
  t.equal(cold.loads, read, 'worker health reads nothing back');

  const listed = (await h.call(viewer, { method: 'GET', url: '/jobs?limit=1' })).json();
  t.match(listed, { items: [{ processInstanceId: first.processInstanceId, state: 'waiting' }], more: true });
  t.equal(cold.loads - read, 1, 'a page reads back its own');

  await h.rest();
  read = cold.loads;
  const activated = await h.call(worker, {
    method: 'POST',
    url: '/jobs/activate',
    payload: { domain: 'billing', worker: 'w1', maxJobs: 1, requestTimeout: 0 },
  });
  const [job] = activated.json().jobs;
  t.match(job, { processInstanceId: first.processInstanceId, input: { amount: 1 } }, 'the oldest');
  t.equal(cold.loads - read, 1, 'an activation reads back what it locks');

  await h.rest();
  read = cold.loads;
  const after = (await h.call(viewer, { method: 'GET', url: '/jobs/workers' })).json();
  t.match(after.items, [{ domain: 'billing', waiting: 1, locked: 1 }]);
  t.equal(cold.loads, read);
  const done = await h.call(worker, {
    method: 'POST',
    url: `/jobs/${job.key}/complete`,
    payload: { worker: 'w1', output: { receipt: 'r' } },
  });
  t.equal(done.statusCode, 200);
});

t.test('POST /jobs/complete: many jobs in one request, one outcome each, in order', async (t) => {
  const { h, dev, worker, viewer } = await setup(t);
  const pid = await h.publish(chargeFlow());
  const starts = [await h.start(pid, { amount: 1 }), await h.start(pid, { amount: 2 })];
  const activated = await h.call(worker, {
    method: 'POST',
    url: '/jobs/activate',
    payload: { domain: 'billing', worker: 'w1', maxJobs: 2, requestTimeout: 0 },
  });
  const [a, b] = activated.json().jobs as { key: string; processInstanceId: string }[];
  const complete = (key: typeof worker, payload: object) =>
    h.call(key, { method: 'POST', url: '/jobs/complete', payload });
  const unknown = `${a!.processInstanceId}.nope`;
  const res = await complete(worker, {
    worker: 'w1',
    jobs: [
      { key: a!.key, output: { receipt: 'r-a' } },
      { key: b!.key, output: { receipt: 2 } },
      { key: unknown, output: { receipt: 'x' } },
      { key: a!.key, output: { receipt: 'again' } },
    ],
  });
  t.equal(res.statusCode, 200);
  t.match(res.json(), {
    results: [
      { key: a!.key, status: 'completed' },
      { key: b!.key, error: 'JOB_OUTPUT_INVALID', details: { status: 'retrying', retriesLeft: 1 } },
      { key: unknown, error: 'JOB_NOT_FOUND' },
      { key: a!.key, error: 'JOB_NOT_FOUND' },
    ],
  });
  t.equal(res.json().results.length, 4);
  const ended = (await h.call(dev, { method: 'GET', url: `/process/instance/${a!.processInstanceId}` })).json();
  t.match(ended, { state: 'COMPLETED' }, 'the completed job ran on to its end');
  t.match(
    (await h.call(dev, { method: 'GET', url: `/process/instance/${starts[1]!.processInstanceId}` })).json(),
    { state: 'RUNNING' },
    'the refused one waits for its retry',
  );

  // Another worker's hold is refused per job, as its own complete would be.
  const stolen = await complete(worker, { worker: 'w2', jobs: [{ key: b!.key, output: { receipt: 'r' } }] });
  t.match(
    stolen.json(),
    { results: [{ key: b!.key, error: 'JOB_LOCK_LOST', details: { worker: null } }] },
    'in its backoff, held by no one',
  );

  t.equal((await complete(viewer, { worker: 'w1', jobs: [{ key: a!.key }] })).statusCode, 403, 'a viewer may not');
  const empty = await complete(worker, { worker: 'w1', jobs: [] });
  t.equal(empty.statusCode, 400);
  t.equal(empty.json().error, 'VALIDATION_ERROR');
  const many = Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}` }));
  t.equal((await complete(worker, { worker: 'w1', jobs: many })).json().error, 'VALIDATION_ERROR', 'at most 1,000');
});
