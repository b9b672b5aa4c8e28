import t, { type Test } from 'tap';
import { createScriptRunner, type ScriptRun, type ScriptRunner } from '../../../src/daemon/engine/work/script.js';
import type { WorkResult } from '../../../src/daemon/outbound/result.js';

function runner(t: Test, size = 2): ScriptRunner {
  const r = createScriptRunner({ size });
  t.teardown(() => r.close());
  return r;
}

/** A run of `organization`; endless ones have a timeout no test waits for (they are cancelled). */
const job = (organization: string, script: string, execution = 'e'): ScriptRun => ({
  script,
  vars: {},
  timeoutMs: 60_000,
  organization,
  execution,
});
const ENDLESS = 'while (true) {}';

/** A run whose promise tells whether it settled, and is cancelled by `abort()`. */
function started(r: ScriptRunner, run: ScriptRun) {
  const controller = new AbortController();
  const state = { settled: false, result: undefined as WorkResult | undefined };
  const done = r.run(run, controller.signal).then((result) => {
    state.settled = true;
    state.result = result;
    return result;
  });
  return { state, done, abort: () => controller.abort() };
}

t.test("one organization's endless scripts do not keep another's waiting", async (t) => {
  const r = runner(t);
  const a = [1, 2, 3, 4].map(() => started(r, job('A', ENDLESS)));
  t.same(r.stats(), { running: 2, queued: 2, workers: 2 }, 'A holds the whole pool, two more queued');

  const b = await r.run(job('B', 'return "b"'));
  t.same(b, { ok: true, value: 'b' }, "B's script ran on a worker lent beyond the pool");
  t.same(
    a.map((x) => x.state.settled),
    [false, false, false, false],
    "B's script completed while every one of A's still ran or waited",
  );
  t.same(r.stats(), { running: 2, queued: 2, workers: 3 }, 'the lent worker is kept, idle, while the pool is full');
  t.same(await r.run(job('B', 'return "again"')), { ok: true, value: 'again' });
  t.equal(
    a.some((x) => x.state.settled),
    false,
  );

  for (const x of a) x.abort();
  for (const x of a) t.equal(((await x.done) as { code?: string }).code, 'CANCELLED');
  t.same(r.stats(), { running: 0, queued: 0, workers: 0 }, 'cancelled runs end their workers');
});

t.test('a freed worker goes to the organization holding the fewest, not to the run queued first', async (t) => {
  const r = runner(t, 1);
  const b1 = started(r, job('B', ENDLESS));
  const b2 = started(r, job('B', 'return "b2"'));
  const a1 = started(r, job('A', ENDLESS));
  const a2 = started(r, job('A', 'return "a2"'));
  t.same(r.stats(), { running: 2, queued: 2, workers: 2 }, 'A borrowed a worker; b2, then a2, wait');
  a1.abort();
  t.equal(((await a1.done) as { code?: string }).code, 'CANCELLED');
  t.same(await a2.done, { ok: true, value: 'a2' }, 'a2 (A holds none) went before b2 (B holds one)');
  t.equal(b2.state.settled, false);
  t.same(r.stats(), { running: 1, queued: 1, workers: 2 }, 'B holds the pool: it borrows nothing (one idle kept)');
  b1.abort();
  t.same(await b2.done, { ok: true, value: 'b2' });
  t.equal(((await b1.done) as { code?: string }).code, 'CANCELLED');
  t.same(r.stats(), { running: 0, queued: 0, workers: 1 }, 'the pool no longer full: back to its size');
});

t.test('alone, an organization uses every worker; the pool never lends to one that holds some', async (t) => {
  const r = runner(t, 3);
  const a = [1, 2, 3, 4, 5].map((i) => started(r, job('A', ENDLESS, `exec-${i}`)));
  t.same(r.stats(), { running: 3, queued: 2, workers: 3 });
  const quick = await Promise.all(
    [1, 2, 3].map((i) => {
      const more = started(r, job('A', `return ${i}`));
      more.abort(); // queued behind A's own: cancelled while it waits
      return more.done;
    }),
  );
  t.same(
    quick.map((q) => (q.ok ? 'ran' : q.code)),
    ['CANCELLED', 'CANCELLED', 'CANCELLED'],
  );
  t.same(r.stats(), { running: 3, queued: 2, workers: 3 }, 'no worker was lent to A');
  for (const x of a) x.abort();
  await Promise.all(a.map((x) => x.done));
});

t.test("cancelling a queued run and a running one; the next in line takes the running one's place", async (t) => {
  const r = runner(t, 1);
  const a1 = started(r, job('A', ENDLESS));
  const a2 = started(r, job('A', 'return "a2"'));
  const b1 = started(r, job('B', ENDLESS));
  const b2 = started(r, job('B', 'return "b2"'));
  t.same(r.stats(), { running: 2, queued: 2, workers: 2 }, 'B borrowed a worker; a2 and b2 wait');
  b2.abort();
  t.same(await b2.done, { ok: false, code: 'CANCELLED', message: 'the script was cancelled' });
  t.same(r.stats(), { running: 2, queued: 1, workers: 2 });
  a1.abort();
  t.equal(((await a1.done) as { code?: string }).code, 'CANCELLED');
  t.same(await a2.done, { ok: true, value: 'a2' }, "A's queued run took the place of its cancelled one");
  t.equal(b1.state.settled, false);
  b1.abort();
  t.equal(((await b1.done) as { code?: string }).code, 'CANCELLED');
  t.same(await r.run(job('C', 'return "after"')), { ok: true, value: 'after' });
  t.equal(r.stats().workers, 1, 'back to the pool size');
});

t.test('a timeout over the ceiling runs at the ceiling; the backstop timer never overflows', async (t) => {
  const r = runner(t, 1);
  const thirtyDays = 30 * 24 * 3600_000;
  const run = started(r, { ...job('A', ENDLESS), timeoutMs: thirtyDays });
  // An overflowing setTimeout fires after 1 ms: the run would fail at once with SCRIPT_TIMEOUT.
  t.same(await r.run(job('B', 'return 1')), { ok: true, value: 1 });
  t.equal(run.state.settled, false, 'still running after another run came and went');
  run.abort();
  t.equal(((await run.done) as { code?: string }).code, 'CANCELLED');
});
