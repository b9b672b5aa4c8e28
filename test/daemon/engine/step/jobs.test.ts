import t from 'tap';
import { jobKey } from '../../../../src/daemon/state/job-queues.js';
import { STATE, STATUS } from '../../../../src/daemon/state/state.js';
import { chargeFlow } from '../../../helpers/jobs.js';
import { MemoryStep, typesOf } from '../../../helpers/step.js';

async function charging(m: MemoryStep, extra = ''): Promise<{ id: string; key: string }> {
  m.registerBilling();
  const pid = await m.publish(chargeFlow(extra));
  const id = m.start(pid, { amount: 10 }).answer.processInstanceId;
  return { id, key: jobKey(id, m.node(id, 'charge').id) };
}

const activate = (m: MemoryStep, worker = 'w1') =>
  m.run({
    kind: 'job.activate',
    req: { organization: 'default', domain: 'billing', worker, maxJobs: 5, lockDurationMs: 30_000 },
    actions: ['charge'],
  });

t.test('a domainTask waits as a job; an activation locks it to the worker', async (t) => {
  const m = new MemoryStep();
  const { id, key } = await charging(m);
  t.equal(m.node(id, 'charge').wait?.kind, 'job');
  const r = activate(m);
  t.same(typesOf(r.records), ['job.locked']);
  t.equal(r.answer.length, 1);
  t.equal(r.answer[0]?.key, key);
  t.same(r.answer[0]?.input, { amount: 10, currency: 'EUR' });
  t.same(activate(m, 'w2').answer, [], 'a locked job is not activated again');
});

t.test('a completion completes the node with the output', async (t) => {
  const m = new MemoryStep();
  const { id, key } = await charging(m, '    resultVariable: paid\n');
  activate(m);
  const r = m.run({
    kind: 'job.complete',
    req: { organization: 'default', key, worker: 'w1', output: { receipt: 'r1' } },
  });
  t.equal(r.answer, null);
  t.same(m.instance(id).variables.paid, { receipt: 'r1' });
  t.equal(m.instance(id).stateCd, STATE.COMPLETED);
});

t.test("output the action's schema refuses is a failed attempt, answered with the problem", async (t) => {
  const m = new MemoryStep();
  const { id, key } = await charging(m);
  activate(m);
  const r = m.run({ kind: 'job.complete', req: { organization: 'default', key, worker: 'w1', output: { no: 1 } } });
  t.ok(r.answer?.problem);
  t.equal(r.answer?.answer.status, 'retrying');
  t.equal(m.node(id, 'charge').statusCd, STATUS.WAITING, 'it waits for the next attempt');
});

t.test('a failure retries while attempts are left; retry false fails the node', async (t) => {
  const m = new MemoryStep();
  const { id, key } = await charging(m);
  activate(m);
  const r = m.run({ kind: 'job.fail', req: { organization: 'default', key, worker: 'w1', errorCode: 'CARD' } });
  t.equal(r.answer.status, 'retrying');
  m.ms += 60_000;
  activate(m);
  const last = m.run({
    kind: 'job.fail',
    req: { organization: 'default', key, worker: 'w1', errorCode: 'CARD', retry: false },
  });
  t.same(last.answer, { key, status: 'failed', retriesLeft: 0 });
  t.equal(m.instance(id).stateCd, STATE.FAILED);
  t.equal(m.instance(id).error?.code, 'CARD');
});

t.test('a heartbeat extends the lock; a release gives the job back', async (t) => {
  const m = new MemoryStep();
  const { key } = await charging(m);
  activate(m);
  m.ms += 10_000;
  const h = m.run({ kind: 'job.heartbeat', req: { organization: 'default', key, worker: 'w1' } });
  t.same(h.answer, { key, status: 'locked', lockedUntil: new Date(m.ms + 30_000).toISOString() });
  const r = m.run({ kind: 'job.release', req: { organization: 'default', key, worker: 'w1' } });
  t.same(r.answer, { key, status: 'released' });
  t.equal(activate(m, 'w2').answer.length, 1, 'another worker takes it at once');
});

t.test('calls about a job not held are refused before anything is written', async (t) => {
  const m = new MemoryStep();
  const { key } = await charging(m);
  t.throws(() => m.run({ kind: 'job.release', req: { organization: 'default', key, worker: 'w1' } }), {
    code: 'JOB_LOCK_LOST',
  });
  activate(m);
  t.throws(() => m.run({ kind: 'job.heartbeat', req: { organization: 'default', key, worker: 'w2' } }), {
    code: 'JOB_LOCK_LOST',
  });
  t.throws(() => m.run({ kind: 'job.fail', req: { organization: 'default', key: 'nope', worker: 'w1' } }), {
    code: 'JOB_NOT_FOUND',
  });
  t.throws(() => m.run({ kind: 'job.fail', req: { organization: 'other', key, worker: 'w1' } }), {
    code: 'JOB_NOT_FOUND',
  });
  m.ms += 31_000;
  t.throws(() => m.run({ kind: 'job.fail', req: { organization: 'default', key, worker: 'w1' } }), {
    code: 'JOB_LOCK_LOST',
  });
});
