import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { WfxClient } from '../../src/client/client.js';
import { WfxError } from '../../src/shared/errors.js';
import { createWorker, JobError, type WorkerEvent } from '../../src/worker/index.js';
import { apiHarness } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { chargeFlow, registerDomain } from '../helpers/jobs.js';

/** A daemon's API on a port (the worker speaks HTTP), the billing domain, a worker key and the charge flow. */
async function setup(t: Test, extra = '') {
  const h = await apiHarness(t);
  await registerDomain(h);
  const key = await h.key('worker', 'default');
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const pid = await h.publish(chargeFlow(extra));
  return {
    h,
    url,
    apiKey: key.apiKey,
    pid,
    client: new WfxClient({ url, apiKey: key.apiKey, credentialSource: 'test' }),
  };
}

t.test('a JobError fails the node with its code; any other error is WORKER_ERROR, retried', async (t) => {
  const { h, url, apiKey, pid } = await setup(t, '    retry: { maxAttempts: 2, initialInterval: 0s }\n');
  const events: WorkerEvent[] = [];
  let calls = 0;
  const w = createWorker({
    url,
    apiKey,
    domain: 'billing',
    requestTimeout: 1000,
    handlers: {
      charge: (input) => {
        calls++;
        if (input.amount === 1) throw new JobError('CARD_DECLINED', 'declined', { retry: false });
        throw new Error('boom');
      },
    },
    onEvent: (e) => events.push(e),
  });
  t.teardown(() => w.stop({ now: true }));
  const declined = await h.start(pid, { amount: 1 });
  const broken = await h.start(pid, { amount: 2 });
  await eventually('both failed', async () => {
    const [a, b] = await Promise.all([h.get(declined.processInstanceId), h.get(broken.processInstanceId)]);
    return a.stateCd === 2 && b.stateCd === 2;
  });
  t.match((await h.get(declined.processInstanceId)).error, { code: 'CARD_DECLINED' });
  t.match((await h.get(broken.processInstanceId)).error, { code: 'WORKER_ERROR', message: /boom/ });
  t.equal(calls, 3, 'once for the business error, twice for the other');
  // The daemon changes the execution before its answer reaches the worker, which then tells.
  await eventually(
    'the worker told of its three failures',
    async () => events.filter((e) => e.type === 'failed').length >= 3,
  );
  t.match(
    events
      .filter((e) => e.type === 'failed')
      .map((e) => (e as { status: string }).status)
      .sort(),
    ['failed', 'failed', 'retrying'],
  );
});

t.test('stop() releases the jobs it cannot finish in time: available again, no attempt counted', async (t) => {
  const { h, url, apiKey, pid, client } = await setup(t);
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let aborted = false;
  const w = createWorker({
    url,
    apiKey,
    domain: 'billing',
    name: 'stopper',
    requestTimeout: 1000,
    stopTimeout: 0,
    handlers: {
      charge: (_input, job) =>
        new Promise((resolve) => {
          started();
          job.signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ receipt: 'too late' });
          });
        }),
    },
  });
  const inst = await h.start(pid, { amount: 5 });
  await running;
  await w.stop();
  t.ok(aborted, "the handler's signal aborted");
  const jobs = (await h.engine.jobs.list({ organization: 'default', limit: 10 })).items;
  // Not `activations`: the daemon may notice the aborted long poll only after the release,
  // hand it the job again and, finding its worker gone, give it back (a second activation).
  t.match(jobs, [{ processInstanceId: inst.processInstanceId, state: 'waiting', worker: null, attempt: 1 }]);
  const again = await client.jobs.activate({ domain: 'billing', worker: 'next', requestTimeout: 0 });
  t.equal(again.jobs.length, 1, 'the next worker gets it at once');
  t.equal((await h.get(inst.processInstanceId)).stateCd, 0, 'not completed by the stopped worker');
});

/** A daemon's API as `setup` makes it, counting the requests of each route. */
async function counting(t: Test) {
  const routes = new Map<string, number>();
  const h = await apiHarness(t, {
    accessLog: (e) => routes.set(`${e.method} ${e.route}`, (routes.get(`${e.method} ${e.route}`) ?? 0) + 1),
  });
  await registerDomain(h);
  const key = await h.key('worker', 'default');
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const pid = await h.publish(chargeFlow());
  return { h, url, apiKey: key.apiKey, pid, routes };
}

/** A worker of `concurrency` slots whose handlers all finish together, once `n` have begun; `client` its own. */
function gatedWorker(url: string, apiKey: string, n: number, client?: WfxClient) {
  const events: WorkerEvent[] = [];
  let begun = 0;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const w = createWorker({
    url,
    apiKey,
    domain: 'billing',
    concurrency: n,
    requestTimeout: 1000,
    ...(client && { client }),
    handlers: {
      charge: async (input) => {
        if (++begun === n) open();
        await gate;
        // Amount 13's receipt breaks the output schema: refused within the batch.
        return { receipt: input.amount === 13 ? 13 : `r-${String(input.amount)}` };
      },
    },
    onEvent: (e) => events.push(e),
  });
  return { w, events };
}

t.test('jobs that finish together are completed by one request; one refused is told as failed', async (t) => {
  const { h, url, apiKey, pid, routes } = await counting(t);
  const ids: string[] = [];
  for (let amount = 1; amount <= 20; amount++) ids.push((await h.start(pid, { amount })).processInstanceId);
  const { w, events } = gatedWorker(url, apiKey, 20);
  t.teardown(() => w.stop({ now: true }));
  await eventually(
    'every job told',
    async () => events.filter((e) => e.type === 'completed' || e.type === 'failed').length === 20,
  );
  t.equal(events.filter((e) => e.type === 'completed').length, 19);
  t.match(
    events.find((e) => e.type === 'failed'),
    { code: 'JOB_OUTPUT_INVALID', status: 'retrying' },
  );
  t.equal(routes.get('POST /jobs/complete'), 1, 'the twenty completions went in one request');
  t.notOk(routes.has('POST /jobs/:key/complete'), 'none by its own');
  const states = await Promise.all(ids.map(async (id) => (await h.get(id)).stateCd));
  t.equal(states.filter((s) => s === 1).length, 19, 'nineteen executions ran on to their end');
});

t.test('a daemon without POST /jobs/complete is sent each completion by its own request', async (t) => {
  const { h, url, apiKey, pid, routes } = await counting(t);
  const ids: string[] = [];
  for (let amount = 1; amount <= 4; amount++) ids.push((await h.start(pid, { amount })).processInstanceId);
  // An older daemon: the route is not there.
  const client = new WfxClient({ url, apiKey, credentialSource: 'test' });
  const upload = client.http.upload.bind(client.http);
  let refused = 0;
  client.http.upload = (path, content, type) => {
    if (path !== '/jobs/complete') return upload(path, content, type);
    refused++;
    return Promise.reject(new WfxError('NOT_FOUND', 'no route POST /jobs/complete'));
  };
  const { w, events } = gatedWorker(url, apiKey, 4, client);
  t.teardown(() => w.stop({ now: true }));
  await eventually('every job completed', async () => events.filter((e) => e.type === 'completed').length === 4);
  t.equal(refused, 1, 'asked once, then never again');
  t.equal(routes.get('POST /jobs/:key/complete'), 4);
  const states = await Promise.all(ids.map(async (id) => (await h.get(id)).stateCd));
  t.same(states, [1, 1, 1, 1]);
});
