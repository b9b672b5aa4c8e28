import t from 'tap';
import { JobBoard, WORKER_STALE_MS } from '../../../src/daemon/jobs/board.js';
import { engineHarness } from '../../helpers/engine.js';
import { chargeFlow, registerDomain } from '../../helpers/jobs.js';

t.test('a domain is stalled once its workers are not seen for WORKER_STALE_MS while jobs wait', async (t) => {
  const h = await engineHarness(t);
  await registerDomain(h);
  const pid = await h.publish(chargeFlow());
  let wall = Date.parse('2026-11-21T10:00:00.000Z');
  const board = new JobBoard(
    h.engine,
    h.store.state,
    () => wall,
    () => h.clock.ms,
  );
  t.teardown(() => board.close());
  const activate = (worker: string, requestTimeoutMs = 0) =>
    board.activate(
      { organization: 'default', domain: 'billing', worker, maxJobs: 1, lockDurationMs: 3_600_000 },
      requestTimeoutMs,
      () => false,
    );
  t.match(board.health('default'), [{ domain: 'billing', state: 'idle', waiting: 0, workers: [] }], 'nothing yet');

  await h.start(pid, { amount: 1 });
  await h.start(pid, { amount: 2 });
  const [job] = await activate('w1');
  t.ok(job, 'w1 took one job');
  const seenAt = new Date(wall).toISOString();
  const w1 = { worker: 'w1', lastSeen: seenAt, polling: false };
  t.match(board.health('default'), [{ state: 'active', waiting: 1, locked: 1, workers: [w1], lastSeen: seenAt }]);
  wall += WORKER_STALE_MS;
  t.match(board.health('default'), [{ state: 'active' }], 'seen WORKER_STALE_MS ago: still active');
  wall += 1;
  t.match(
    board.health('default'),
    [{ state: 'stalled', waiting: 1, locked: 1, workers: [w1], lastSeen: seenAt }],
    'seen once, not since, and a job waits: stalled',
  );
  board.touched(job!.key, 'w1');
  t.match(board.health('default'), [{ state: 'active', workers: [{ worker: 'w1', polling: false }] }], 'heard again');

  t.equal((await activate('w2')).length, 1, 'w2 takes the other job');
  wall += WORKER_STALE_MS + 1;
  t.match(board.health('default'), [{ state: 'idle', waiting: 0, locked: 2 }], 'no worker seen lately, none waits');

  await h.start(pid, { amount: 3 });
  t.match(board.health('default'), [{ state: 'stalled', waiting: 1 }]);
  // A worker holding a long poll open is there however long ago it was last heard from (this
  // one waits for refunds only, so the charge job stays waiting).
  const poll = board.activate(
    { organization: 'default', domain: 'billing', actions: ['refund'], worker: 'w3', maxJobs: 1, lockDurationMs: 1000 },
    60_000,
    () => false,
  );
  wall += 10 * WORKER_STALE_MS;
  t.match(board.health('default'), [{ state: 'active', waiting: 1, workers: [{ worker: 'w3', polling: true }] }]);
  board.close(); // the daemon stopping: the poll answers what it has
  t.same(await poll, []);
  t.match(
    board.health('default'),
    [{ state: 'active', workers: [{ worker: 'w3', polling: false }] }],
    'seen as it ended',
  );
  wall += WORKER_STALE_MS + 1;
  t.match(board.health('default'), [{ state: 'stalled', workers: [{ worker: 'w3', polling: false }] }]);
});
