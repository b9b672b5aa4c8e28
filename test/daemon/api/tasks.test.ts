import t from 'tap';
import { apiHarness } from '../../helpers/api.js';

const FORM_FLOW = `processId: AUTO
name: Approve
nodes:
  start: { type: startEvent, next: ask }
  ask:
    type: inputNode
    name: Ask for approval
    formTitle: "Approve order {order.id}?"
    inputType: form
    fields:
      - { name: approve, type: boolean, required: true }
      - { name: size, type: select, options: [S, M, L] }
    timeout: 30m
    next: done
  done: { type: endEvent }
`;

const REVIEW_FLOW = `processId: AUTO
name: Review
nodes:
  start: { type: startEvent, next: review }
  review: { type: userTask, name: "Review {what}", assignee: "{who}", fields: [{ name: ok, type: boolean }], next: done }
  done: { type: endEvent }
`;

const TIMER_FLOW = `processId: AUTO
name: Sleep
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 1h, next: done }
  done: { type: endEvent }
`;

interface Page {
  items: Array<Record<string, unknown> & { processInstanceId: string; nodeId: string; waitingSince: string }>;
  nextCursor: string | null;
}

t.test(
  'GET /process/tasks lists every waiting input node and user task with its resolved form, oldest first',
  async (t) => {
    const h = await apiHarness(t);
    const viewer = await h.key('viewer', 'acme');
    const form = await h.publish(FORM_FLOW, { organization: 'acme' });
    const review = await h.publish(REVIEW_FLOW, { organization: 'acme' });
    const sleep = await h.publish(TIMER_FLOW, { organization: 'acme' });
    const a = await h.start(form, { order: { id: 42 } }, { organization: 'acme', correlationKey: 'order-42' });
    h.clock.advance(1000);
    const b = await h.start(review, { what: 'the contract', who: 'ann' }, { organization: 'acme' });
    await h.start(sleep, {}, { organization: 'acme' });

    const res = await h.call(viewer, { method: 'GET', url: '/process/tasks' });
    t.equal(res.statusCode, 200);
    const page = res.json() as Page;
    t.equal(page.nextCursor, null);
    t.same(
      page.items.map((i) => [i.processInstanceId, i.nodeId]),
      [
        [a.processInstanceId, 'ask'],
        [b.processInstanceId, 'review'],
      ],
      'the timer wait is not a task; oldest waiting first',
    );
    t.same(page.items[0], {
      processInstanceId: a.processInstanceId,
      processId: form,
      processName: 'Approve',
      processVersion: '1',
      organization: 'acme',
      environment: 'PRODUCTION',
      correlationKey: 'order-42',
      nodeInstanceId: 'n2',
      nodeId: 'ask',
      nodeName: 'Ask for approval',
      nodeType: 'inputNode',
      inputType: 'form',
      formTitle: 'Approve order 42?',
      options: null,
      fields: [
        { name: 'approve', type: 'boolean', required: true },
        { name: 'size', type: 'select', options: ['S', 'M', 'L'] },
      ],
      assignee: null,
      claim: null,
      dueAt: new Date(Date.parse(a.startTime) + 30 * 60_000).toISOString(),
      waitingSince: a.startTime,
    });
    t.match(page.items[1], {
      nodeType: 'userTask',
      inputType: 'form',
      formTitle: 'Review the contract',
      assignee: 'ann',
      fields: [{ name: 'ok', type: 'boolean' }],
    });

    // Answered: gone from the list.
    const done = await h.call(viewer, { method: 'GET', url: `/process/tasks?processId=${review}` });
    t.equal((done.json() as Page).items.length, 1, "?processId= keeps one flow's tasks");
    await h.engine.submitTask({
      organization: 'acme',
      processInstanceId: a.processInstanceId,
      nodeId: 'ask',
      action: 'COMPLETE',
      data: { approve: true },
    });
    const after = (await h.call(viewer, { method: 'GET', url: '/process/tasks' })).json() as Page;
    t.same(
      after.items.map((i) => i.processInstanceId),
      [b.processInstanceId],
    );
  },
);

