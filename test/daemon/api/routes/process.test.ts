import t from 'tap';
import { apiHarness } from '../../../helpers/api.js';

/** A flow with inputs that waits for a person, so that its executions stay live to be looked at. */
const ORDER = `processId: AUTO
name: Order
inputs:
  type: object
  required: [orderId]
  additionalProperties: false
  properties:
    orderId: { type: string, maxLength: 20 }
    notify: { type: boolean, default: true }
    lines:
      type: array
      items: { type: object, required: [sku], properties: { sku: { type: string } } }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test(
  'a start whose data does not match the inputs is 400 VALIDATION_ERROR naming the field; nothing starts',
  async (t) => {
    const h = await apiHarness(t);
    const system = await h.key('admin', null);
    const operator = await h.key('operator', 'default');
    const pid = await h.publish(ORDER);
    const cases: Array<[string, Record<string, unknown> | undefined, string]> = [
      ['no data at all', undefined, 'data.orderId'],
      ['a required input missing', { notify: false }, 'data.orderId'],
      ['an input the flow does not declare', { orderId: 'A1', orderid: 'A1' }, 'data.orderid'],
      ['a wrong type', { orderId: 1001 }, 'data.orderId'],
      ['deep in an array', { orderId: 'A1', lines: [{ sku: 'a' }, {}] }, 'data.lines[1].sku'],
    ];
    for (const [name, data, path] of cases) {
      for (const [key, url] of [
        [system, '/process/start'],
        [operator, '/process/exec'],
      ] as const) {
        const res = await h.call(key, {
          method: 'POST',
          url,
          payload: { processId: pid, ...(data !== undefined && { data }) },
        });
        t.equal(res.statusCode, 400, `${url}: ${name}`);
        t.match(res.json(), {
          error: 'VALIDATION_ERROR',
          message: new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')} .*the inputs of flow Order, version 1`),
          details: { path, processId: pid, version: '1' },
        });
      }
    }
    const listed = await h.call(operator, { method: 'GET', url: `/process/${pid}/instances` });
    t.equal(listed.statusCode, 200);
    t.same(listed.json().items, [], 'no execution was started');
    t.same(h.events, [], 'no lifecycle event either');
  },
);

t.test('a start that matches gets the declared defaults in its variables', async (t) => {
  const h = await apiHarness(t);
  const operator = await h.key('operator', 'default');
  const pid = await h.publish(ORDER);
  const started = await h.call(operator, {
    method: 'POST',
    url: '/process/exec',
    payload: { processId: pid, data: { orderId: 'A1' } },
  });
  t.equal(started.statusCode, 200);
  const id = started.json().processInstanceId as string;
  const inst = await h.call(operator, { method: 'GET', url: `/process/instance/${id}` });
  t.same(inst.json().data, { orderId: 'A1', notify: true }, 'notify filled in from its default');
  const explicit = await h.call(operator, {
    method: 'POST',
    url: '/process/exec',
    payload: { processId: pid, data: { orderId: 'A2', notify: false } },
  });
  const second = await h.call(operator, {
    method: 'GET',
    url: `/process/instance/${explicit.json().processInstanceId as string}`,
  });
  t.same(second.json().data, { orderId: 'A2', notify: false }, 'a value given wins over the default');

  // Scripts read `state` by name beside the numeric stateCd, in the view and in lists.
  t.match(second.json(), { stateCd: 0, state: 'RUNNING' });
  await h.call(operator, { method: 'POST', url: `/process/instance/${id}/cancel` });
  t.match((await h.call(operator, { method: 'GET', url: `/process/instance/${id}` })).json(), {
    stateCd: 3,
    state: 'CANCELLED',
  });
  const listed = (await h.call(operator, { method: 'GET', url: `/process/${pid}/instances` })).json();
  t.same(listed.items.map((i: { stateCd: number; state: string }) => [i.stateCd, i.state]).sort(), [
    [0, 'RUNNING'],
    [3, 'CANCELLED'],
  ]);
});

t.test('a version names its own inputs: a start of an older version is checked against that one', async (t) => {
  const h = await apiHarness(t);
  const operator = await h.key('operator', 'default');
  const pid = await h.publish(ORDER);
  await h.publish(ORDER.replace('processId: AUTO', `processId: ${pid}`).replace('maxLength: 20', 'maxLength: 3'));
  const start = (version: string) =>
    h.call(operator, {
      method: 'POST',
      url: `/process/exec?versionNumber=${version}`,
      payload: { processId: pid, data: { orderId: 'A1001' } },
    });
  t.equal((await start('1')).statusCode, 200, 'version 1 takes an id of 20 characters at most');
  const v2 = await start('2');
  t.equal(v2.statusCode, 400);
  t.match(v2.json(), { error: 'VALIDATION_ERROR', details: { path: 'data.orderId', version: '2' } });
});

t.test('GET /process/list and GET /admin/flows name a flow by the version that runs, with its triggers', async (t) => {
  const h = await apiHarness(t);
  const viewer = await h.key('viewer', 'default');
  const flow = (name: string, triggers: string) => `processId: 7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6
name: ${name}
${triggers}nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;
  await h.publish(flow('Invoice run', 'triggers:\n  - { type: on-demand, description: at month end }\n'));
  await h.publish(flow('Invoice run, reworked', 'triggers:\n  - { type: schedule, cron: "0 6 1 * *" }\n'), {
    environment: 'DEVELOPMENT',
  });
  const runs = { processId: '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6', name: 'Invoice run', triggers: ['on-demand'] };
  const items = (await h.call(viewer, { method: 'GET', url: '/process/list' })).json().items;
  t.match(items, [{ ...runs, versions: ['1', '2'], activeVersions: { PRODUCTION: '1', DEVELOPMENT: '2' } }]);
  const admin = (await h.call(viewer, { method: 'GET', url: '/admin/flows' })).json().items;
  t.match(admin, [{ ...runs, active: { PRODUCTION: '1', DEVELOPMENT: '2' } }], 'the same name and triggers');
  const one = (await h.call(viewer, { method: 'GET', url: `/admin/flows/${runs.processId}` })).json();
  t.match(one, { ...runs, version: '2', definition: { name: 'Invoice run, reworked' } }, 'and for one flow');
});

t.test('a flow without triggers lists triggers: []', async (t) => {
  const h = await apiHarness(t);
  const viewer = await h.key('viewer', 'default');
  await h.publish(`processId: 8e2f3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a5b
name: Draft
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`);
  const admin = (await h.call(viewer, { method: 'GET', url: '/admin/flows' })).json().items;
  t.match(admin, [{ name: 'Draft', triggers: [] }]);
});
