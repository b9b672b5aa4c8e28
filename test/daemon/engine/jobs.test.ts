import t, { type Test } from 'tap';
import { isWfxError } from '../../../src/shared/errors.js';
import { STATE } from '../../../src/daemon/state/state.js';
import { engineHarness, trail, type EngineHarness } from '../../helpers/engine.js';
import { chargeFlow, registerDomain } from '../../helpers/jobs.js';
import { codeOf } from '../../helpers/error-code.js';

const activate = (h: EngineHarness, worker: string, extra: { maxJobs?: number; lockDurationMs?: number } = {}) =>
  h.engine.jobs.activate({
    organization: 'default',
    domain: 'billing',
    worker,
    maxJobs: extra.maxJobs ?? 10,
    lockDurationMs: extra.lockDurationMs ?? 10_000,
  });

async function setup(t: Test, extra = '') {
  const h = await engineHarness(t);
  await registerDomain(h);
  const pid = await h.publish(chargeFlow(extra));
  return { h, pid };
}

t.test('a job waits for a worker, is locked to it, and its completion moves the flow on', async (t) => {
  const { h, pid } = await setup(t);
  const inst = await h.start(pid, { amount: 42 });
  t.same(trail(inst), ['start:2', 'charge:1']);
  const wait = inst.nodes.n2!.wait;
  t.match(wait, {
    kind: 'job',
    domain: 'billing',
    action: 'charge',
    input: { amount: 42, currency: 'EUR' },
    attempt: 1,
  });
  const [job, ...more] = await activate(h, 'w1');
  t.same(more, [], 'one job');
  t.match(job, { domain: 'billing', action: 'charge', input: { amount: 42 }, attempt: 1, retriesLeft: 2 });
  t.same(await activate(h, 'w2'), [], 'a locked job is nobody else’s');
  t.same(
    await h.engine.jobs.complete({ organization: 'default', key: job!.key, worker: 'w1', output: { receipt: 'r-1' } }),
    {
      key: job!.key,
      status: 'completed',
    },
  );
  const done = await h.get(inst.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.same(done.variables.charge, { receipt: 'r-1' });
  t.equal(
    await codeOf(
      h.engine.jobs.complete({ organization: 'default', key: job!.key, worker: 'w1', output: { receipt: 'r-1' } }),
    ),
    'JOB_NOT_FOUND',
    'never completed twice',
  );
});

t.test('a lapsed lock makes the job available again; the late completion is refused', async (t) => {
  const { h, pid } = await setup(t);
  const inst = await h.start(pid, { amount: 1 });
  const [first] = await activate(h, 'w1', { lockDurationMs: 1000 });
  h.clock.advance(999);
  t.same(await activate(h, 'w2'), [], 'held until its expiry');
  t.equal(h.engine.jobs.nextAvailableAt('default', 'billing', undefined), Date.parse(first!.lockedUntil));
  h.clock.advance(1);
  const [second] = await activate(h, 'w2');
  t.equal(second?.key, first!.key, 'the same job, to the next worker');
  t.equal(
    await codeOf(h.engine.jobs.complete({ organization: 'default', key: first!.key, worker: 'w1', output: {} })),
    'JOB_LOCK_LOST',
  );
  await h.engine.jobs.complete({ organization: 'default', key: second!.key, worker: 'w2', output: { receipt: 'x' } });
  const done = await h.get(inst.processInstanceId);
  t.equal(done.stateCd, STATE.COMPLETED);
  t.match(
    (await h.engine.getInstance({ organization: null }, inst.processInstanceId))!.logs.join('\n'),
    /the lock of w1 lapsed/,
  );
});

t.test('a lapsed lock nobody took again still refuses its late worker', async (t) => {
  const { h, pid } = await setup(t);
  await h.start(pid, { amount: 1 });
  const [job] = await activate(h, 'w1', { lockDurationMs: 1000 });
  h.clock.advance(1000);
  t.equal(
    await codeOf(h.engine.jobs.heartbeat({ organization: 'default', key: job!.key, worker: 'w1' })),
    'JOB_LOCK_LOST',
  );
  t.equal(
    await codeOf(h.engine.jobs.complete({ organization: 'default', key: job!.key, worker: 'w1', output: {} })),
    'JOB_LOCK_LOST',
  );
});

t.test('failed attempts wait out the backoff; the last fails the node with the worker’s code', async (t) => {
  const { h, pid } = await setup(t, '    retry: { maxAttempts: 2, initialInterval: 5s }\n');
  const inst = await h.start(pid, { amount: 1 });
  const [job] = await activate(h, 'w1');
  const retrying = await h.engine.jobs.fail({
    organization: 'default',
    key: job!.key,
    worker: 'w1',
    errorCode: 'CARD_DECLINED',
    errorMessage: 'declined by the bank',
  });
  t.match(retrying, { status: 'retrying', retriesLeft: 0, notBefore: new Date(h.clock.ms + 5000).toISOString() });
  t.same(await activate(h, 'w1'), [], 'not before the backoff');
  h.clock.advance(5000);
  const [again] = await activate(h, 'w2');
  t.match(again, { key: job!.key, attempt: 2, retriesLeft: 0 });
  t.same(
    await h.engine.jobs.fail({
      organization: 'default',
      key: again!.key,
      worker: 'w2',
      errorCode: 'CARD_DECLINED',
      errorMessage: 'again',
    }),
    { key: job!.key, status: 'failed', retriesLeft: 0 },
  );
  const failed = await h.get(inst.processInstanceId);
  t.equal(failed.stateCd, STATE.FAILED);
  t.match(failed.error, { code: 'CARD_DECLINED', nodeId: 'charge' });
  t.equal(
    Object.values(failed.nodes).find((n) => n.nodeId === 'charge')?.attempts,
    2,
    'the node instance records the attempts it made',
  );
});

t.test('a failure not to be retried fails at once; without a code it is JOB_FAILED', async (t) => {
  const { h, pid } = await setup(t);
  const inst = await h.start(pid, { amount: 1 });
  const [job] = await activate(h, 'w1');
  t.match(await h.engine.jobs.fail({ organization: 'default', key: job!.key, worker: 'w1', retry: false }), {
    status: 'failed',
  });
  t.match((await h.get(inst.processInstanceId)).error, { code: 'JOB_FAILED' });
});

t.test('output that does not match the schema is a failed attempt (JOB_OUTPUT_INVALID)', async (t) => {
  const { h, pid } = await setup(t, '    retry: { maxAttempts: 2, initialInterval: 0s }\n');
  const inst = await h.start(pid, { amount: 1 });
  const [job] = await activate(h, 'w1');
  const err = await h.engine.jobs
    .complete({ organization: 'default', key: job!.key, worker: 'w1', output: { receipt: 7 } })
    .catch((e: unknown) => e);
  t.ok(isWfxError(err, 'JOB_OUTPUT_INVALID'));
  t.match((err as { details: unknown }).details, { status: 'retrying', retriesLeft: 0, problem: /receipt/ });
  const [again] = await activate(h, 'w1');
  t.equal(again?.attempt, 2, 'retried at once (interval 0)');
  await h.engine.jobs
    .complete({ organization: 'default', key: again!.key, worker: 'w1', output: {} })
    .catch(() => undefined);
  t.match((await h.get(inst.processInstanceId)).error, { code: 'JOB_OUTPUT_INVALID' });
});

t.test('heartbeats extend only the holder’s lock; a release gives the job back without an attempt', async (t) => {
  const { h, pid } = await setup(t);
  await h.start(pid, { amount: 1 });
  const [job] = await activate(h, 'w1', { lockDurationMs: 1000 });
  h.clock.advance(800);
  t.match(await h.engine.jobs.heartbeat({ organization: 'default', key: job!.key, worker: 'w1' }), {
    status: 'locked',
    lockedUntil: new Date(h.clock.ms + 1000).toISOString(),
  });
  t.equal(
    await codeOf(h.engine.jobs.heartbeat({ organization: 'default', key: job!.key, worker: 'w2' })),
    'JOB_LOCK_LOST',
  );
  t.equal(
    await codeOf(h.engine.jobs.heartbeat({ organization: 'acme', key: job!.key, worker: 'w1' })),
    'JOB_NOT_FOUND',
  );
  h.clock.advance(800);
  t.same(await activate(h, 'w2'), [], 'still held after the first expiry');
  await h.engine.jobs.release({ organization: 'default', key: job!.key, worker: 'w1' });
  const [again] = await activate(h, 'w2');
  t.match(again, { attempt: 1 }, 'no attempt counted');
});

t.test('the node’s timeout bounds the whole job (JOB_TIMEOUT); a cancelled job is not found', async (t) => {
  const { h, pid } = await setup(t, '    timeout: 1m\n');
  const inst = await h.start(pid, { amount: 1 });
  await activate(h, 'w1', { lockDurationMs: 120_000 });
  h.advance(60_000);
  await h.waitFor((e) => e.type === 'PROCESS_FAILED' && e.processInstanceId === inst.processInstanceId);
  t.match((await h.get(inst.processInstanceId)).error, { code: 'JOB_TIMEOUT', message: /locked by w1/ });

  const other = await h.start(pid, { amount: 2 });
  const [job] = await activate(h, 'w1');
  await h.engine.cancel({ organization: 'default', processInstanceId: other.processInstanceId });
  t.equal(
    await codeOf(h.engine.jobs.complete({ organization: 'default', key: job!.key, worker: 'w1', output: {} })),
    'JOB_NOT_FOUND',
  );
  t.same((await h.engine.jobs.list({ organization: null, limit: 10 })).items, [], 'no job left');
});

t.test('input that does not match the action, or an unknown domain, fails the node at once', async (t) => {
  const { h, pid } = await setup(t);
  const inst = await h.start(pid, { amount: 'lots' });
  t.match((await h.get(inst.processInstanceId)).error, { code: 'JOB_INPUT_INVALID', message: /amount/ });
  await h.store.commit({ type: 'domain.deleted', organization: 'default', name: 'billing' });
  const gone = await h.start(pid, { amount: 1 });
  t.match((await h.get(gone.processInstanceId)).error, { code: 'DOMAIN_NOT_FOUND' });
});

t.test('after a restart a held lock is honoured until its expiry, then lapses', async (t) => {
  const { h, pid } = await setup(t);
  const a = await h.start(pid, { amount: 1 });
  const b = await h.start(pid, { amount: 2 });
  const jobs = await activate(h, 'w1', { lockDurationMs: 5000 });
  t.equal(jobs.length, 2);
  const h2 = await h.restart();
  t.same(await activate(h2, 'w2'), [], 'both locks held after the restart');
  t.same(
    (await h2.engine.jobs.list({ organization: 'default', limit: 10 })).items.map((j) => [j.state, j.worker]),
    [
      ['locked', 'w1'],
      ['locked', 'w1'],
    ],
  );
  await h2.engine.jobs.complete({ organization: 'default', key: jobs[0]!.key, worker: 'w1', output: { receipt: 'a' } });
  h2.clock.advance(5000);
  const [lapsed] = await activate(h2, 'w2');
  t.equal(lapsed?.key, jobs[1]!.key, 'the other lapsed by the clock alone');
  await h2.engine.jobs.complete({ organization: 'default', key: lapsed!.key, worker: 'w2', output: { receipt: 'b' } });
  t.equal((await h2.get(a.processInstanceId)).stateCd, STATE.COMPLETED);
  t.equal((await h2.get(b.processInstanceId)).stateCd, STATE.COMPLETED);
});

t.test(
  'cold jobs: listed, activated and timed from the index and summaries, reading back only what is taken',
  async (t) => {
    const h = await engineHarness(t, undefined, undefined, { cold: true });
    await registerDomain(h);
    const pid = await h.publish(chargeFlow());
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      ids.push((await h.start(pid, { amount: i })).processInstanceId);
      h.clock.advance(1000);
    }
    const cold = h.cold!;
    await h.rest();
    t.equal(cold.size, 3, 'every execution cold');
    const read = cold.loads;

    const page = await h.engine.jobs.list({ organization: 'default', limit: 2 });
    t.same(
      page.items.map((j) => j.processInstanceId),
      ids.slice(0, 2),
      'the two oldest',
    );
    t.equal(page.more, true);
    t.equal(cold.loads - read, 2, 'a page reads back its own executions only');

    await h.rest();
    const jobs = await activate(h, 'w1', { maxJobs: 2, lockDurationMs: 5000 });
    t.same(
      jobs.map((j) => j.processInstanceId),
      ids.slice(0, 2),
      'an activation takes the oldest cold jobs',
    );
    t.equal(cold.loads - read, 4, 'and reads back only those it locks');

    await h.rest();
    t.equal(cold.size, 3);
    const reads = cold.loads;
    t.equal(
      h.engine.jobs.nextAvailableAt('default', 'billing', undefined),
      Date.parse(jobs[0]!.lockedUntil),
      'a cold lock’s expiry, from its summary',
    );
    const [third, ...none] = await activate(h, 'w2');
    t.equal(third?.processInstanceId, ids[2], 'the cold locks are honoured');
    t.same(none, []);
    t.equal(cold.loads - reads, 1, 'the locked ones stay cold');
    await h.engine.jobs.complete({ organization: 'default', key: third!.key, worker: 'w2', output: { receipt: 'c' } });
    t.equal((await h.get(ids[2]!)).stateCd, STATE.COMPLETED);
  },
);