t.test('GET /process/tasks pages with limit and cursor', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('viewer', 'default');
  const form = await h.publish(FORM_FLOW);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await h.start(form, { order: { id: i } })).processInstanceId);
    h.clock.advance(10);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const url: string = `/process/tasks?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = (await h.call(key, { method: 'GET', url })).json() as Page;
    t.ok(page.items.length <= 2);
    seen.push(...page.items.map((i) => i.processInstanceId));
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 10);
  t.same(seen, ids, 'every task once, in order');
  t.equal(pages, 3);
  const bad = await h.call(key, { method: 'GET', url: '/process/tasks?limit=0' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().error, 'VALIDATION_ERROR');
});

t.test("GET /process/tasks is scoped to the caller's organization; system keys see all or name one", async (t) => {
  const h = await apiHarness(t);
  const acme = await h.key('viewer', 'acme');
  const globex = await h.key('admin', 'globex');
  const system = await h.key('viewer', null);
  const acmeFlow = await h.publish(FORM_FLOW, { organization: 'acme' });
  const globexFlow = await h.publish(REVIEW_FLOW, { organization: 'globex' });
  const a = await h.start(acmeFlow, { order: { id: 1 } }, { organization: 'acme' });
  const g = await h.start(globexFlow, { what: 'x', who: 'y' }, { organization: 'globex' });
  const list = async (key: typeof acme, query = '') => {
    const res = await h.call(key, { method: 'GET', url: `/process/tasks${query}` });
    return { status: res.statusCode, body: res.json() as Page & { error?: string } };
  };

  t.same(
    (await list(acme)).body.items.map((i) => i.processInstanceId),
    [a.processInstanceId],
    'acme sees its own only',
  );
  t.same(
    (await list(globex)).body.items.map((i) => i.processInstanceId),
    [g.processInstanceId],
    'globex sees its own only',
  );
  t.same(
    (await list(system)).body.items.map((i) => i.processInstanceId).sort(),
    [a.processInstanceId, g.processInstanceId].sort(),
    'a system key sees every organization',
  );
  t.same(
    (await list(system, '?organization=globex')).body.items.map((i) => i.processInstanceId),
    [g.processInstanceId],
    'or names one',
  );
  t.same((await list(acme, '?organization=acme')).body.items.length, 1, 'an organization key may name its own');

  const other = await list(acme, '?organization=globex');
  t.equal(other.status, 403, 'but not another');
  t.equal(other.body.error, 'FORBIDDEN');
  const foreignFlow = await list(acme, `?processId=${globexFlow}`);
  t.equal(foreignFlow.status, 404, "another organization's flow is 404, like /process/{id}/instances");
  t.equal(foreignFlow.body.error, 'PROCESS_NOT_FOUND');
  t.equal((await list(acme, '?processId=00000000-0000-4000-8000-000000000000')).body.error, 'PROCESS_NOT_FOUND');

  const anonymous = await h.call(null, { method: 'GET', url: '/process/tasks' });
  t.equal(anonymous.statusCode, 401);
  t.equal(anonymous.json().error, 'UNAUTHORIZED');
  const suspended = await h.key('viewer', 'acme', { status: 'SUSPENDED' });
  t.equal((await h.call(suspended, { method: 'GET', url: '/process/tasks' })).statusCode, 401);
});

const GUARDED_FLOW = `processId: AUTO
name: Guarded
nodes:
  start: { type: startEvent, next: ask }
  ask:
    type: inputNode
    inputType: form
    fields:
      - { name: approve, type: boolean, required: true }
      - { name: size, type: select, options: [S, M, L] }
    timeout: 2h
    next: done
  remind: { type: boundaryEvent, attachedTo: ask, event: timer, duration: 30m, cancelActivity: false, next: note }
  note: { type: task, next: noted }
  noted: { type: endEvent }
  done: { type: endEvent }
