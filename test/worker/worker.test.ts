import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { WfxClient } from '../../src/client/client.js';
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
