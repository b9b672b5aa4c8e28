import t from 'tap';
import type { Role } from '../../../src/daemon/state/state.js';
import { apiHarness, type TestKey } from '../../helpers/api.js';
import { MATRIX_DOMAIN, MATRIX_FLOW, runMatrix, type Actor } from '../../helpers/permission-matrix.js';

t.test('permission matrix (in-process): each role x each endpoint x own org / other org / system key', async (t) => {
  const h = await apiHarness(t);
  const keys = {} as Record<Actor, TestKey>;
  for (const role of ['viewer', 'operator', 'developer', 'admin'] as Role[])
    keys[role as Actor] = await h.key(role, 'acme');
  keys.otherAdmin = await h.key('admin', 'globex');
  keys.systemAdmin = await h.key('admin', null);
  keys.systemViewer = await h.key('viewer', null);
  keys.worker = await h.key('worker', 'acme');
  const processId = await h.publish(MATRIX_FLOW, { organization: 'acme' });
  const domain = await h.call(keys.developer, { method: 'PUT', url: '/admin/domains/billing', payload: MATRIX_DOMAIN });
  t.equal(domain.statusCode, 200, 'the domain is registered');
  const failures = await runMatrix(
    {
      processId,
      definition: h.store.state.flows[processId]!.versions['1']!.definition,
      waiting: async () => (await h.engine.start({ processId, organization: 'acme' })).processInstanceId,
    },
    async (actor, req) => {
      const res = await h.call(actor ? keys[actor] : null, req);
      return { status: res.statusCode, body: res.json() };
    },
  );
  t.same(failures, [], 'every cell as expected');
});

t.test("another organization's flows and executions are 404, never 403; lists leave them out", async (t) => {
  const h = await apiHarness(t);
  const acme = await h.key('admin', 'acme');
  const globex = await h.key('admin', 'globex');
  const pid = await h.publish(MATRIX_FLOW, { organization: 'acme' });
  const inst = await h.engine.start({ processId: pid, organization: 'acme' });
  for (const url of [
    `/process/instance/${inst.processInstanceId}`,
    `/process/instance/${inst.processInstanceId}/logs`,
    `/process/${pid}/instances`,
    `/admin/flows/${pid}`,
  ]) {
    const res = await h.call(globex, { method: 'GET', url });
    t.equal(res.statusCode, 404, url);
  }
  t.same((await h.call(globex, { method: 'GET', url: '/process/list' })).json().items, []);
  t.equal((await h.call(acme, { method: 'GET', url: '/process/list' })).json().items.length, 1);
});