`;

t.test("a task's dueAt is the first of its timeout and its timer boundary events not yet fired", async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('operator', 'default');
  const flow = await h.publish(GUARDED_FLOW);
  const run = await h.start(flow, {});
  const due = async () =>
    ((await h.call(key, { method: 'GET', url: '/process/tasks' })).json() as Page).items[0]!.dueAt as string | null;
  const started = Date.parse(run.startTime);
  t.equal(await due(), new Date(started + 30 * 60_000).toISOString(), 'the boundary timer, before the timeout');
  h.advance(31 * 60_000);
  await h.waitFor(
    (e) => e.processInstanceId === run.processInstanceId && e.type === 'NODE_STARTED' && e.nodeId === 'remind',
  );
  t.equal(await due(), new Date(started + 2 * 3600_000).toISOString(), 'once it fired, the timeout');
});

t.test('a COMPLETE that does not fit is 422 with each problem by field in details.fields', async (t) => {
  const h = await apiHarness(t);
  const key = await h.key('operator', 'default');
  const flow = await h.publish(GUARDED_FLOW);
  const run = await h.start(flow, {});
  const res = await h.call(key, {
    method: 'POST',
    url: '/process/task',
    payload: { processInstanceId: run.processInstanceId, nodeId: 'ask', action: 'COMPLETE', data: { size: 'XL' } },
  });
  t.equal(res.statusCode, 422);
  t.equal(res.json().error, 'VALIDATION_ERROR');
  const details = res.json().details as { problems: string[]; fields: Record<string, string> };
  t.same(Object.keys(details.fields).sort(), ['approve', 'size'], 'one entry per field in trouble');
  t.equal(details.problems.length, 2, 'problems kept');
});

t.test('POST /process/task CLAIM: the others are refused TASK_CLAIMED, a developer may take it over', async (t) => {
  const h = await apiHarness(t);
  const ada = await h.key('operator', 'acme', { name: 'Ada' });
  const bob = await h.key('operator', 'acme', { name: 'Bob' });
  const dev = await h.key('developer', 'acme');
  const review = await h.publish(REVIEW_FLOW, { organization: 'acme' });
  const id = (await h.start(review, { what: 'the contract', who: 'ann' }, { organization: 'acme' })).processInstanceId;
  const post = (key: typeof ada, action: string, extra: Record<string, unknown> = {}) =>
    h.call(key, {
      method: 'POST',
      url: '/process/task',
      payload: { processInstanceId: id, nodeId: 'review', action, data: { ok: true }, ...extra },
    });
  const claimed = await post(ada, 'CLAIM');
  t.equal(claimed.statusCode, 200);
  t.same(claimed.json(), { processInstanceId: id, status: 'claimed' });
  const listed = (await h.call(ada, { method: 'GET', url: '/process/tasks' })).json() as Page;
  t.match(listed.items[0], { assignee: 'ann', claim: { by: `key:${ada.keyId}`, name: 'Ada' } }, 'the list names who');
  const refused = await post(bob, 'COMPLETE');
  t.equal(refused.statusCode, 409);
  t.match(refused.json(), { error: 'TASK_CLAIMED', details: { claimedBy: `key:${ada.keyId}` } });
  const notAllowed = await post(bob, 'COMPLETE', { takeOver: true });
  t.equal(notAllowed.statusCode, 403, 'an operator may not take it over');
  t.equal(notAllowed.json().error, 'FORBIDDEN');
  const view = (await h.call(ada, { method: 'GET', url: `/process/instance/${id}` })).json() as {
    nodes: Array<{ nodeId: string; claimedBy?: string; claimedAt?: string }>;
  };
  t.match(
    view.nodes.find((n) => n.nodeId === 'review'),
    { claimedBy: `key:${ada.keyId}`, claimedAt: /^\d{4}-/ },
    'the execution says who claimed it',
  );
  const taken = await post(dev, 'COMPLETE', { takeOver: true });
  t.equal(taken.statusCode, 200, 'a developer takes it over');
  t.equal(taken.json().status, 'resumed');
  const bad = await post(ada, 'ASSIGN');
  t.equal(bad.statusCode, 400, 'an unknown action');
});
