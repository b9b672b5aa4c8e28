import t from 'tap';
import { apiHarness } from '../../../helpers/api.js';
import { BILLING } from '../../../helpers/jobs.js';

/*
 * `{secret.NAME}` in a domainTask's input: kept as a stand-in with the job, filled in with the
 * value only in the answer that gives the job to its worker, taken back out of what the worker
 * sends (an echo becomes `[secret NAME]`); a secret without a value fails the node at activation.
 */

const FLOW = `processId: AUTO
name: Charge with a key
nodes:
  start: { type: startEvent, next: charge }
  charge:
    type: domainTask
    domain: billing
    action: charge
    input: { amount: "{amount}", currency: "{secret.BILLING_KEY}" }
    next: done
  done: { type: endEvent }
`;

t.test('a job gets its secret from the jobs API, and nothing keeps it', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const worker = await h.key('worker', 'default');
  t.equal(
    (await h.call(admin, { method: 'PUT', url: '/admin/domains/billing', payload: { actions: BILLING.actions } }))
      .statusCode,
    200,
  );
  const value = 'bk_live_5f0c1e2d3a4b';
  await h.call(admin, { method: 'PUT', url: '/admin/secrets/values/BILLING_KEY', payload: { value } });
  const pid = await h.publish(FLOW);
  const id = (await h.start(pid, { amount: 5 })).processInstanceId;
  const activate = () =>
    h.call(worker, {
      method: 'POST',
      url: '/jobs/activate',
      payload: { domain: 'billing', worker: 'w1', maxJobs: 5, requestTimeout: 0 },
    });
  const got = (await activate()).json<{ jobs: Array<{ key: string; input: Record<string, unknown> }> }>();
  t.same(got.jobs[0]?.input, { amount: 5, currency: value }, 'the worker gets the value');
  const view = await h.call(admin, { method: 'GET', url: `/process/instance/${id}` });
  t.equal(view.statusCode, 200);
  t.match(view.body, /"currency":"wfxsecret[0-9a-f]+"/, 'the execution shows a stand-in, not the value');
  t.notMatch(view.body, value);
  const done = await h.call(worker, {
    method: 'POST',
    url: `/jobs/${got.jobs[0]!.key}/complete`,
    payload: { worker: 'w1', output: { receipt: `paid with ${value}` } },
  });
  t.equal(done.statusCode, 200, done.body);
  const ended = (await h.call(admin, { method: 'GET', url: `/process/instance/${id}` })).json<{
    data: Record<string, unknown>;
  }>();
  t.same(ended.data.charge, { receipt: 'paid with [secret BILLING_KEY]' }, 'an echo is taken back out');
  t.notOk(JSON.stringify(h.store.state).includes(value), 'the state holds no value');

  const other = (await h.start(pid, { amount: 6 })).processInstanceId;
  await h.call(admin, { method: 'DELETE', url: '/admin/secrets/values/BILLING_KEY' });
  t.same((await activate()).json(), { jobs: [] }, 'no job goes out without its secret');
  const failed = (await h.call(admin, { method: 'GET', url: `/process/instance/${other}` })).json<{
    state: string;
    error?: { code: string };
  }>();
  t.match(failed, { state: 'FAILED' });
  t.match(JSON.stringify(failed), /SECRET_NOT_FOUND/);
});

t.test('a secret elsewhere in a domainTask is refused at publish', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  await h.call(admin, { method: 'PUT', url: '/admin/domains/billing', payload: { actions: BILLING.actions } });
  const refused = await h.call(admin, {
    method: 'POST',
    url: '/admin/flows',
    payload: {
      source: FLOW.replace('AUTO', '4b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e').replace(
        'next: done\n  done',
        'resultVariable: "{secret.BILLING_KEY}"\n    next: done\n  done',
      ),
    },
  });
  t.equal(refused.statusCode, 400);
  t.match(refused.json(), {
    details: { problems: [{ code: 'SECRET_NOT_ALLOWED', nodeId: 'charge', property: 'resultVariable' }] },
  });
});
