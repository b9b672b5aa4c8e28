import t from 'tap';
import { apiHarness } from '../../../helpers/api.js';
import { ordersFlow } from '../../../helpers/engine.js';

t.test('GET /process/failures: an organization sees its own; a system key every one, or one it names', async (t) => {
  const h = await apiHarness(t);
  const viewer = await h.key('viewer', 'default');
  const operator = await h.key('operator', 'default');
  const theirs = await h.key('operator', 'other');
  const system = await h.key('admin', null);
  const mine = await h.publish(ordersFlow('AUTO', 'Orders'));
  const other = await h.publish(ordersFlow('AUTO', 'Theirs'), { organization: 'other' });
  const start = async (key: typeof operator, processId: string, mode: string) => {
    h.clock.advance(1000);
    const res = await h.call(key, { method: 'POST', url: '/process/exec', payload: { processId, data: { mode } } });
    return res.json().processInstanceId as string;
  };
  const failed = [await start(operator, mine, 'fail'), await start(operator, mine, 'fail')];
  await start(operator, mine, 'ok');
  await start(theirs, other, 'fail');
  const get = async (key: typeof operator | null, query = '') =>
    h.call(key, { method: 'GET', url: `/process/failures${query}` });

  const res = await get(viewer);
  t.equal(res.statusCode, 200, 'WORKFLOW_READ is enough');
  t.match(res.json(), {
    groups: [
      {
        processId: mine,
        processName: 'Orders',
        errorCode: 'NO_BRANCH_MATCHED',
        nodeId: 'route',
        count: 2,
        newest: { processInstanceId: failed[1], processVersion: '1', message: String, at: String },
      },
    ],
    total: 2,
    groupCount: 1,
  });
  t.equal(res.json().groups.length, 1, "none of the other organization's");
  t.equal((await get(viewer, '?organization=other')).json().error, 'FORBIDDEN', 'naming another organization');
  t.equal((await get(viewer, '?organization=default')).json().total, 2, 'naming its own is naming none');
  t.equal((await get(system)).json().total, 3, "a system key: every organization's");
  t.match((await get(system, '?organization=other')).json(), { total: 1, groups: [{ processId: other }] });
  t.equal((await get(viewer, '?limit=0')).json().error, 'VALIDATION_ERROR');
  t.equal((await get(viewer, '?sort=oldest')).json().error, 'VALIDATION_ERROR');
  t.equal((await get(null)).statusCode, 401);

  // The execution says how many times the node it failed at ran.
  const view = (await h.call(viewer, { method: 'GET', url: `/process/instance/${failed[0]}` })).json();
  t.same(view.data.error, {
    code: 'NO_BRANCH_MATCHED',
    message: view.data.error.message,
    nodeId: 'route',
    attempts: 1,
  });
});
